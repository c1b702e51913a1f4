"""The compliant laws in the engine (rd_compliant_control, rd_impedance_damping) against the formulas
written in numpy: the torques of both laws at random states and references, the damping design by
Jacobi rotations against scipy's generalized eigenvectors, the singular flag and the input checks."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import eigh

import robot_dynamics as rd
from robot_dynamics.control import (
    CartesianImpedance,
    OperationalSpaceControl,
    Status,
    TaskReference,
    impedance_damping,
    task_error,
)
from robot_dynamics.engine import engine, stages
from robot_dynamics.kinematics import frame_pose, jacobian, jacobian_dot_qdot
from robot_dynamics.spatial import exp_so3

# (robot, task rows in the order given to the controller)
CASES = [("iiwa14", (0, 1, 2, 3, 4, 5)), ("iiwa14", (4, 0, 2, 5)), ("puma560", (0, 1, 2, 3, 4, 5)),
         ("puma560", (2, 1, 0)), ("planar2", (0, 2)), ("planar2", (0, 1))]


@pytest.fixture(scope="module")
def robots():
    return {name: rd.load_robot(name) for name in ("iiwa14", "puma560", "planar2")}


def reference_tau(model, c, q, qd, ref, tau_prev=None, dt=0.0):
    """The compliant law as written in numpy from its formulas (the library's law before the engine
    had it): the operational space of rd.operational_space, s_min by SVD, D by scipy's eigh."""
    rows = c.rows
    J = jacobian(model, q, c.frame)[rows]
    s_min = 0.0 if J.shape[0] > J.shape[1] else float(np.linalg.svd(J, compute_uv=False)[-1])
    thr = c.singular_threshold
    lam2 = c.damping**2 * (1.0 - (s_min / thr) ** 2) if s_min < thr else 0.0
    task = rd.operational_space(model, q, c.frame, rows=rows, damping=float(np.sqrt(lam2)))
    e = task_error(ref.pose, frame_pose(model, q, c.frame))[rows]
    e_dot = ref.twist[rows] - J @ qd
    if isinstance(c, CartesianImpedance):
        w2, Phi = eigh(np.diag(c.stiffness), task.Lambda)
        LPhi = task.Lambda @ Phi
        D = (LPhi * (2.0 * c.damping_ratio * np.sqrt(np.maximum(w2, 0.0)))) @ LPhi.T
        F = c.stiffness * e + D @ e_dot
    else:
        bias = jacobian_dot_qdot(model, q, qd, c.frame)[rows]
        F = task.Lambda @ (ref.accel[rows] + c.kd * e_dot + c.kp * e - bias)
    for part, cap in ((rows < 3, c.max_force), (rows >= 3, c.max_moment)):
        norm = np.linalg.norm(F[part])
        if norm > cap:
            F[part] *= cap / norm
    Kn, A = c.null_space_stiffness, rd.crba(model, q)
    tau0 = Kn * (c._hold - q) - 2.0 * c.null_space_damping_ratio * np.sqrt(Kn * np.diag(A)) * qd
    u = _barrier(model, c, q, qd, A, J.T @ F + task.N @ tau0, dt)
    tau = rd.rnea(model, q, qd, np.zeros(model.nq)) + u
    if tau_prev is not None and np.isfinite(c.max_torque_rate) and dt > 0.0:
        tau = np.clip(tau, tau_prev - c.max_torque_rate * dt, tau_prev + c.max_torque_rate * dt)
    return tau, s_min


def _barrier(model, c, q, qd, A, u, dt):
    """The joint-limit barriers from their description, on u, the torques beyond rnea(q, qd, 0): faster
    than half its velocity limit v a joint's acceleration A^-1 u away from zero is capped at
    omega (v - |qd|), and at a tick dt > 0 within (-v - qd) / dt .. (v - qd) / dt; then within the band
    (the margin, at most a quarter of the range) at a position limit the acceleration toward it is
    capped at omega^2 (edge - q) - 2 omega qd; the cut added as A delta."""
    band = np.minimum(c.joint_limit_margin, 0.25 * (model.upper - model.lower))
    hi, lo, w, v = model.upper - band, model.lower + band, c.joint_limit_frequency, model.velocity_limit
    a = np.linalg.solve(A, u)
    cut = np.where(qd > 0.5 * v, np.minimum(a, w * (v - qd)), a)
    cut = np.where(qd < -0.5 * v, np.maximum(cut, w * (-v - qd)), cut)
    if dt > 0.0:
        cut = np.clip(cut, (-v - qd) / dt, (v - qd) / dt)
    cut = np.where(q < lo, np.maximum(cut, w * w * (lo - q) - 2.0 * w * qd), cut)
    cut = np.where(q > hi, np.minimum(cut, w * w * (hi - q) - 2.0 * w * qd), cut)
    return u + A @ (cut - a)


