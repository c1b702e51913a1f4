"""The generalized momentum observer: its model terms against independent computations, the residual
against known external torques, detection and isolation of simulated pushes, the contact wrench."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.control import ComputedTorque
from robot_dynamics.errors import InputError, UnknownNameError
from robot_dynamics.kinematics import jacobian
from robot_dynamics.observers import MomentumObserver, generalized_momentum
from robot_dynamics.simulation import ExternalWrench, Noise, PlantOptions, Simulation, SimulationOptions, simulate
from robot_dynamics.trajectory import plan

ROBOTS = ("iiwa14", "puma560", "planar2", "rx90", "three_dof_geared")


def _gravity(m, q):
    return rd.rnea(m, q, np.zeros(m.nq), np.zeros(m.nq), friction=False)


@pytest.mark.parametrize("name", ROBOTS)
def test_momentum_and_coriolis_transpose_against_the_mass_matrix(name: str) -> None:
    """p = A(q) qd (crba) and C^T qd = Adot qd - C qd, Adot by a central difference of crba along qd
    and C qd from rnea: the identity Adot = C + C^T, secondary links and rotor inertia included."""
    m = rd.load_robot(name)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, qd = rng.uniform(-1.5, 1.5, m.nq), rng.uniform(-2.0, 2.0, m.nq)
        p, ctq = generalized_momentum(m, q, qd)
        A = rd.crba(m, q)
        np.testing.assert_allclose(p, A @ qd, rtol=0, atol=1e-12 * max(1.0, np.abs(A @ qd).max()))
        h = 1e-6
        Adot = (rd.crba(m, q + h * qd) - rd.crba(m, q - h * qd)) / (2 * h)
        Cqd = rd.rnea(m, q, qd, np.zeros(m.nq), friction=False) - _gravity(m, q)
        expected = Adot @ qd - Cqd
        np.testing.assert_allclose(ctq, expected, rtol=0, atol=1e-7 * max(1.0, np.abs(expected).max()))
        assert np.abs(ctq).max() > 1e-3  # the term is there to check


@pytest.mark.parametrize("mimic", [False, True])
def test_momentum_of_random_trees_with_prismatic_and_mimic_joints(mimic: bool) -> None:
    """The same identities on random branched trees: prismatic and continuous joints, or mimic
    joints (a coordinate driving several bodies)."""
    import warnings

    from robot_dynamics.testing import random_tree_urdf

    for seed in range(30):
        text = random_tree_urdf(np.random.default_rng(seed), 9, n_fixed=1, mimic=mimic, prismatic=not mimic,
                                continuous=not mimic)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = rd.load_urdf(text)
        if m.has_mimic == mimic:
            break
    assert m.has_mimic == mimic and (m.nq < m.nb) == mimic
    rng = np.random.default_rng(5)
    q, qd = rng.uniform(-1.0, 1.0, m.nq), rng.uniform(-1.5, 1.5, m.nq)
    p, ctq = generalized_momentum(m, q, qd)
    np.testing.assert_allclose(p, rd.crba(m, q) @ qd, rtol=0, atol=1e-11 * max(1.0, np.abs(p).max()))
    h = 1e-6
    T = [0.5 * qd @ rd.crba(m, q + s * h * e) @ qd for e in np.eye(m.nq) for s in (1, -1)]
    gradient = (np.array(T[0::2]) - np.array(T[1::2])) / (2 * h)
    np.testing.assert_allclose(ctq, gradient, rtol=0, atol=1e-7 * max(1.0, np.abs(gradient).max()))


def _track(name: str, disturbance, smoothing: float, duration: float = 1.5, move: bool = True):
    m = rd.load_robot(name)
    start = np.clip(np.full(m.nq, 0.2), m.lower, m.upper)
    reference = plan("quintic", start, start + 0.4, duration=1.0) if move else start
    res = simulate(m, ComputedTorque(m), reference, duration=duration, q0=start, disturbance=disturbance,
                   coulomb_smoothing=smoothing, progress=False)
    obs = MomentumObserver(m, coulomb_smoothing=smoothing)
    r = np.array([obs.update(res.t[k], res.q[k], res.qd[k], res.tau[k]).external_torque for k in range(res.t.size)])
    return m, res, r


def test_residual_equals_a_constant_external_torque_while_moving() -> None:
    """iiwa14 (viscous friction) along a quintic move with a constant joint torque disturbance:
    once the residual's lag has settled, r equals it to 3e-6 relative during the move (the
    trapezoidal rule's dt^2 at 1 kHz) and to 1e-6 once the arm has settled."""
    tau_ext = np.array([3.0, -5.0, 2.0, 4.0, -1.0, 0.5, 0.3])
    _, res, r = _track("iiwa14", tau_ext, 0.0)
    lagged = res.t >= 0.3  # 30 time constants of K_O = 100 /s
    err = np.abs(r[lagged] - tau_ext).max() / np.abs(tau_ext).max()
    assert err < 3e-6, err
    assert np.abs(res.qd[lagged]).max() > 0.3  # it moved
    settled = res.t >= 1.3
    err = np.abs(r[settled] - tau_ext).max() / np.abs(tau_ext).max()
    assert err < 1e-6, err


