"""Closed-loop simulations: the closed-loop equations of Khalil chapter 9, measured."""

from __future__ import annotations

import numpy as np

_trapezoid = getattr(np, "trapezoid", None) or np.trapz  # numpy < 2 (ROS 2 Humble) has trapz only
import pytest
from scipy.optimize import curve_fit

import robot_dynamics as rd
from robot_dynamics.control import (
    ComputedTorque,
    JointPID,
    PDGravity,
    Reference,
    Status,
    TaskComputedTorque,
    TaskPID,
    TaskReference,
    actuator_to_joint,
)
from robot_dynamics.simulation import simulate
from robot_dynamics.trajectory import cartesian_motion, plan


def no_coulomb(model):
    return model.replace(coulomb=np.zeros(model.nq))


def scaled_masses(model, factor):
    """The controller's model with every link mass and inertia off by ``factor``."""
    return model.replace(mass=model.mass * factor, inertia_com=model.inertia_com * factor)


@pytest.fixture(scope="module")
def planar2():
    return rd.load_robot("planar2")


@pytest.mark.parametrize("name", ["planar2", "puma560"])
def test_exact_computed_torque_error_decays_at_the_designed_rate(name):
    """[9.25] with xi = 1: e(t) = (e0 + (ed0 + w e0) t) exp(-w t); fit w within 5%."""
    m = no_coulomb(rd.load_robot(name))
    omega = 15.0
    goal = np.clip(np.full(m.nq, 0.3), m.lower, m.upper)
    e0 = 0.05
    r = simulate(m, ComputedTorque(m, omega=omega), Reference(goal, np.zeros(m.nq), np.zeros(m.nq)), duration=0.4, q0=goal - e0, progress=False)
    law = lambda t, a, b, lam: (a + b * t) * np.exp(-lam * t)  # noqa: E731
    for j in range(m.nq):
        (a, b, lam), _ = curve_fit(law, r.t, r.error[:, j], p0=(0.04, 0.5, 10.0))
        assert lam == pytest.approx(omega, rel=0.05), (j, lam)
        assert a == pytest.approx(e0, rel=0.05)
        assert b == pytest.approx(omega * e0, rel=0.05)  # ed0 = 0
    # and the whole curve is the designed one
    expected = (e0 + omega * e0 * r.t[:, None]) * np.exp(-omega * r.t[:, None])
    assert np.max(np.abs(r.error - expected)) < 0.02 * e0


def test_exact_computed_torque_tracks_a_quintic_below_1e6(planar2):
    move = plan("quintic", [0.0, 0.0], [0.5, 0.5], duration=1.5)
    r = simulate(planar2, ComputedTorque(planar2, omega=150.0), move, duration=1.6, progress=False)
    assert r.metrics.max_error.max() < 1e-6
    assert r.metrics.fault_count == 0 and r.metrics.saturated_fraction == 0.0
    # the same move at omega = 20 leaves a larger, ZOH-driven error (e ~ 1/Kp)
    assert r.q_ref[-1] == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize("name", rd.list_robots())
def test_pd_gravity_converges_on_every_bundled_robot(name):
    """Khalil 9.3.2: V [9.11] never increases [9.16] and the goal is reached (La Salle)."""
    m = no_coulomb(rd.load_robot(name))  # the Lyapunov argument leaves Coulomb friction out
    goal = np.clip(np.full(m.nq, 0.4), m.lower, m.upper)
    ctrl = PDGravity.from_bandwidth(m, 15.0, inertia=np.diagonal(rd.crba(m, goal)), effort_limit=np.inf)
    r = simulate(m, ctrl, goal, duration=1.0, q0=np.zeros(m.nq), control_rate=500, progress=False)
    e = r.error
    A = rd.crba(m, r.q)
    V = 0.5 * np.einsum("ki,kij,kj->k", r.qd, A, r.qd) + 0.5 * np.einsum("ki,i,ki->k", e, ctrl.kp, e)
    assert np.all(np.diff(V) <= 1e-5 * V[0])  # up to the zero-order hold of one tick
    assert V[-1] < 1e-5 * V[0]
    assert np.max(np.abs(e[-1])) < 5e-3 * 0.4


