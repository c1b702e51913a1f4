"""The engine's compiled loop gives the Python tick's numbers (1e-12), wherever it is taken, and
hands the ticks it cannot take (faults, divergence) to the Python tick."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.control import ComputedTorque, PDGravity, Reference
from robot_dynamics.simulation import Integration, Noise, PlantOptions, Simulation, SimulationOptions
from robot_dynamics.trajectory import plan

ARRAYS = ("q", "qd", "qdd", "tau", "effort", "disturbance", "status")


def _both(robot, make_controller, reference, duration, q0=None, **groups):
    """(Python run, compiled run, the compiled simulation)."""
    out = []
    for compiled in (False, True):
        integration = groups.get("integration", Integration())
        opt = SimulationOptions(integration=Integration(**{**integration.__dict__, "compiled": compiled}),
                                noise=groups.get("noise", Noise()), plant=groups.get("plant", PlantOptions()))
        sim = Simulation(robot, make_controller(), reference, duration, opt)
        sim.reset(q0)
        out.append((sim.run(), sim))
    (a, sa), (b, sb) = out
    assert sa._compiled is None and sb._compiled is not None
    return a, b, sb


def _equal(a, b):
    assert a.t.size == b.t.size
    for name in ARRAYS:
        np.testing.assert_allclose(getattr(b, name), getattr(a, name), rtol=1e-12, atol=1e-12, err_msg=name)
    assert a.messages == b.messages
    for k, v in a.metrics.as_dict().items():
        w = b.metrics.as_dict()[k]
        if isinstance(v, list):
            np.testing.assert_allclose(w, v, rtol=1e-12, atol=1e-15, err_msg=k)
        else:
            assert w == pytest.approx(v, rel=1e-12, abs=1e-15) if isinstance(v, float) else w == v, k


CASES = {
    # the README main job's controller: friction at the desired velocity
    "puma_desired_friction": lambda m: dict(make=lambda: ComputedTorque(m, omega=20.0, friction_velocity="desired")),
    "puma_position_scheme_substeps": lambda m: dict(make=lambda: ComputedTorque(m, omega=25.0, scheme="position"),
                                                    integration=Integration(substeps=3, rate=500.0)),
    "puma_predictive_noise": lambda m: dict(make=lambda: ComputedTorque(m, omega=20.0, predictive=True),
                                            noise=Noise(position=1e-4, velocity=[1e-3, 0, 2e-3, 0, 0, 1e-3],
                                                        disturbance=[1.0, -2.0, 0.5, 0, 0, 0], seed=9)),
    "puma_saturation_smoothing_gravity": lambda m: dict(
        make=lambda: ComputedTorque(m.replace(mass=m.mass * 1.3), omega=60.0, effort_limit=[40, 60, 20, 2, 2, 2]),
        plant=PlantOptions(coulomb_smoothing=0.02, gravity=[0.5, 0.0, -9.7])),
    "puma_no_plant_friction": lambda m: dict(make=lambda: ComputedTorque(m, omega=15.0), plant=PlantOptions(friction=False)),
}


@pytest.fixture(scope="module")
def puma():
    return rd.load_robot("puma560")


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_equals_python(puma, case):
    spec = CASES[case](puma)
    move = plan("quintic", np.zeros(6), np.array([0.5, -0.4, 0.6, 0.8, -0.5, 0.9]), duration=0.25)
    a, b, _ = _both(puma, spec.pop("make"), move, 0.3, **spec)
    _equal(a, b)
    if case == "puma_saturation_smoothing_gravity":
        assert 0 < a.metrics.saturated_fraction < 1 and len(a.messages) > 2  # the messages change along the run


@pytest.mark.parametrize("noise", [Noise(), Noise(position=2e-4, velocity=1e-3, disturbance=[0.5, -1.0, 0, 0, 0, 0.2], seed=4)])
def test_pd_gravity_compiled_equals_python(puma, noise):
    """PD with gravity compensation (Khalil [9.12], Q(q)) on the engine's rd_pd_gravity stage in both ticks."""
    make = lambda: PDGravity(puma.replace(mass=puma.mass * 1.1), omega=15.0, effort_limit=[60, 90, 30, 5, 5, 5])
    a, b, sim = _both(puma, make, np.array([0.4, -0.3, 0.5, 0.6, -0.4, 0.7]), 0.4, q0=np.zeros(6), noise=noise,
                      plant=PlantOptions(coulomb_smoothing=0.02))
    assert sim._compiled.call["law"] == rd.engine.engine().LAW_PD_GRAVITY
    _equal(a, b)
    assert 0 < a.metrics.saturated_fraction < 1 and np.abs(a.q[-1] - a.q[0]).max() > 0.1