def test_residual_equals_a_constant_external_torque_with_coulomb_friction() -> None:
    """PUMA 560 holding its pose, its viscous, Coulomb and Stribeck friction in plant and observer
    (smoothed alike): the disturbance pushes the arm off and the controller brings it back; once
    settled, r equals the disturbance to 1e-6 relative."""
    tau_ext = np.array([4.0, -6.0, 3.0, 0.5, -0.4, 0.2])
    _, res, r = _track("puma560", tau_ext, 0.05, duration=3.0, move=False)
    assert np.abs(res.qd[:200]).max() > 1e-3  # pushed off its pose
    settled = res.t >= 2.5  # the smoothed Coulomb friction makes the return a slow creep
    err = np.abs(r[settled] - tau_ext).max() / np.abs(tau_ext).max()
    assert err < 1e-6, err


@pytest.mark.parametrize("name", ["iiwa14", "puma560"])
def test_static_residual_and_the_tool_wrench(name: str) -> None:
    """At rest with tau = Q(q) - J^T F (a wrench F holding the arm): the residual is J^T F and
    wrench(frame) recovers F, force and moment."""
    m = rd.load_robot(name)
    q = np.clip(np.array([0.3, -0.6, 0.4, 0.9, -0.5, 0.7, 0.2])[: m.nq], m.lower, m.upper)
    F = np.array([12.0, -7.0, 20.0, 1.5, -2.0, 0.8])
    J = jacobian(m, q, m.end_effector)
    tau = _gravity(m, q) - J.T @ F  # the motors hold the push: tau + J^T F = Q
    obs = MomentumObserver(m)
    for k in range(400):
        out = obs.update(k * 1e-3, q, np.zeros(m.nq), tau)
    np.testing.assert_allclose(out.external_torque, J.T @ F, rtol=0, atol=1e-9 * np.abs(J.T @ F).max())
    np.testing.assert_allclose(obs.wrench(), F, rtol=0, atol=1e-7 * np.abs(F).max())
    assert out.collision


def _push(name: str, frame: str, wrench: np.ndarray, smoothing: float = 0.02):
    m = rd.load_robot(name)
    start = np.clip(np.full(m.nq, 0.3), m.lower, m.upper)
    move = plan("quintic", start, start + 0.4, duration=1.0)
    push = ExternalWrench(frame, lambda t: wrench if 0.5 <= t < 0.7 else np.zeros(6))
    options = SimulationOptions(noise=Noise(wrench=push), plant=PlantOptions(friction=True, coulomb_smoothing=smoothing))
    sim = Simulation(m, ComputedTorque(m), move, 1.2, options)
    sim.reset(start)
    res = sim.run()
    obs = MomentumObserver(m, coulomb_smoothing=smoothing)
    outs = [obs.update(res.t[k], res.q[k], res.qd[k], res.tau[k]) for k in range(res.t.size)]
    return m, res, outs