def test_pd_gravity_at_the_goal_variant(planar2):
    m = no_coulomb(planar2)
    goal = np.array([0.6, -0.4])
    ctrl = PDGravity.from_bandwidth(m, 15.0, gravity="desired", inertia=np.diagonal(rd.crba(m, goal)))
    r = simulate(m, ctrl, goal, duration=1.0, q0=np.zeros(2), control_rate=500, progress=False)
    assert np.max(np.abs(r.error[-1])) < 1e-3


def test_pid_removes_a_constant_disturbance_that_pd_leaves(planar2):
    m = no_coulomb(planar2)
    goal = np.array([0.5, -0.3])
    d = np.array([4.0, -2.0])
    a = np.diagonal(rd.crba(m, goal))
    pd = JointPID(m, kp=a * 400.0, kd=a * 40.0, gravity_compensation=True)
    pid = JointPID(m, kp=a * 3 * 400.0, kd=a * 3 * 20.0, ki=a * 8000.0, gravity_compensation=True)  # triple pole at -20 [9.10]
    r_pd = simulate(m, pd, goal, duration=1.5, q0=goal, disturbance=d, control_rate=500, progress=False)
    r_pid = simulate(m, pid, goal, duration=1.5, q0=goal, disturbance=d, control_rate=500, progress=False)
    # PD: equilibrium Kp e + d = 0, so the static error is -d / Kp
    np.testing.assert_allclose(r_pd.error[-1], -d / pd.kp, rtol=0.01)
    assert np.all(np.abs(r_pd.error[-1]) > 1e-3)
    assert np.max(np.abs(r_pid.error[-1])) < 1e-3 * np.max(np.abs(r_pd.error[-1]))
    np.testing.assert_allclose(pid.ki * pid.integral, -d, rtol=1e-2)  # the integral learned -d


def test_task_space_computed_torque_follows_a_straight_line():
    m = rd.load_robot("iiwa14")
    q0 = np.array([0.2, -0.5, 0.4, 0.9, 0.6, -0.2, 0.1])
    T0 = rd.frame_pose(m, q0)
    T1 = T0.copy()
    T1[:3, 3] += [0.1, 0.05, -0.08]
    motion = cartesian_motion(T0, T1, duration=0.6, profile="quintic")
    r = simulate(m, TaskComputedTorque(m, omega=50.0), motion, duration=0.7, q0=q0, progress=False)
    u = (T1[:3, 3] - T0[:3, 3]) / np.linalg.norm(T1[:3, 3] - T0[:3, 3])
    rel = r.x - T0[:3, 3]
    off_line = np.linalg.norm(rel - (rel @ u)[:, None] * u, axis=1)
    assert off_line.max() < 1e-5
    assert r.metrics.task_max_error < 1e-5
    assert np.linalg.norm(r.x[-1] - T1[:3, 3]) < 1e-5
    assert r.metrics.singular_count == 0


def test_mass_error_excites_the_error_as_khalil_9_28_predicts(planar2):
    m = no_coulomb(planar2)
    move = plan("quintic", [0.0, 0.0], [0.8, -0.6], duration=1.0)
    rms = {}
    for f in (1.1, 1.2, 1.4):
        r = simulate(m, ComputedTorque(scaled_masses(m, f), omega=20.0), move, duration=1.0, progress=False)
        assert r.metrics.fault_count == 0
        assert r.metrics.predicted_rms_error is not None
        np.testing.assert_allclose(r.metrics.rms_error, r.metrics.predicted_rms_error, rtol=0.05)
        rms[f] = r.metrics.rms_error.max()
    assert rms[1.1] < rms[1.2] < rms[1.4]
    assert rms[1.2] > 1e3 * 1e-6  # clearly above the exact-model error, still tracking:
    assert rms[1.2] < 0.05


