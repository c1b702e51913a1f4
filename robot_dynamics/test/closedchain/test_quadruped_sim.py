"""Quadruped with a tail: forward simulation (energy), the scenarios of section 4, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from robot_dynamics.cli import main
from robot_dynamics.closedchain import quadruped as qm
from robot_dynamics.closedchain import quadruped_sim as qs
from robot_dynamics.closedchain.quadruped_params import load_quadruped_params
from robot_dynamics.errors import InputError, SingularityError

P = load_quadruped_params()


def test_energy_conserved_when_actuators_do_no_work():
    """Zero torques everywhere (tail included): E(t) = E(0) to RK4 accuracy, 4th order in dt."""
    nu0 = np.array([0.05, -0.02, 0.0, 0.1, -0.1, 0.2, 1.0, -2.0])
    zero = lambda t, q, nu: (np.zeros(8), np.zeros(6))  # noqa: E731
    errs = []
    for dt in (2e-3, 1e-3):
        sim = qs.simulate(P, P.q0, nu0, 0.1, dt, zero)
        assert sim.ok, sim.message
        E = sim.kinetic + sim.potential
        assert np.ptp(sim.kinetic) > 1.0  # the robot really moves (it sags under its weight)
        np.testing.assert_array_equal(sim.work, 0.0)
        errs.append(np.abs(E - E[0]).max())
    assert errs[1] < 1e-7
    assert errs[0] / errs[1] > 10.0  # ~2^4: the error is the integrator's


def test_energy_balance_with_working_torques():
    """Constant hip/knee torques plus a wagging tail: E(t) - E(0) = work of the actuators."""
    sim = qs.simulate(P, P.q0, np.zeros(8), 0.15, 1e-3, lambda t, q, nu: qs.yaw_torques(t))
    assert sim.ok
    assert np.abs(sim.work).max() > 0.1
    assert np.abs(sim.energy_error).max() < 1e-7


def test_simulation_rejects_bad_starts():
    q = P.q0.copy()
    q[2] = 0.8
    with pytest.raises(SingularityError, match="initial configuration: leg 1: foot out of reach"):
        qs.simulate(P, q, np.zeros(8), 0.1, 1e-3, lambda t, q, nu: (np.zeros(8), np.zeros(6)))
    with pytest.raises(InputError, match="positive"):
        qs.simulate(P, P.q0, np.zeros(8), 0.1, 0.0, lambda t, q, nu: (np.zeros(8), np.zeros(6)))


def test_yaw_manoeuvre_section_41_is_not_a_pure_yaw_here():
    """Section 4.1's torque profile on our model: what it does, stated plainly.

    The paper shows the motion only in Fig. 6 (no numbers in the text), so it is not compared.
    Here the torso yaws more than it rolls or pitches for the first 0.2 s, then pitches more
    than it yaws (by 0.35 s) and leg 4 reaches full stretch at 0.393 s, where the run stops
    with a report. The profile does not hold the robot (see the static-torque test), which is
    why it falls forward; the paper's geometry may differ where it is not given.
    """
    sim = qs.yaw_manoeuvre(P, duration=0.5, dt=1e-3)
    assert not sim.ok and "leg 4" in sim.message and "out of reach" in sim.message
    assert sim.t[-1] == pytest.approx(0.392, abs=1e-9)  # the last completed step before 0.393 s
    assert np.all(np.isfinite(sim.q))
    roll, pitch, yaw = sim.q[:, 3], sim.q[:, 4], sim.q[:, 5]
    early = sim.t <= 0.2
    assert np.all(yaw[early][50:] > np.maximum(np.abs(roll[early][50:]), np.abs(pitch[early][50:])))
    assert yaw[200] == pytest.approx(0.0769, abs=1e-4)
    i = np.searchsorted(sim.t, 0.35)
    assert abs(pitch[i]) > yaw[i] > 0.29  # pitch -0.311, yaw 0.300 at 0.35 s


def test_pitch_motion_section_42_inverse_then_forward():
    res = qs.pitch_motion(P, duration=0.45, dt=2.5e-3)
    # desired motion of section 4.2 at the sampled times
    q, qd, _ = qs.pitch_trajectory(P, res.t)
    np.testing.assert_allclose(q[:, 3], np.pi / 36 * np.sin(2 * np.pi / 0.3 * res.t))
    # inverse-then-forward from the desired initial state: the motion is reproduced
    ol = res.open_loop
    assert ol.ok
    assert np.abs(ol.q - res.q_desired).max() < 1e-5
    # The paper's inverse-then-forward run deviates within 0.2 s, which it puts down to
    # integrator drift and the inversion of J_tau,a near singularity; ours follows the motion
    # to 1e-5 rad over 0.45 s (above), so that deviation is not reproduced. The feedback
    # experiment of Fig. 7 is run as in the paper.
    # with the feedback of Fig. 7 the compensation torque decays
    cl = res.closed_loop
    assert cl.ok
    tc = np.abs(res.tau_compensation).max(axis=1)
    windows = [tc[(res.t >= a) & (res.t < a + 0.15)].max() for a in (0.0, 0.15, 0.3)]
    assert windows[0] > 10 * windows[1] > 100 * windows[2]  # decays (Fig. 9)
    assert np.abs(cl.q[-1] - res.q_desired[-1]).max() < 2e-3
    # the required torques are the inverse model's
    nu, nud = qm.velocity_from_rates(*qs.pitch_trajectory(P, res.t[:3]))
    np.testing.assert_allclose(res.tau_required[:3], qm.inverse_dynamics(P, q[:3], nu, nud).tau_a)


def test_cli_yaw_writes_csv_and_plot(tmp_path, capsys):
    rc = main(["quadruped-yaw", "--duration", "0.04", "--out", str(tmp_path), "--json", "--check"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and data["ok"]
    assert data["energy_balance_error_J"] < 1e-8
    assert data["check"]["torques"] < 1e-8 and data["check"]["accelerations"] < 1e-8
    assert (tmp_path / "quadruped_yaw.png").stat().st_size > 10_000
    rows = (tmp_path / "quadruped_yaw.csv").read_text().splitlines()
    assert len(rows) == 42 and rows[0].startswith("t,p_x")


def test_cli_pitch_table(tmp_path, capsys):
    rc = main(["quadruped-pitch", "--duration", "0.1", "--dt", "0.005", "--out", str(tmp_path), "--no-plot"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "from rest, feedback (Fig. 7)" in out and "compensation torque" in out
    assert (tmp_path / "quadruped_pitch.csv").is_file()


@pytest.mark.parametrize("argv, message", [
    (["quadruped-yaw", "--dt", "-1"], "--dt must be a positive number"),
    (["quadruped-yaw", "--params", "missing.yaml"], "not found"),
])
def test_cli_bad_input_one_line(argv, message, tmp_path, capsys):
    rc = main([*argv, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and err.count("\n") == 1


def test_a_run_that_leaves_the_workspace_reports_and_exits_0(tmp_path, capsys):
    """The body leaves its workspace at t ~ 0.39 s: the report (stdout) says where, one line on
    stderr says that it stopped, and the exit status is 0 (the contract: 0 with the report, or 2
    with one line for bad input)."""
    from robot_dynamics.cli import main

    rc = main(["quadruped-yaw", "--duration", "1.0", "--out", str(tmp_path), "--no-plot"])
    out, err = capsys.readouterr()
    assert rc == 0
    assert "stopped at t = 0.39" in out and "foot out of reach" in out
    assert err.count("\n") == 1 and err.startswith("robot-dynamics quadruped-yaw: note: stopped at t = 0.39")
