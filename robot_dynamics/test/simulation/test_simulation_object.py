"""rd.Simulation: the closed loop as an object with a step (its options, its ticks, its log)."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.control import ComputedTorque, JointPID
from robot_dynamics.simulation import (
    Integration,
    Logging,
    Noise,
    PlantOptions,
    Simulation,
    SimulationOptions,
    simulate,
)
from robot_dynamics.trajectory import plan

ARRAYS = ("t", "q", "qd", "qdd", "q_ref", "tau", "effort", "disturbance", "status")


@pytest.fixture(scope="module")
def puma():
    return rd.load_robot("puma560")


def _move(m, duration=0.1):
    return plan("quintic", np.zeros(m.nq), np.full(m.nq, 0.3), duration=duration)


def _noisy(seed=3):
    return SimulationOptions(noise=Noise(position=1e-3, velocity=1e-2, disturbance=lambda t: np.full(6, np.sin(30 * t)), seed=seed))


def _same(a, b, rows=None):
    for name in ARRAYS:
        x, y = getattr(a, name), getattr(b, name)
        if rows is not None:
            x = x[:rows]
        np.testing.assert_array_equal(x, y, err_msg=name)


def test_the_top_level_name():
    assert rd.Simulation is Simulation and rd.SimulationOptions is SimulationOptions


def test_step_k_times_equals_run(puma):
    a = Simulation(puma, ComputedTorque(puma, omega=20.0), _move(puma), 0.12, _noisy())
    steps = 0
    while a.step():
        steps += 1
    assert steps == a.K == 121 and a.done and not a.step()
    b = Simulation(puma, ComputedTorque(puma, omega=20.0), _move(puma), 0.12, _noisy()).run()
    _same(a.result(), b)
    assert a.result().messages == b.messages


def test_run_in_pieces_equals_one_run_and_the_state_is_the_log_row(puma):
    sim = Simulation(puma, ComputedTorque(puma, omega=20.0), _move(puma), 0.12, _noisy())
    sim.run(0.05)
    assert sim.tick == 50 and sim.t == pytest.approx(0.05)
    q_next = sim.q
    sim.run(0.03)
    assert sim.tick == 80
    np.testing.assert_array_equal(sim.log.q[50], q_next)  # the state at a tick is what that tick logs
    whole = simulate(puma, ComputedTorque(puma, omega=20.0), _move(puma), 0.12, position_noise=1e-3, velocity_noise=1e-2,
                     disturbance=lambda t: np.full(6, np.sin(30 * t)), seed=3, progress=False)
    _same(sim.run(), whole)


def test_seeded_noise_is_deterministic_and_reset_replays_it(puma):
    ctrl = ComputedTorque(puma, omega=20.0)
    sim = Simulation(puma, ctrl, _move(puma), 0.08, _noisy(seed=7))
    a = sim.run()
    sim.reset()
    b = sim.run()
    _same(a, b)
    c = Simulation(puma, ctrl, _move(puma), 0.08, _noisy(seed=8)).run()
    assert np.abs(c.q - a.q).max() > 1e-6  # another seed, another noise
    assert np.abs(c.q - a.q).max() < 1e-2  # the same closed loop


@pytest.mark.parametrize("compiled", [True, False])
def test_a_result_keeps_its_rows_through_more_ticks_and_a_reset(puma, compiled):
    """A result's arrays are read-only views of the log's rows: ticks after it leave them as they
    were, and a reset writes the next run into a new log."""
    opt = SimulationOptions(integration=Integration(compiled=compiled))
    sim = Simulation(puma, ComputedTorque(puma, omega=20.0), _move(puma), 0.08, opt)
    first = sim.run(0.03)
    kept = {name: np.array(getattr(first, name)) for name in ARRAYS}
    for name in ARRAYS:
        assert not getattr(first, name).flags.writeable, name
    with pytest.raises(ValueError, match="read-only"):
        first.q[0, 0] = 1.0
    whole = sim.run()  # more ticks into the same log
    sim.reset(np.full(puma.nq, 0.2))  # another start: a new log
    other = sim.run()
    for name in ARRAYS:
        np.testing.assert_array_equal(getattr(first, name), kept[name], err_msg=name)
        np.testing.assert_array_equal(getattr(whole, name)[: len(first.t)], kept[name], err_msg=name)
    assert np.abs(other.q[0] - whole.q[0]).max() == pytest.approx(0.2)
    assert sim.log.q is not whole.q.base and whole.q.base is not None


def test_a_caller_stop_keeps_every_tick_taken(puma):
    full = Simulation(puma, ComputedTorque(puma, omega=20.0), _move(puma), 0.1, _noisy()).run()
    sim = Simulation(puma, ComputedTorque(puma, omega=20.0), _move(puma), 0.1, _noisy())
    part = sim.run(stop=lambda s: s.tick == 37)
    assert part.t.size == 37 and sim.tick == 37 and not sim.done
    _same(full, part, rows=37)
    _same(full, sim.run(), rows=None)  # and it goes on from there as if never stopped


def test_a_diverging_plant_stops_with_every_tick_logged():
    m = rd.load_robot("planar2")
    # a bandwidth far beyond what 100 Hz can hold: the loop explodes within a few ticks
    sim = Simulation(m, ComputedTorque(m, omega=3000.0, effort_limit=np.inf), np.array([0.5, -0.5]), 1.0,
                     SimulationOptions(integration=Integration(rate=100.0)))
    sim.reset(np.zeros(2))
    r = sim.run()
    assert sim.diverged and sim.done and r.metrics.diverged
    assert 2 <= r.t.size < sim.K and sim.tick == r.t.size == sim.log.ticks
    assert np.all(np.isfinite(r.q[:-1]))  # every completed tick holds its state
    assert "plant integration failed" in r.messages[-1][1] and r.messages[-1][0] == r.t[-1]
    assert not sim.step()  # a diverged simulation takes no more ticks


def test_elastic_plant_state_and_rotor_log():
    planar2 = rd.load_robot("planar2")
    spec = {"shoulder": {"stiffness": 2e3, "motor_inertia": 0.05}, "elbow": {"stiffness": 1e3, "motor_inertia": 0.02}}
    me = rd.load_urdf(planar2.description, drivetrain={"elastic": spec})
    sim = Simulation(me, ComputedTorque(planar2, omega=10.0), plan("quintic", [0, 0], [0.3, 0.3], duration=0.05), 0.05)
    assert sim.state.shape == (8,)
    # the rotors start at the springs' static deflection: k (qm - q) = Q(q)
    np.testing.assert_allclose(sim.state[4:6] - sim.state[:2], rd.gravity_torques(me, sim.state[:2]) / [2e3, 1e3], rtol=1e-12)
    r = sim.run()
    np.testing.assert_array_equal(r.qm[1:], sim.log.qm[1 : r.t.size])
    np.testing.assert_array_equal(r.qm[-1], sim.state[4:6])


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Integration(integrator="euler"), r"integrator: expected one of \['rk4', 'RK45'"),
        (lambda: Integration(rate=0.0), "control_rate: expected a positive number"),
        (lambda: Integration(substeps=1.5), "substeps: expected an integer >= 1"),
        (lambda: Integration(rtol=-1.0), "rtol: expected a positive number"),
        (lambda: PlantOptions(coulomb_smoothing=-0.1), "coulomb_smoothing"),
        (lambda: Logging(max_ticks=0), "max_ticks"),
        (lambda: SimulationOptions(integration={"rate": 100.0}), "options.integration: expected a Integration"),
    ],
)
def test_bad_options_are_refused_with_the_valid_choices(make, match):
    with pytest.raises(rd.InputError, match=match):
        make()


def test_bad_simulation_arguments(puma):
    ctrl = ComputedTorque(puma)
    with pytest.raises(rd.InputError, match="options: expected a SimulationOptions"):
        Simulation(puma, ctrl, np.zeros(6), 0.1, {"rate": 100})
    with pytest.raises(rd.InputError, match=r"position_noise: expected a standard deviation >= 0, scalar or \(6,\)"):
        Simulation(puma, ctrl, np.zeros(6), 0.1, SimulationOptions(noise=Noise(position=[1.0, 2.0])))
    with pytest.raises(rd.InputError, match="more than 1,000"):
        Simulation(puma, ctrl, np.zeros(6), 2.0, SimulationOptions(logging=Logging(max_ticks=1000)))
    sim = Simulation(puma, ctrl, np.zeros(6), 0.1)
    with pytest.raises(rd.InputError, match="duration: expected a number of seconds >= 0"):
        sim.run(-1.0)
    with pytest.raises(rd.InputError, match="no tick taken yet"):
        sim.result()
    with pytest.raises(rd.InputError, match=r"q0: expected 6 finite values ordered as \['joint1'"):
        sim.reset([0.0, np.nan, 0, 0, 0, 0])


def test_a_task_reference_needs_a_start():
    m = rd.load_robot("planar2")
    goal = rd.frame_pose(m, np.array([0.3, 0.4]))
    from robot_dynamics.control import TaskPID, TaskReference

    sim = Simulation(m, TaskPID(m, kp=1000.0, kd=100.0, ki=0.0, rows=(0, 2), gravity_compensation=True), TaskReference(goal, np.zeros(6), np.zeros(6)), 0.01)
    with pytest.raises(rd.InputError, match=r"call reset\(q0\) first"):
        sim.step()
    sim.reset([0.2, 0.5])
    assert sim.step() and sim.tick == 1


def test_pid_state_is_reset_with_the_simulation():
    m = rd.load_robot("planar2")
    pid = JointPID(m, kp=100.0, kd=10.0, ki=50.0, gravity_compensation=True)
    sim = Simulation(m, pid, np.array([0.2, 0.1]), 0.05)
    a = sim.run()
    sim.reset()
    _same(a, sim.run())


def test_an_adaptive_solver_stops_at_its_evaluation_budget():
    """A stiff, discontinuous plant (the PUMA's Coulomb friction switching at rest, weak gains)
    made LSODA crawl for minutes: it now stops at Integration.max_evaluations per period with a
    message naming the way out."""
    import numpy as np

    import robot_dynamics as rd
    from robot_dynamics.control import ComputedTorque
    from robot_dynamics.errors import InputError
    from robot_dynamics.simulation import Integration, Simulation, SimulationOptions
    from robot_dynamics.trajectory import plan

    m = rd.load_robot("puma560")
    move = plan("quintic", np.zeros(6), np.full(6, 0.5), duration=0.1)
    options = SimulationOptions(integration=Integration(rate=200.0, integrator="LSODA", max_evaluations=2000))
    sim = Simulation(m, ComputedTorque(m, omega=1.0), move, 0.1, options)
    sim.reset(np.zeros(6))
    result = sim.run()
    assert result.metrics.diverged
    text = " ".join(message for _, message in result.messages)
    assert "more than 2000 plant evaluations" in text and "rk4" in text
    with pytest.raises(InputError, match="max_evaluations"):
        Integration(max_evaluations=0)


def _cli_run(capsys, *argv):
    import json

    from robot_dynamics.cli import main

    code = main(["simulate", "--move-time", "0.3", "--settle", "0.05", "--no-plot", "--no-bag", "--json", *argv])
    out = capsys.readouterr().out
    return code, json.loads(out)


@pytest.fixture(scope="module")
def rk4_and_rk45(tmp_path_factory):
    """The default robot's short default move under rk4 (the exact Coulomb sign) and RK45 (its
    default smoothing): (final errors, final errors) [rad]."""
    import json
    import subprocess
    import sys

    runs = []
    for integrator in ("rk4", "RK45"):
        out = subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "simulate", "--integrator", integrator,
                              "--move-time", "0.3", "--settle", "0.05", "--no-plot", "--no-bag", "--json"],
                             capture_output=True, text=True, check=True, cwd=tmp_path_factory.mktemp("run")).stdout
        runs.append(json.loads(out))
    return runs


@pytest.mark.parametrize("integrator", ["RK45", "LSODA", "DOP853", "BDF"])
def test_the_cli_runs_the_default_robot_with_each_adaptive_integrator(integrator, rk4_and_rk45, capsys, tmp_path, monkeypatch):
    """They stopped at t = 0 with PLANT DIVERGED: the PUMA's Coulomb friction at rest flips its
    sign at every step, however short. The command smooths it for an adaptive integrator (1 mrad/s,
    --coulomb-smoothing) and says so; the run then follows rk4's with the exact sign."""
    import numpy as np

    monkeypatch.chdir(tmp_path)
    rk4, rk45 = rk4_and_rk45
    code, run = _cli_run(capsys, "--integrator", integrator)
    assert code == 0 and not run["metrics"]["diverged"]
    # what happens on the way is rk4's: joint 1 saturates on this fast move, nothing fails
    assert [m["message"] for m in run["messages"]] == [m["message"] for m in rk4["messages"]] == ["effort saturated on ['joint1']"]
    assert run["coulomb_smoothing"] == 1e-3 and rk4["coulomb_smoothing"] == 0.0 and run["ticks"] == 351
    final = np.array(run["metrics"]["final_error"])
    # the same smooth plant to the solvers' tolerance (measured: 1e-12 DOP853, 4e-8 LSODA, 4e-7 BDF)
    np.testing.assert_allclose(final, rk45["metrics"]["final_error"], rtol=0, atol=1e-6)
    # and the exact sign's motion to 1 mrad/s of smoothing (measured: 7e-5 rad)
    np.testing.assert_allclose(final, rk4["metrics"]["final_error"], rtol=0, atol=2e-4)
    assert abs(final[0]) > 0.019  # joint 1's own lag at the end of this fast move, not a zero