def test_plant_integrators_agree(planar2):
    move = plan("quintic", [0.0, 0.0], [0.4, 0.3], duration=0.15)
    ctrl = ComputedTorque(planar2, omega=20.0)
    a = simulate(planar2, ctrl, move, duration=0.15, progress=False)
    b = simulate(planar2, ctrl, move, duration=0.15, integrator="DOP853", rtol=1e-10, atol=1e-12, progress=False)
    np.testing.assert_allclose(a.q, b.q, atol=1e-9)
    np.testing.assert_allclose(a.qd, b.qd, atol=1e-7)


def test_energy_metric_closes_the_power_balance(planar2):
    """Actuator work = change of mechanical energy + viscous dissipation."""
    m = no_coulomb(planar2)
    move = plan("quintic", [0.0, 0.0], [0.7, -0.5], duration=0.4)
    r = simulate(m, ComputedTorque(m, omega=20.0), move, duration=0.4, progress=False)
    dE = rd.mechanical_energy(m, r.q[-1], r.qd[-1]) - rd.mechanical_energy(m, r.q[0], r.qd[0])
    loss = _trapezoid(np.sum(m.viscous * r.qd**2, axis=1), r.t)
    assert r.metrics.energy == pytest.approx(float(dE + loss), rel=1e-3)


def test_faults_inside_the_loop_are_reported_not_raised(planar2):
    move = plan("quintic", [0.0, 0.0], [0.3, 0.3], duration=0.3)

    def reference(t):
        q, qd, qdd = move.sample(t)
        if 0.1 <= t < 0.11:
            q = np.array([np.nan, 0.0])
        return Reference(q, qd, qdd)

    r = simulate(planar2, ComputedTorque(planar2, omega=30.0), reference, duration=0.4, progress=False)
    faults = (r.status & int(Status.FAULT)) != 0
    assert 9 <= faults.sum() <= 11 and np.all(r.t[faults] >= 0.1) and np.all(r.t[faults] < 0.111)
    assert r.metrics.fault_count == faults.sum()
    assert any("bad reference" in msg for _, msg in r.messages)
    assert not r.metrics.diverged and np.all(np.isfinite(r.q))
    # tracking resumes: the error left by the 10 ms hold decays
    assert np.max(np.abs(r.error[-1])) < 0.1 * np.max(np.abs(r.error[faults.argmax() + 11 :]))


def test_geared_robot_is_driven_through_its_actuators():
    m = no_coulomb(rd.load_robot("three_dof_geared"))
    move = plan("quintic", np.zeros(3), [0.3, -0.2, 0.4], duration=0.3)
    r = simulate(m, ComputedTorque(m, omega=30.0), move, duration=0.3, progress=False)
    np.testing.assert_allclose(actuator_to_joint(m, None, r.effort), r.tau, atol=1e-12)
    assert not np.allclose(r.effort, r.tau)  # the structure matrix is not the identity
    assert r.metrics.max_error.max() < 1e-3  # ZOH-limited: jerk dt / (2 Kp) ~ 5e-4 rad on this fast move


def test_measurement_noise_reaches_the_controller(planar2):
    """White position noise n of std sigma: a P controller's torque moves by -Kp n."""
    m = no_coulomb(planar2)
    goal = np.array([0.3, 0.2])
    kp = np.array([200.0, 100.0])
    runs = [
        simulate(m, JointPID(m, kp=kp, kd=0.0, gravity_compensation=True), goal, duration=0.05, q0=goal, position_noise=sigma, seed=4, progress=False)
        for sigma in (0.0, 1e-3)
    ]
    jitter = np.std(runs[1].tau - runs[0].tau, axis=0)
    np.testing.assert_allclose(jitter, kp * 1e-3, rtol=0.2)
    assert np.max(np.abs(runs[0].tau - rd.gravity_torques(m, goal))) < 1e-6  # no noise, at rest


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"integrator": "euler"}, "integrator: expected one of"),
        ({"control_rate": 0.0}, "control_rate"),
        ({"substeps": 0}, "substeps"),
        ({"position_noise": -1.0}, "position_noise"),
        ({"disturbance": [1.0, 2.0, 3.0]}, "disturbance"),
        ({"q0": [0.0]}, "q0"),
    ],
)
def test_bad_simulation_options(planar2, kwargs, match):
    with pytest.raises(rd.InputError, match=match):
        simulate(planar2, ComputedTorque(planar2), np.zeros(2), duration=0.01, **kwargs)