@pytest.mark.parametrize("name", ["iiwa14", "puma560"])
def test_a_push_at_the_tool_is_detected_in_simulation(name: str) -> None:
    """A 40 N push at the tool from t = 0.5 s to 0.7 s on a moving arm, friction on: no alarm before,
    detected within 20 ms, the log's disturbance is J^T F at each tick."""
    m = rd.load_robot(name)
    F = np.array([0.0, 25.0, -40.0, 0.0, 0.0, 0.0])
    m, res, outs = _push(name, m.end_effector, F)
    collision = np.array([o.collision for o in outs])
    before = res.t < 0.5
    assert not collision[before].any()
    first = res.t[np.argmax(collision & ~before)]
    assert 0.5 <= first <= 0.52, first
    k = int(np.searchsorted(res.t, 0.6))
    np.testing.assert_allclose(res.disturbance[k], jacobian(m, res.q[k], m.end_effector).T @ F, rtol=1e-12, atol=1e-12)
    assert np.abs(res.disturbance[before]).max() == 0.0
    # after the push the residual decays below the thresholds again
    assert not collision[res.t >= 0.85].any()


@pytest.mark.parametrize(("name", "frame", "joint"), [("iiwa14", "iiwa_link_4", "iiwa_joint_4"),
                                                      ("puma560", "link3", "joint3")])
def test_isolation_names_the_pushed_link(name: str, frame: str, joint: str) -> None:
    """A wrench at a middle link leaves the residuals of the joints after it at zero: the isolated
    joint is the link's own."""
    W = np.array([90.0, -60.0, 75.0, 18.0, -18.0, 18.0])
    m, res, outs = _push(name, frame, W)
    k = int(np.searchsorted(res.t, 0.65))
    j = m.joint_index(joint)
    true = res.disturbance[k]
    assert np.abs(true[j + 1:]).max() < 1e-12 and abs(true[j]) > 1.5 * outs[k].threshold[j]
    assert outs[k].collision and outs[k].joint == joint and outs[k].joint_index == j
    assert all(o.joint is None for o in outs if o.t < 0.5)


def test_the_residual_follows_the_external_torque_through_its_lag() -> None:
    """With K_O = 50 /s, 10 ms after a step of external torque the residual holds 1 - exp(-0.5)
    of it (the first-order lag), within the discretization (1e-3 relative)."""
    m = rd.load_robot("iiwa14")
    q = np.array([0.3, -0.6, 0.4, 0.9, -0.5, 0.7, 0.2])
    tau_ext = np.array([5.0, -3.0, 2.0, 1.0, -1.0, 0.5, 0.2])
    obs = MomentumObserver(m, gain=50.0)
    g = _gravity(m, q)
    for k in range(11):  # the arm held at rest by the motors: tau = g - tau_ext held from t = 0
        out = obs.update(k * 1e-3, q, np.zeros(7), g - tau_ext)
    np.testing.assert_allclose(out.external_torque, (1.0 - np.exp(-0.5)) * tau_ext, rtol=1e-3)


def test_reset_and_measured_torques() -> None:
    m = rd.load_robot("planar2")
    q, z = np.array([0.4, -0.3]), np.zeros(2)
    g = _gravity(m, q)
    obs = MomentumObserver(m, torque="measured", gain=[80.0, 120.0], threshold=0.5, relative=0.0)
    for k in range(300):
        out = obs.update(k * 1e-3, q, z, g - np.array([1.0, -2.0]))
    np.testing.assert_allclose(out.external_torque, [1.0, -2.0], atol=1e-9)
    assert out.collision and out.joint == m.joint_names[1]
    np.testing.assert_allclose(out.threshold, 0.5)
    obs.reset()
    assert not obs.started and np.all(obs.external_torque == 0.0)
    first = obs.update(5.0, q, z, g)  # a time before the last one is fine after reset
    assert np.all(first.external_torque == 0.0) and not first.collision and first.joint is None