def test_compiled_equals_python_through_a_structure_matrix_with_actuator_limits():
    m = rd.load_robot("three_dof_geared")
    move = plan("quintic", np.zeros(3), [0.6, -0.4, 0.8], duration=0.2)
    a, b, _ = _both(m, lambda: ComputedTorque(m, omega=40.0, actuator_limit=[0.3, 0.3, 0.2]), move, 0.25)
    _equal(a, b)
    assert a.metrics.saturated_fraction > 0
    a, b, _ = _both(m, lambda: PDGravity(m, omega=30.0, actuator_limit=[0.3, 0.3, 0.2]), np.array([0.6, -0.4, 0.8]), 0.25,
                    q0=np.zeros(3))
    _equal(a, b)
    assert a.metrics.saturated_fraction > 0
    assert not np.allclose(a.effort, a.tau)


def test_a_faulty_reference_goes_to_the_python_tick_and_back():
    m = rd.load_robot("planar2")
    move = plan("quintic", [0.0, 0.0], [0.3, 0.3], duration=0.1)

    def reference(t):
        q, qd, qdd = move.sample(t)
        return Reference(np.array([np.nan, 0.0]) if 0.05 <= t < 0.06 else q, qd, qdd)

    a, b, sim = _both(m, lambda: ComputedTorque(m, omega=30.0), reference, 0.12)
    _equal(a, b)
    assert (b.status & int(rd.control.Status.FAULT) != 0).sum() == 10
    # the controller's state after the run is the one the Python ticks leave
    assert sim.controller._t_prev == pytest.approx(0.12)


def test_a_diverging_run_stops_at_the_same_tick():
    m = rd.load_robot("planar2")
    a, b, sim = _both(m, lambda: ComputedTorque(m, omega=3000.0, effort_limit=np.inf), np.array([0.5, -0.5]), 1.0,
                      q0=np.zeros(2), integration=Integration(rate=100.0))
    assert a.metrics.diverged and b.metrics.diverged and sim.done
    _equal(a, b)


def test_other_controllers_and_plants_take_the_python_tick():
    m = rd.load_robot("planar2")
    assert Simulation(m, PDGravity(m, kp=100.0, kd=10.0, gravity="desired"), np.zeros(2), 0.01)._compiled is None
    dop = SimulationOptions(integration=Integration(integrator="DOP853"))
    assert Simulation(m, ComputedTorque(m), np.zeros(2), 0.01, dop)._compiled is None
    called = SimulationOptions(noise=Noise(disturbance=lambda t: [0.0, 0.0]))
    assert Simulation(m, ComputedTorque(m), np.zeros(2), 0.01, called)._compiled is None
    assert Simulation(m, ComputedTorque(m), np.zeros(2), 0.01)._compiled is not None


def test_the_engine_linear_recurrence_is_the_loop_it_replaces():
    """Khalil [9.28]'s predicted error runs x_k = Ad x_k-1 + Bd u_k-1 in the engine."""
    from robot_dynamics.engine import engine

    rng = np.random.default_rng(2)
    m, p, K = 8, 3, 50
    Ad = 0.3 * rng.normal(size=(m, m))
    Bd = rng.normal(size=(m, p))
    x0, U = rng.normal(size=m), rng.normal(size=(K, p))
    E = np.empty((K, 5))
    engine().linear_recurrence(Ad, Bd, x0, U, E)
    x = x0.copy()
    expected = [x[:5].copy()]
    for k in range(1, K):
        x = Ad @ x + Bd @ U[k - 1]
        expected.append(x[:5].copy())
    np.testing.assert_allclose(E, np.array(expected), rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError):
        engine().linear_recurrence(Ad, Bd, x0, U, np.empty((K, m + 1)))