def test_controller_model_must_match_the_plant(planar2):
    with pytest.raises(rd.InputError, match="do not match"):
        simulate(planar2, ComputedTorque(rd.load_robot("puma560")), np.zeros(2), duration=0.01)


def test_stiff_elastic_joints_tend_to_the_rigid_robot(planar2):
    """Khalil [7.35] with k -> inf: the links move as the rigid robot with the rotor inertia
    Ia and motor friction added to the joints (singular perturbation limit)."""
    elastic = {
        "shoulder": {"stiffness": 1e5, "motor_inertia": 0.05, "motor_viscous": 0.5},
        "elbow": {"stiffness": 1e5, "motor_inertia": 0.02, "motor_viscous": 0.3},
    }
    me = rd.load_urdf(planar2.description, drivetrain={"elastic": elastic})
    rigid = planar2.replace(rotor_inertia=planar2.rotor_inertia + [0.05, 0.02], viscous=planar2.viscous + [0.5, 0.3])
    move = plan("quintic", [0.0, 0.0], [0.3, 0.3], duration=0.25)
    a = simulate(me, ComputedTorque(rigid, omega=10.0), move, duration=0.25, substeps=4, progress=False)
    b = simulate(rigid, ComputedTorque(rigid, omega=10.0), move, duration=0.25, substeps=4, progress=False)
    assert a.qm is not None and b.qm is None
    deflection = np.abs(a.qm - a.q).max()
    assert 1e-5 < deflection < 1e-3  # the springs do deflect, a little
    assert np.abs(a.q - b.q).max() < 1e-4
    # softer springs: the rigid computed torque no longer matches the plant as well
    soft = rd.load_urdf(planar2.description, drivetrain={"elastic": {j: dict(v, stiffness=300.0) for j, v in elastic.items()}})
    c = simulate(soft, ComputedTorque(rigid, omega=10.0), move, duration=0.25, progress=False)
    assert np.abs(c.q - b.q).max() > 10 * np.abs(a.q - b.q).max()


def test_task_pid_regulates_the_tool_position(planar2):
    """[9.17] with gravity compensation: a fixed task goal is reached (J^T K_p e_x at rest is 0)."""
    m = no_coulomb(planar2)
    q0 = np.array([0.3, 1.0])
    goal = rd.frame_pose(m, np.array([0.5, 0.7]))
    ctrl = TaskPID(m, kp=1000.0, kd=100.0, ki=0.0, rows=(0, 2), gravity_compensation=True)  # zeta ~ 0.7 on the task inertia
    r = simulate(m, ctrl, TaskReference(goal, np.zeros(6), np.zeros(6)), duration=1.0, q0=q0, progress=False)
    err = np.linalg.norm(r.x_ref - r.x, axis=1)
    assert err[0] > 0.05 and err[-1] < 2e-4
    np.testing.assert_allclose(r.q[-1], [0.5, 0.7], atol=1e-3)  # the only nearby solution


def test_a_run_too_long_to_log_is_refused_before_any_work(planar2):
    ctrl = PDGravity(planar2, kp=100.0, kd=20.0)
    goal = np.array([0.3, -0.2])
    with pytest.raises(rd.InputError, match=r"duration \* control_rate: 1e\+12 ticks, more than 5,000,000"):
        simulate(planar2, ctrl, goal, duration=1e9)
    with pytest.raises(rd.InputError, match="more than 5,000,000"):
        simulate(planar2, ctrl, goal, duration=1.0, control_rate=1e12)