def test_bad_inputs_are_named() -> None:
    m = rd.load_robot("planar2")
    with pytest.raises(InputError, match="model"):
        MomentumObserver("planar2")
    with pytest.raises(InputError, match="gain"):
        MomentumObserver(m, gain=[1.0, 0.0])
    with pytest.raises(InputError, match="threshold"):
        MomentumObserver(m, threshold=[1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="relative"):
        MomentumObserver(m, relative=-0.1)
    with pytest.raises(InputError, match="torque"):
        MomentumObserver(m, torque="filtered")
    with pytest.raises(InputError, match="coulomb_smoothing"):
        MomentumObserver(m, coulomb_smoothing=-1.0)
    with pytest.raises(InputError, match="gravity"):
        MomentumObserver(m, gravity=[0.0, 9.81])
    obs = MomentumObserver(m)
    with pytest.raises(InputError, match="wrench: no update"):
        obs.wrench()
    with pytest.raises(InputError, match="qd: expected finite"):
        obs.update(0.0, [0.1, 0.2], [np.nan, 0.0], [0.0, 0.0])
    with pytest.raises(InputError, match="tau: expected 2 values"):
        obs.update(0.0, [0.1, 0.2], [0.0, 0.0], [0.0])
    with pytest.raises(InputError, match="t: expected a finite time"):
        obs.update(float("nan"), [0.1, 0.2], [0.0, 0.0], [0.0, 0.0])
    obs.update(1.0, [0.1, 0.2], [0.0, 0.0], [0.0, 0.0])
    with pytest.raises(InputError, match="after the last update"):
        obs.update(1.0, [0.1, 0.2], [0.0, 0.0], [0.0, 0.0])
    with pytest.raises(UnknownNameError):
        obs.wrench("no_such_frame")


def test_bad_wrenches_are_named() -> None:
    m = rd.load_robot("planar2")
    with pytest.raises(InputError, match="wrench: expected 6 finite values"):
        ExternalWrench(m.end_effector, [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="wrench frame"):
        ExternalWrench(3, np.zeros(6))
    with pytest.raises(InputError, match="ExternalWrench"):
        Noise(wrench=np.zeros(6))
    options = SimulationOptions(noise=Noise(wrench=ExternalWrench("no_such_frame", np.zeros(6))))
    with pytest.raises(UnknownNameError):
        Simulation(m, ComputedTorque(m), plan("quintic", [0.0, 0.0], [0.2, 0.1], duration=0.1), 0.1, options)


def test_a_zero_wrench_leaves_the_run_as_it_was() -> None:
    """The Python tick taken for a wrench gives the compiled loop's numbers when the wrench is zero."""
    m = rd.load_robot("puma560")
    move = plan("quintic", np.zeros(6), np.full(6, 0.3), duration=0.2)
    runs = []
    for noise in (Noise(), Noise(wrench=ExternalWrench("tool0", np.zeros(6)))):
        sim = Simulation(m, ComputedTorque(m), move, 0.25, SimulationOptions(noise=noise))
        sim.reset()
        runs.append(sim.run())
    np.testing.assert_array_equal(runs[0].q, runs[1].q)
    np.testing.assert_array_equal(runs[0].tau, runs[1].tau)


def test_a_step_of_a_tenth_of_the_effort_limit_is_detected_on_every_joint_with_a_model_10_percent_off() -> None:
    """iiwa14 along a move under computed torque; controller and observer on a model whose link
    masses and inertias are 10 % off, velocity noise 1e-3 rad/s and position noise 1e-5 rad: no
    alarm before a step of 10 % of one joint's effort limit, which the default thresholds detect
    within 5 ms on that joint, for every joint."""
    m = rd.load_robot("iiwa14")
    est = m.replace(mass=m.mass * 1.1, inertia_com=m.inertia_com * 1.1)
    start = np.full(m.nq, 0.2)
    move = plan("quintic", start, start + np.resize([0.5, -0.4, 0.3, 0.8, -0.6, 1.0], m.nq), duration=1.0)
    for j in range(m.nq):
        step = np.zeros(m.nq)
        step[j] = 0.1 * m.effort_limit[j]
        res = simulate(m, ComputedTorque(est), move, duration=0.6, q0=start, progress=False,
                       disturbance=lambda t, step=step: step if t >= 0.5 else np.zeros(m.nq))
        rng = np.random.default_rng(j)
        obs = MomentumObserver(est)
        outs = [obs.update(res.t[k], res.q[k] + rng.normal(0, 1e-5, m.nq), res.qd[k] + rng.normal(0, 1e-3, m.nq),
                           res.tau[k]) for k in range(res.t.size)]
        assert not any(o.collision for o in outs if o.t < 0.5), m.joint_names[j]
        first = next(o for o in outs if o.collision)
        assert first.t - 0.5 <= 0.005 and first.external_torque[j] > 0.0, (m.joint_names[j], first.t)
        assert first.joint_index >= j