def _random_reference(model, q, frame, rng, angle=None):
    T = frame_pose(model, q, frame)
    axis = rng.normal(size=3)
    axis /= np.linalg.norm(axis)
    Td = T.copy()
    Td[:3, 3] += rng.normal(scale=0.05, size=3)
    Td[:3, :3] = exp_so3(axis * (rng.uniform(0.0, 3.0) if angle is None else angle)) @ T[:3, :3]
    return TaskReference(Td, rng.normal(scale=0.3, size=6), rng.normal(scale=2.0, size=6))


def _controllers(model, rows, rng):
    """An impedance and an operational-space law with random gains, a posture and saturations."""
    r, nq = len(rows), model.nq
    common = dict(rows=rows, null_space_stiffness=rng.uniform(0.0, 20.0, nq), null_space_damping_ratio=0.8,
                  posture=rng.uniform(-1.0, 1.0, nq), max_force=rng.choice([np.inf, 30.0]),
                  max_moment=rng.choice([np.inf, 3.0]), max_torque_rate=200.0, effort_limit=np.inf)
    stiffness = np.where(np.asarray(rows) < 3, 1.0, 0.1) * rng.uniform(200.0, 2000.0, r)
    return (CartesianImpedance(model, stiffness, rng.uniform(0.3, 1.5), **common),
            OperationalSpaceControl(model, kp=rng.uniform(50.0, 900.0, r), kd=rng.uniform(5.0, 60.0, r), **common))


@pytest.mark.parametrize("name, rows", CASES)
def test_the_engine_law_equals_the_numpy_formulas_at_random_states(robots, name, rows):
    """Both laws, one tick and the next (rate limited), at 12 random states, rotations of the reference
    up to 3 rad (both branches of log), the wrench saturated in some, joints in the joint-limit
    barrier's band in some and past their velocity limits' cap in some: to 1e-9 of the torques' size."""
    model, rng = robots[name], np.random.default_rng(46)
    in_band = fast = 0  # states with a joint in the position barrier's band, faster than half its velocity limit
    for _ in range(12):
        lo, hi = np.maximum(model.lower, -3.2) - 0.05, np.minimum(model.upper, 3.2) + 0.05  # a few past a limit
        q, qd = rng.uniform(lo, hi), rng.normal(scale=rng.choice([0.3, 1.5]), size=model.nq)
        in_band += bool(np.any((q > model.upper - 0.1) | (q < model.lower + 0.1)))
        fast += bool(np.any(np.abs(qd) > 0.5 * model.velocity_limit))
        ref = _random_reference(model, q, model.end_effector, rng)
        for c in _controllers(model, rows, rng):
            first = c.update(0.0, q, qd, ref)
            expected, s_min = reference_tau(model, c, q, qd, ref)
            scale = np.abs(expected).max()
            np.testing.assert_allclose(first.tau, expected, rtol=1e-9, atol=1e-9 * scale)
            assert bool(first.status & Status.SINGULAR) == (s_min < c.singular_threshold)
            q2 = q + 0.01 * qd
            second = c.update(0.002, q2, qd, ref)  # within 200 N m/s * 2 ms of the first
            expected2, _ = reference_tau(model, c, q2, qd, ref, first.tau, 0.002)
            np.testing.assert_allclose(second.tau, expected2, rtol=1e-9, atol=1e-9 * np.abs(expected2).max())
    assert in_band > 0 or not np.isfinite(model.upper).any()  # the barriers checked where there are limits
    assert fast > 0 or not np.isfinite(model.velocity_limit).any()


@pytest.mark.parametrize("angle", [0.0, 1e-9, 1e-5, np.pi / 2 - 1e-9, np.pi / 2 + 1e-9, np.pi - 1e-4, np.pi - 1e-8,
                                   np.pi])