def test_the_cli_names_its_own_options_when_an_adaptive_integrator_stops(capsys, tmp_path, monkeypatch):
    from robot_dynamics.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--integrator", "RK45", "--coulomb-smoothing", "0", "--max-evaluations", "500",
                 "--move-time", "0.05", "--settle", "0", "--no-plot", "--no-bag"]) == 1
    out = capsys.readouterr().out
    assert "PLANT DIVERGED" in out
    line = next(x for x in out.splitlines() if x.startswith("  t = 0.000 s: "))
    assert "RK45 made more than 500 plant evaluations over one period at t = 0 s" in line  # --max-evaluations reaches it
    assert line.endswith("smooth the sign (--coulomb-smoothing V > 0, e.g. 0.001 rad/s) or use --integrator rk4")
    assert "max_evaluations" not in line  # no budget gets through a sign that flips at every step
    # the smoothing is the way out it names
    assert main(["simulate", "--integrator", "RK45", "--coulomb-smoothing", "0.001", "--move-time", "0.05", "--settle", "0",
                 "--no-plot", "--no-bag"]) == 0
    out = capsys.readouterr().out
    assert "plant: Coulomb friction smoothed, Fc tanh(qd / 0.001 rad/s)" in out and "DIVERGED" not in out


def test_a_stiff_plant_without_switching_friction_is_told_to_raise_the_budget():
    """Without Coulomb friction the budget is the way out, and the message says so."""
    import numpy as np

    import robot_dynamics as rd
    from robot_dynamics.control import ComputedTorque
    from robot_dynamics.simulation import Integration, PlantOptions, Simulation, SimulationOptions
    from robot_dynamics.trajectory import plan

    m = rd.load_robot("puma560")
    move = plan("quintic", np.zeros(6), np.full(6, 0.5), duration=0.1)
    options = SimulationOptions(integration=Integration(rate=200.0, integrator="RK45", max_evaluations=5),
                                plant=PlantOptions(friction=False))
    sim = Simulation(m, ComputedTorque(m, omega=20.0), move, 0.1, options)
    sim.reset(np.zeros(6))
    result = sim.run()
    assert result.metrics.diverged and result.t.size == 1
    (_, message), = result.messages
    assert "RK45 made more than 5 plant evaluations" in message
    assert message.endswith("a stiff plant: raise max_evaluations, or use a stiff solver (Radau, BDF, LSODA) or the rk4 integrator")
