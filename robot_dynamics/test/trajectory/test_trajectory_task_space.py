"""Task-space straight lines with a rotation about one axis (Khalil 8.4) through the core's
inverse kinematics, and the torque check / time scaling with the dynamics core."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics import InputError, SingularityError
from robot_dynamics import trajectory as tr
from robot_dynamics.spatial import log_so3, rotation_about_axis

Q_A = np.array([0.2, -0.6, 0.5, 0.3, -0.4, 0.2])


@pytest.fixture(scope="module")
def puma():
    return rd.load_robot("puma560")


def _goal(T0, dp, axis, angle):
    T1 = T0.copy()
    T1[:3, 3] += dp
    T1[:3, :3] = T0[:3, :3] @ rotation_about_axis(np.asarray(axis) / np.linalg.norm(axis), angle)
    return T1


def test_axis_angle_matches_khalil_8_51():
    rng = np.random.default_rng(0)
    for _ in range(20):
        ui, uf = rng.normal(size=3), rng.normal(size=3)
        Ai = rotation_about_axis(ui / np.linalg.norm(ui), rng.uniform(-3, 3))
        Af = rotation_about_axis(uf / np.linalg.norm(uf), rng.uniform(-3, 3))
        (si, ni, ai), (sf, nf, af) = Ai.T, Af.T
        # Khalil [8.51], with s, n, a the columns of A
        C = 0.5 * (si @ sf + ni @ nf + ai @ af - 1)
        vee = np.array([ai @ nf - ni @ af, si @ af - ai @ sf, ni @ sf - si @ nf])
        S = 0.5 * np.linalg.norm(vee)
        alpha_book = np.arctan2(S, C)
        u, alpha = tr.rotation_axis_angle(Ai, Af)
        assert alpha == pytest.approx(alpha_book, abs=1e-12)
        if S > 1e-3:
            np.testing.assert_allclose(u, vee / (2 * S), atol=1e-10)
        np.testing.assert_allclose(Ai @ rotation_about_axis(u, alpha), Af, atol=1e-12)  # [8.49]
        # [8.56]: the same rotation about the fixed axis Ai u of the base frame
        motion = tr.cartesian_motion(np.block([[Ai, np.zeros((3, 1))], [np.zeros((1, 3)), 1]]),
                                     np.block([[Af, np.zeros((3, 1))], [np.zeros((1, 3)), 1]]), None, None, 1.0, 2.0)
        np.testing.assert_allclose(rotation_about_axis(motion.axis_base, alpha) @ Ai, Af, atol=1e-12)
        T_mid, twist, _ = motion.sample(motion.duration / 3)
        w_fixed = log_so3(T_mid[:3, :3] @ Ai.T)  # rot(Ai u, theta) = A(t) Ai^T
        np.testing.assert_allclose(np.cross(w_fixed, motion.axis_base), 0.0, atol=1e-12)
        np.testing.assert_allclose(np.cross(twist[3:], motion.axis_base), 0.0, atol=1e-12)  # [8.57]


def test_straight_line_with_rotation(puma):
    T0 = rd.frame_pose(puma, Q_A)
    T1 = _goal(T0, [0.12, -0.08, 0.05], [1.0, 1.0, 0.2], 0.5)
    kv, ka = np.array([0.4, 1.0]), np.array([1.5, 3.0])
    motion = tr.cartesian_motion(T0, T1, kv[0], ka[0], kv[1], ka[1])
    D = np.linalg.norm(T1[:3, 3] - T0[:3, 3])
    assert motion.distance == pytest.approx(D) and motion.angle == pytest.approx(0.5)
    # D and alpha synchronised as two joints ([8.48]-[8.49] with 8.3.3)
    assert motion.duration == pytest.approx(tr.synchronized_trapezoid([D, 0.5], kv, ka).duration, rel=1e-12)
    rep = tr.task_space_to_joint(puma, motion, Q_A, rate=100.0)
    T = rd.frame_pose(puma, rep.q)
    np.testing.assert_allclose(T[-1], T1, atol=1e-9)
    # the origin stays on the segment Pi Pf ...
    d = (T1[:3, 3] - T0[:3, 3]) / D
    rel = T[:, :3, 3] - T0[:3, 3]
    along = rel @ d
    assert np.max(np.linalg.norm(rel - np.outer(along, d), axis=1)) < 1e-6
    assert np.all(along >= -1e-9) and np.all(along <= D + 1e-9) and np.all(np.diff(along) >= -1e-9)
    # ... and between the samples (the joint table is interpolated)
    tm = 0.5 * (rep.t[1:] + rep.t[:-1])
    Pm = rd.frame_pose(puma, rep.trajectory.position(tm))[:, :3, 3] - T0[:3, 3]
    assert np.max(np.linalg.norm(Pm - np.outer(Pm @ d, d), axis=1)) < 1e-6
    # the orientation is on the geodesic about u: Ai^T A(t) = rot(u, theta(t)), 0 <= theta <= alpha
    w = log_so3(np.swapaxes(T0[:3, :3], -1, -2) @ T[:, :3, :3])
    theta = w @ motion.axis
    np.testing.assert_allclose(w, np.outer(theta, motion.axis), atol=1e-6)
    assert np.all(np.diff(theta) >= -1e-9) and theta[0] == pytest.approx(0, abs=1e-9)
    # the same time law r(t) for translation and rotation ([8.53]-[8.54])
    np.testing.assert_allclose(along / D, theta / 0.5, atol=1e-6)
    # velocities and accelerations: J qd = twist, J qdd + Jdot qd = twist rate
    _, twist, accel = motion.sample(rep.t)
    np.testing.assert_allclose(rd.frame_velocity(puma, rep.q, rep.qd), twist, atol=1e-9)
    acc = np.einsum("nij,nj->ni", rd.jacobian(puma, rep.q), rep.qdd) + rd.jacobian_dot_qdot(puma, rep.q, rep.qd)
    np.testing.assert_allclose(acc, accel, atol=1e-8)
    # velocities are the derivative of the positions (central differences of the table)
    h = rep.t[1] - rep.t[0]
    fd = (rep.q[2:-1] - rep.q[:-3]) / (2 * h)
    # (error <= h |step of qdd| / 4 where the trapezoid switches)
    np.testing.assert_allclose(fd, rep.qd[1:-2], rtol=0, atol=0.6 * h * np.max(np.abs(rep.qdd)))
    assert rep.position_error < 1e-9 and rep.orientation_error < 1e-9


def test_planar_arm_straight_line_position_only():
    m = rd.load_robot("planar2")
    q0 = np.array([0.3, 1.2])
    T0 = rd.frame_pose(m, q0)
    T1 = T0.copy()
    T1[:3, 3] += rd.jacobian(m, q0)[:3] @ np.array([0.3, -0.4])  # a displacement in the arm's plane
    motion = tr.cartesian_motion(T0, T1, 0.3, 1.0, duration=None)
    rep = tr.task_space_to_joint(m, motion, q0, position_only=True, rate=200.0)
    P = rd.frame_pose(m, rep.q)[:, :3, 3]
    d = motion.direction
    rel = P - T0[:3, 3]
    assert np.max(np.linalg.norm(rel - np.outer(rel @ d, d), axis=1)) < 1e-6
    np.testing.assert_allclose(P[-1], T1[:3, 3], atol=1e-9)


def test_refuses_singularity_unreachable_and_joint_limits(puma):
    T0 = rd.frame_pose(puma, Q_A)
    # the wrist (q5) must pass through 0, the PUMA's wrist singularity
    q_b = Q_A.copy()
    q_b[4] = 0.4
    flip = tr.cartesian_motion(T0, rd.frame_pose(puma, q_b), 0.5, 1.0, 1.0, 2.0)
    with pytest.raises(SingularityError, match=r"singular configuration at t="):
        tr.task_space_to_joint(puma, flip, Q_A)
    far = tr.cartesian_motion(T0, _goal(T0, [3.0, 0, 0], [0, 0, 1], 0.0), 0.5, 1.0, 1.0, 2.0)
    with pytest.raises(SingularityError, match="not reachable"):
        tr.task_space_to_joint(puma, far, Q_A, check_limits=False)
    narrow = puma.replace(upper=np.where(np.arange(6) == 2, 0.55, puma.upper))
    down = tr.cartesian_motion(T0, _goal(T0, [0, 0, -0.1], [0, 0, 1], 0.0), 0.5, 1.0, 1.0, 2.0)
    with pytest.raises(InputError, match=r"joint 'joint3' leaves its limits \[.*\] at t="):
        tr.task_space_to_joint(narrow, down, Q_A)


def test_task_space_bad_input(puma):
    T0 = rd.frame_pose(puma, Q_A)
    bad = T0.copy()
    bad[:3, :3] *= 2.0
    with pytest.raises(InputError, match="not a rotation"):
        tr.cartesian_motion(T0, bad, 0.5, 1.0, 1.0, 2.0)
    nan = T0.copy()
    nan[0, 3] = np.nan
    with pytest.raises(InputError, match="finite"):
        tr.cartesian_motion(nan, T0, 0.5, 1.0, 1.0, 2.0)
    with pytest.raises(InputError, match="limit"):
        tr.cartesian_motion(T0, _goal(T0, [0.1, 0, 0], [0, 0, 1], 0.1), 0.0, 1.0, 1.0, 2.0)
    motion = tr.cartesian_motion(T0, _goal(T0, [0.1, 0, 0], [0, 0, 1], 0.1), 0.5, 1.0, 1.0, 2.0)
    with pytest.raises(InputError, match="away from T_start"):
        tr.task_space_to_joint(puma, motion, np.zeros(6))
    # no motion: a zero-length trajectory
    still = tr.cartesian_motion(T0, T0, 0.5, 1.0, 1.0, 2.0)
    assert still.duration == 0.0
    rep = tr.task_space_to_joint(puma, still, Q_A)
    assert rep.t.tolist() == [0.0]
    np.testing.assert_allclose(rep.q[0], Q_A, atol=1e-9)


def test_torque_check_flags_a_fast_motion_and_time_scaling_fixes_it(puma):
    T0 = rd.frame_pose(puma, Q_A)
    T1 = _goal(T0, [0.0, 0.1, -0.1], [0, 1, 0], 0.3)
    fast = tr.cartesian_motion(T0, T1, 5.0, 50.0, 10.0, 100.0)
    rep = tr.task_space_to_joint(puma, fast, Q_A, rate=500.0)
    check = tr.check_torques(puma, rep.trajectory)
    assert not check.feasible and check.ratio > 1.5
    # the check is the dynamics core's rnea along the samples
    q, qd, qdd = rep.trajectory.sample(check.t)
    np.testing.assert_allclose(check.tau, rd.rnea(puma, q, qd, qdd), rtol=1e-12)
    k = int(np.argmin(np.abs(check.t - check.time)))
    j = puma.joint_names.index(check.joint)
    assert abs(check.tau[k, j]) / puma.effort_limit[j] == pytest.approx(check.ratio)
    scaled, after = tr.scale_to_torque_limits(puma, rep.trajectory)
    assert after.feasible and 0.999 <= after.ratio <= 1.0
    assert scaled.duration > rep.trajectory.duration
    # a slightly faster scaling would break a limit: the factor is the smallest one
    faster = rep.trajectory.time_scaled(scaled.duration / rep.trajectory.duration * 0.99)
    assert not tr.check_torques(puma, faster, rate=200.0 / 0.99).feasible
    # the scaled motion is the same path
    np.testing.assert_allclose(scaled.position(scaled.duration * 0.37), rep.trajectory.position(rep.trajectory.duration * 0.37), atol=1e-12)
    # a slow motion is left alone
    slow = tr.plan("quintic", Q_A, Q_A + 0.1, duration=3.0)
    same, ok = tr.scale_to_torque_limits(puma, slow)
    assert same is slow and ok.feasible


def test_torque_scaling_refuses_static_overload(puma):
    weak = puma.replace(effort_limit=np.full(6, 1e-3))
    traj = tr.plan("quintic", Q_A, Q_A + 0.1, duration=1.0)
    with pytest.raises(InputError, match="static torques"):
        tr.scale_to_torque_limits(weak, traj)
    with pytest.raises(InputError, match="6 joints"):
        tr.check_torques(puma, tr.plan("cubic", [0.0], [1.0], duration=1.0))


def test_model_limits_follow_khalil(puma):
    kv, ka = tr.model_limits(puma)
    np.testing.assert_array_equal(kv, puma.velocity_limit)
    # ka_j = effort_j / max_q A_jj: no sampled configuration has a larger diagonal inertia
    rng = np.random.default_rng(5)
    q = rng.uniform(puma.lower, puma.upper, (50, 6))
    A = rd.crba(puma, q)
    assert np.all(ka <= puma.effort_limit / np.max(np.diagonal(A, axis1=1, axis2=2), axis=0) * 1.2)
    assert np.all(ka * np.diag(rd.crba(puma, np.zeros(6))) <= puma.effort_limit * (1 + 1e-12))
    traj = tr.plan("trapezoidal", np.zeros(6), np.full(6, 0.5), model=puma)
    assert np.all(traj.peak_velocity <= kv * (1 + 1e-9)) and np.all(traj.peak_acceleration <= ka * (1 + 1e-9))
    with pytest.raises(InputError, match=r"joint1"):
        tr.plan("trapezoidal", np.zeros(5), np.ones(5), model=puma)
    with pytest.raises(InputError, match=r"joint 'joint3' = 4 is outside its limits"):
        tr.plan("cubic", np.zeros(6), [0, 0, 4.0, 0, 0, 0], model=puma)
    # double S: the jerk limit defaults to 10 ka
    s = tr.plan("double_s", np.zeros(6), np.full(6, 0.5), model=puma)
    assert np.all(s.peak_jerk <= tr.DEFAULT_JERK_PER_ACCELERATION * ka * (1 + 1e-9))


# -- Euler-angle and roll-pitch-yaw interpolation (Khalil [8.55]) ------------------------------
def _rot(axis, a):
    return rotation_about_axis(np.eye(3)[axis], a)


def test_euler_angles_are_khalils_zxz_and_invert():
    rng = np.random.default_rng(55)
    a = np.c_[rng.uniform(-3, 3, 50), rng.uniform(0.05, 3.0, 50), rng.uniform(-3, 3, 50)]
    R = tr.euler_to_matrix(a)
    for k in range(50):  # rot(z, phi) rot(x, theta) rot(z, psi), section 3.6.1
        np.testing.assert_allclose(R[k], _rot(2, a[k, 0]) @ _rot(0, a[k, 1]) @ _rot(2, a[k, 2]), atol=1e-14)
    np.testing.assert_allclose(tr.matrix_to_euler(R), a, atol=1e-12)
    # theta = 0: only phi + psi is defined, psi is put to 0
    np.testing.assert_allclose(tr.euler_to_matrix(tr.matrix_to_euler(tr.euler_to_matrix([0.4, 0.0, 0.7]))),
                               tr.euler_to_matrix([0.4, 0.0, 0.7]), atol=1e-14)


@pytest.mark.parametrize("convention", ["euler", "rpy"])
def test_angle_interpolation_of_8_55(convention):
    """The three angles move on one synchronised law: ends exact, angles linear in r(t), twist
    and its derivative equal to finite differences of the sampled poses, limits held."""
    to_angles = tr.matrix_to_euler if convention == "euler" else rd.spatial.matrix_to_rpy
    to_matrix = tr.euler_to_matrix if convention == "euler" else rd.spatial.rpy_to_matrix
    a0, af = np.array([0.3, 0.8, -0.5]), np.array([1.2, 0.4, 0.6])
    T0, T1 = np.eye(4), np.eye(4)
    T0[:3, :3], T1[:3, :3] = to_matrix(a0), to_matrix(af)
    T0[:3, 3], T1[:3, 3] = [0.4, 0.1, 0.5], [0.5, -0.2, 0.3]
    m = tr.cartesian_motion(T0, T1, 0.5, 2.0, 1.0, 4.0, orientation=convention)
    np.testing.assert_allclose(m.increments, af - a0, atol=1e-12)
    t = np.linspace(0.0, m.duration * (1 - 1e-12), 41)
    T, twist, accel = m.sample(t)
    np.testing.assert_allclose(T[0], T0, atol=1e-14)
    np.testing.assert_allclose(T[-1], T1, atol=1e-9)
    # the angles of the sampled frames move on one law r(t): (a(t) - a0) / (af - a0) = s(t) / D
    r = np.linalg.norm(T[:, :3, 3] - T0[:3, 3], axis=1) / m.distance
    np.testing.assert_allclose((to_angles(T[:, :3, :3]) - a0) / (af - a0), np.tile(r[:, None], 3), atol=1e-9)
    # twist and acceleration against central differences of the poses (an independent derivative)
    h = 1e-5
    tm = t[1:-1]
    Tp, tw_p, _ = m.sample(tm + h)
    Tm, tw_m, _ = m.sample(tm - h)
    w_fd = np.array([log_so3(a @ b.T) for a, b in zip(Tp[:, :3, :3], Tm[:, :3, :3])]) / (2 * h)
    np.testing.assert_allclose(twist[1:-1, 3:], w_fd, atol=1e-6)
    np.testing.assert_allclose(twist[1:-1, :3], (Tp[:, :3, 3] - Tm[:, :3, 3]) / (2 * h), atol=1e-7)
    np.testing.assert_allclose(accel[1:-1], (tw_p - tw_m) / (2 * h), atol=2e-3)
    # each angle rate within its limit, the slowest coordinate at it (minimum time)
    _, xd, _ = m.law.sample(np.linspace(0, m.duration, 2001))
    assert np.abs(xd[:, 1:]).max() == pytest.approx(1.0, rel=1e-6) and np.abs(xd[:, 0]).max() <= 0.5 + 1e-9


def test_printed_8_55_turns_the_frame_twice():
    """[8.55] as printed, Ai rot(z, phi_i + r phi) ..., starts at Ai Ai, not at Ai."""
    a0 = np.array([0.3, 0.8, -0.5])
    Ai = tr.euler_to_matrix(a0)
    printed_start = Ai @ _rot(2, a0[0]) @ _rot(0, a0[1]) @ _rot(2, a0[2])
    assert np.abs(printed_start - Ai).max() > 0.5
    T0 = np.eye(4)
    T0[:3, :3] = Ai
    m = tr.cartesian_motion(T0, T0, duration=1.0, orientation="euler")
    np.testing.assert_allclose(m.sample(0.0)[0][:3, :3], Ai, atol=1e-15)


def test_euler_motion_through_inverse_kinematics(puma):
    T0 = rd.frame_pose(puma, Q_A)
    T1 = _goal(T0, [0.05, -0.04, 0.03], [0.3, 0.2, 1.0], 0.4)
    m = tr.cartesian_motion(T0, T1, 0.5, 2.0, 1.0, 4.0, orientation="rpy")
    rep = tr.task_space_to_joint(puma, m, Q_A, rate=100.0)
    np.testing.assert_allclose(rd.frame_pose(puma, rep.q[-1]), T1, atol=1e-8)
    # joint velocities map to the motion's twist through the Jacobian
    _, twist, _ = m.sample(rep.t[1:-1])
    np.testing.assert_allclose(np.einsum("nij,nj->ni", rd.jacobian(puma, rep.q[1:-1]), rep.qd[1:-1]), twist, atol=1e-8)


def test_bad_orientation_name():
    with pytest.raises(InputError, match="orientation: expected one of axis, euler, rpy"):
        tr.cartesian_motion(np.eye(4), np.eye(4), duration=1.0, orientation="quaternion")