def test_the_orientation_error_is_the_log_of_task_error_at_every_angle(robots, angle):
    """The engine's log(R_d R^T) at small angles, about pi/2 (its two branches) and near pi: the
    rotation rows' torques as the numpy law gives them."""
    model, rng = robots["iiwa14"], np.random.default_rng(7)
    q = np.array([0.2, 0.6, -0.3, -1.2, 0.4, 0.9, 0.1])
    ref = _random_reference(model, q, model.end_effector, rng, angle)
    c = CartesianImpedance(model, [1000, 1000, 1000, 100, 100, 100], 0.7, effort_limit=np.inf, posture=q + 0.1)
    tau = c.update(0.0, q, np.zeros(7), ref).tau
    expected, _ = reference_tau(model, c, q, np.zeros(7), ref)
    np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def _random_spd(rng, r, scales):
    Q = np.linalg.qr(rng.normal(size=(r, r)))[0]
    S = np.diag(scales) @ Q @ np.diag(rng.uniform(0.5, 2.0, r)) @ Q.T @ np.diag(scales)
    return 0.5 * (S + S.T)


@pytest.mark.parametrize("r", [1, 2, 3, 6])
def test_the_jacobi_damping_design_equals_scipys_generalized_eigenvectors(r):
    """rd_impedance_damping (Cholesky, Jacobi) against D = Lambda Phi diag(2 zeta w) Phi^T Lambda from
    scipy's eigh(K, Lambda): task inertias mixing kg and kg m^2 (scales 1e-2 to 30), diagonal and full
    stiffnesses, to 1e-10 of |D|."""
    rng = np.random.default_rng(r)
    for _ in range(20):
        Lambda = _random_spd(rng, r, rng.choice([0.1, 1.0, 5.0], r))
        for K in (np.diag(rng.uniform(10.0, 3000.0, r)), _random_spd(rng, r, rng.uniform(3.0, 50.0, r))):
            zeta = rng.uniform(0.1, 2.0)
            w2, Phi = eigh(K, Lambda)
            LPhi = Lambda @ Phi
            expected = (LPhi * (2.0 * zeta * np.sqrt(w2))) @ LPhi.T
            code, D = stages.impedance_damping(K, Lambda, zeta)
            assert code == engine().OK
            np.testing.assert_allclose(D, expected, rtol=0, atol=1e-10 * np.abs(expected).max())
            np.testing.assert_allclose(impedance_damping(K, Lambda, zeta), D, rtol=0, atol=0)
    with pytest.raises(rd.SingularityError, match="not positive definite"):
        impedance_damping(np.ones(2), np.array([[1.0, 2.0], [2.0, 1.0]]), 0.7)
    with pytest.raises(rd.InputError, match="r <= 6"):
        impedance_damping(np.ones(7), np.eye(7), 0.7)


def test_the_singular_flag_and_the_smallest_singular_value(robots):
    """Below the threshold the engine's s_min (one-sided Jacobi on the rows of J) is the SVD's to 1e-9
    down to 1e-6, the tick says SINGULAR with its value and the damped law matches the numpy one;
    above it the engine reports inf (not computed)."""
    model = robots["iiwa14"]
    c = CartesianImpedance(model, effort_limit=np.inf)
    for scale, singular in ((1.0, False), (0.02, True), (1e-3, True)):
        q = np.array([0.2, 0.6, -0.3, -1.2, 0.4, 0.9, 0.1]) * np.array([1, scale, 1, scale, 1, 1, 1])
        s = np.linalg.svd(jacobian(model, q, model.end_effector), compute_uv=False)[-1]
        ref = TaskReference(frame_pose(model, q, model.end_effector), np.zeros(6), np.zeros(6))
        c.reset()
        tick = stages.compliant(model, _options(c, q), q, np.zeros(7), ref.pose, ref.twist, None, None, 0.0)
        assert tick.code == engine().OK and tick.singular == singular == (s < 0.02)
        assert tick.s_min == (pytest.approx(s, rel=1e-9, abs=1e-12) if singular else np.inf)
        out = c.update(0.0, q, np.zeros(7), ref)
        assert bool(out.status & Status.SINGULAR) == singular
        if singular:
            assert f"{s:.3g}" in out.message
        expected, _ = reference_tau(model, c, q, np.zeros(7), ref)
        np.testing.assert_allclose(out.tau, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def test_the_smallest_singular_value_near_singular_poses_and_in_clusters(robots):
    """s_min against the SVD of J where it is computed (below the threshold): on the stretched iiwa14's
    sines about q = 0 (bench_update's states; s_min 2e-5 to 0.02, the next one apart) to a few
    DBL_EPSILON |J| absolute, and at poses nearer q = 0, where the two smallest singular values shrink
    together (a cluster, the eigenvector of J J^T's smallest eigenvalue ill-determined), within the
    Rayleigh quotient's bound DBL_EPSILON |J|^2 / s_2."""
    model = robots["iiwa14"]
    c = CartesianImpedance(model, effort_limit=np.inf)
    w = 2.0 * np.pi * (0.3 + 0.1 * np.arange(7))
    states = [0.3 * np.sin(w * t + np.arange(7)) for t in np.arange(0.0, 20.0, 0.0371)]
    rng = np.random.default_rng(7)
    clustered = [rng.uniform(-1.0, 1.0, 7) * 10.0 ** rng.uniform(-6.0, -1.0) for _ in range(300)]
    checked = {"apart": 0, "cluster": 0}
    for kind, qs in (("apart", states), ("cluster", clustered)):
        for q in qs:
            J = jacobian(model, q, model.end_effector)
            s = np.linalg.svd(J, compute_uv=False)
            if s[-1] >= c.singular_threshold:
                continue
            ref = TaskReference(frame_pose(model, q, model.end_effector), np.zeros(6), np.zeros(6))
            tick = stages.compliant(model, _options(c, q), q, np.zeros(7), ref.pose, ref.twist, None, None, 0.0)
            assert tick.code == engine().OK and tick.singular
            eps = np.finfo(float).eps
            bound = 8.0 * eps * s[0] if kind == "apart" else 8.0 * eps * s[0] ** 2 / s[-2] + 8.0 * eps * s[0]
            assert abs(tick.s_min - s[-1]) <= bound, (kind, q, tick.s_min, s[-1])
            checked[kind] += 1
            if kind == "cluster":
                assert s[-2] < 0.1  # the next singular value small too: a cluster
    assert checked["apart"] > 200 and checked["cluster"] > 200


def _options(c, q):
    c._hold = q.copy()
    return c._options()


def test_non_finite_inputs_and_bad_options_take_the_fault_path(robots):
    """NaN q or a NaN reference: the engine answers BAD_INPUT (no torque computed) and the controller's
    tick is the fault output; options out of range: BAD_SIZE; torques that overflow: BAD_OUTPUT."""
    model, e = robots["iiwa14"], engine()
    q = np.array([0.2, 0.6, -0.3, -1.2, 0.4, 0.9, 0.1])
    ref = TaskReference(frame_pose(model, q, model.end_effector), np.zeros(6), np.zeros(6))
    for c in (CartesianImpedance(model), OperationalSpaceControl(model)):
        o = _options(c, q)
        accel = ref.accel if o.law == e.OPERATIONAL_SPACE else None
        assert stages.compliant(model, o, q, np.zeros(7), ref.pose, ref.twist, accel, None, 0.0).code == e.OK
        bad_q = q.copy()
        bad_q[3] = np.nan
        assert stages.compliant(model, o, bad_q, np.zeros(7), ref.pose, ref.twist, accel, None, 0.0).code == e.BAD_INPUT
        bad_pose = ref.pose.copy()
        bad_pose[0, 3] = np.inf
        assert stages.compliant(model, o, q, np.zeros(7), bad_pose, ref.twist, accel, None, 0.0).code == e.BAD_INPUT
        assert stages.compliant(model, o, q, np.zeros(7), ref.pose, ref.twist, accel, np.full(7, np.nan), 0.001).code \
            == e.BAD_INPUT
        assert stages.compliant(model, o._replace(null_damping_ratio=0.0), q, np.zeros(7), ref.pose, ref.twist, accel,
                                None, 0.0).code == e.BAD_SIZE
        assert stages.compliant(model, o._replace(kp=-o.kp), q, np.zeros(7), ref.pose, ref.twist, accel, None,
                                0.0).code == e.BAD_SIZE
        for velocity, frequency, code in ((np.full(7, np.inf), 20.0, e.OK), (np.zeros(7), 20.0, e.BAD_SIZE),
                                          (np.full(7, np.nan), 20.0, e.BAD_SIZE), (np.ones(7), 0.0, e.BAD_SIZE)):
            bad = o._replace(velocity=velocity, limit_frequency=frequency, limit_margin=0.0)  # the velocity barrier
            assert stages.compliant(model, bad, q, np.zeros(7), ref.pose, ref.twist, accel, None, 0.001).code == code
        assert stages.compliant(model, o, q, np.full(7, 1e160), ref.pose, ref.twist, accel, None, 0.0).code \
            == e.BAD_OUTPUT
        c.reset()
        c.update(0.0, q, np.zeros(7), ref)
        out = c.update(0.001, bad_q, np.zeros(7), ref)
        assert out.status == Status.FAULT and "non-finite measurement" in out.message
        np.testing.assert_allclose(out.tau, np.clip(rd.gravity_torques(model, q), -model.effort_limit, model.effort_limit))
        out = c.update(0.002, q, np.full(7, 1e160), ref)
        assert out.status == Status.FAULT and "non-finite torques" in out.message
