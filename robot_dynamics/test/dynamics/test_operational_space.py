"""One frame's task space (the engine's rd_task_space): the Jacobian and Jdot qd in base and frame
axes, the task inertia Lambda, the dynamically consistent inverse J_bar and the null-space projector
N, against Pinocchio on the same URDF (joints matched by name), against finite differences, the
engine's former kinematics batches and the identities that define them."""

from __future__ import annotations

import sysconfig
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import random_state
from peer import Peer, relative_error, require_pinocchio

import robot_dynamics as rd
from robot_dynamics import engine
from robot_dynamics.errors import InputError, SingularityError, UnknownNameError

N_STATES = 20
TOL = 1e-10
#: The task rows of each bundled robot's end effector that its joints span (None: all six).
ROWS = {"iiwa14": None, "puma560": None, "rx90": None, "planar2": (0, 2), "three_dof_geared": (0, 1, 3)}
#: ... in the frame's own axes, where they differ (three_dof_geared: joints 2 and 3 turn about its y).
LOCAL_ROWS = {**ROWS, "three_dof_geared": (0, 1, 4)}
REFERENCES = (("local_world_aligned", "LOCAL_WORLD_ALIGNED"), ("local", "LOCAL"))


def _peer_model(model: rd.RobotModel) -> tuple[rd.RobotModel, Peer]:
    """The model and its Pinocchio peer: a geared robot on its virtual chain (Pinocchio has no gear
    coupling: the gears lumped into their carriers; the same kinematics)."""
    if model.drivetrain is not None:
        from robot_dynamics.drivetrain import virtual_chain_model, virtual_chain_urdf

        text = virtual_chain_urdf(model)
        chain = virtual_chain_model(model)
        return chain, Peer(chain, text)
    return model, Peer(model)


def _pinocchio_task(peer: Peer, q: np.ndarray, qd: np.ndarray, frame: str, reference: str) -> tuple[np.ndarray, ...]:
    """Pinocchio's J (computeFrameJacobian), Jdot qd (getFrameClassicalAcceleration after
    forwardKinematics(q, qd, 0)) and A^-1 (computeMinverse) in our joint order."""
    import pinocchio as pin

    ref = getattr(pin, reference)
    fid = peer.pm.getFrameId(frame)
    qp, vp = peer.q(q), peer.v(qd)
    J = pin.computeFrameJacobian(peer.pm, peer.pd, qp, fid, ref)[:, peer.iv].copy()
    pin.forwardKinematics(peer.pm, peer.pd, qp, vp, np.zeros_like(vp))
    a = pin.getFrameClassicalAcceleration(peer.pm, peer.pd, fid, ref)
    Minv = pin.computeMinverse(peer.pm, peer.pd, qp).copy()
    Minv = (np.triu(Minv) + np.triu(Minv, 1).T)[np.ix_(peer.iv, peer.iv)]  # Pinocchio fills the upper triangle
    return J, np.concatenate([a.linear, a.angular]), Minv


def _compare_with_pinocchio(model: rd.RobotModel, peer: Peer, frame: str, rows_of, rng: np.random.Generator, n: int) -> float:
    """The largest relative error of J, Jdot qd and Lambda (of the task rows rows_of[0] in base axes,
    rows_of[1] in the frame's; rows_of None: no Lambda) over n states."""
    q, qd, _ = random_state(model, rng, (n,))
    worst = 0.0
    for (ours, theirs), rows in zip(REFERENCES, rows_of or (None, None)):
        r = list(range(6)) if rows is None else list(rows)
        J = rd.jacobian(model, q, frame, reference=ours)
        bias = rd.jacobian_dot_qdot(model, q, qd, frame, reference=ours)
        Lambda = rd.task_inertia(model, q, frame, reference=ours, rows=rows) if rows_of else None
        for k in range(n):
            Jp, bp, Minv = _pinocchio_task(peer, q[k], qd[k], frame, theirs)
            errors = [relative_error(J[k], Jp), relative_error(bias[k], bp)]
            if Lambda is not None:
                Lp = np.linalg.inv(Jp[r] @ Minv @ Jp[r].T)
                # Lambda's rounding grows with its condition number, on either side: relative to it
                errors.append(relative_error(Lambda[k], Lp) / max(1.0, np.linalg.cond(Lp) * 1e-4))
            assert max(errors) < TOL, (theirs, k, errors)
            worst = max(worst, *errors)
    return worst


def test_bundled_robots_agree_with_pinocchio(bundled):
    model, peer = _peer_model(bundled)
    frames = (model.end_effector, model.frame_names[len(model.frame_names) // 2])
    rng = np.random.default_rng(11)
    for frame in frames:
        if model.frame_body[model.frame_index(frame)] < 0:
            continue
        rows = (ROWS[bundled.name], LOCAL_ROWS[bundled.name]) if frame == model.end_effector else None
        _compare_with_pinocchio(model, peer, frame, rows, rng, N_STATES)


def test_random_trees_agree_with_pinocchio(random_tree):
    """Branches, prismatic and continuous joints, oblique axes: the position rows of the deepest frame."""
    rng = np.random.default_rng(12)
    _compare_with_pinocchio(random_tree, Peer(random_tree), random_tree.end_effector, ((0, 1, 2),) * 2, rng, 10)


def _robots_folder() -> Path | None:
    """example-robot-data's robots/ (the PyPI wheel's cmeel prefix), or None."""
    folder = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
    return folder if folder.is_dir() else None


#: Arms of example-robot-data whose coordinates are Pinocchio's too (no continuous or mimic joint).
EXAMPLE_ARMS = ["ur_description/urdf/ur5_robot.urdf", "ur_description/urdf/ur10_robot.urdf",
                "xarm_description/urdf/xarm7.urdf", "so_arm_description/urdf/so100.urdf"]


@pytest.mark.parametrize("relative", EXAMPLE_ARMS)
def test_example_robot_data_arms_agree_with_pinocchio(relative):
    require_pinocchio()
    folder = _robots_folder()
    assert folder is not None, "example-robot-data is a test dependency: pip install example-robot-data"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = rd.load_urdf(folder / relative)
    peer = Peer(model)
    assert peer.pm.nq == model.nq  # the same coordinates
    _compare_with_pinocchio(model, peer, model.end_effector, (None, None), np.random.default_rng(13), 10)


def test_the_engine_batches_of_before_give_the_same_bits(bundled, rng):
    """Base axes: the Jacobian, the pose and the twist and Jdot qd are rd_jacobian's, rd_frame_pose's and
    rd_point_motion's (the batches the kinematics called before), bit for bit."""
    q, qd, _ = random_state(bundled, rng, (6,))
    for frame in bundled.frame_names:
        k = bundled.frame_index(frame)
        vel, acc = engine.point_motion(bundled, q, qd, k)
        np.testing.assert_array_equal(rd.jacobian(bundled, q, frame), engine.jacobian(bundled, q, k))
        np.testing.assert_array_equal(rd.frame_pose(bundled, q, frame), engine.frame_poses(bundled, q, np.array([k]))[:, 0])
        np.testing.assert_array_equal(rd.frame_velocity(bundled, q, qd, frame), vel)
        np.testing.assert_array_equal(rd.jacobian_dot_qdot(bundled, q, qd, frame), acc)


def test_frame_axes_are_the_base_axes_rotated(bundled, rng):
    q, qd, _ = random_state(bundled, rng, (5,))
    frame = bundled.end_effector
    R = rd.frame_pose(bundled, q, frame)[..., :3, :3]
    Rt = np.zeros((5, 6, 6))
    Rt[:, :3, :3] = Rt[:, 3:, 3:] = np.swapaxes(R, -1, -2)
    for f in (rd.jacobian, rd.frame_velocity, rd.jacobian_dot_qdot):
        args = (bundled, q) if f is rd.jacobian else (bundled, q, qd)
        base, local = f(*args, frame), f(*args, frame, reference="local")
        np.testing.assert_allclose(local, Rt @ base if base.ndim == 3 else (Rt @ base[..., None])[..., 0], atol=1e-13)
    rows = ROWS[bundled.name]
    r = list(range(6)) if rows is None else list(rows)
    L_base = rd.task_inertia(bundled, q, frame, rows=rows)
    L_local = rd.task_inertia(bundled, q, frame, rows=LOCAL_ROWS[bundled.name], reference="local")
    for k in range(5):  # the force in frame axes is R^T times the one in base axes: Lambda_local = R^T Lambda R
        if rows is None:
            np.testing.assert_allclose(L_local[k], Rt[k] @ L_base[k] @ Rt[k].T, rtol=1e-10, atol=1e-10 * np.abs(L_base[k]).max())
    if rows is None:  # all six rows: the same projector in either axes
        np.testing.assert_allclose(rd.null_space_projector(bundled, q, frame),
                                   rd.operational_space(bundled, q, frame, reference="local").N, atol=1e-10)
    assert len(r) == L_base.shape[-1] == L_local.shape[-1]


def _derivative(f, h: float) -> np.ndarray:
    """d/dt f(t) at 0 by the fourth-order central difference (error O(h^4))."""
    return (-f(2 * h) + 8 * f(h) - 8 * f(-h) + f(-2 * h)) / (12 * h)


def test_jdot_qd_is_the_derivative_of_the_twist_along_the_motion(bundled, random_tree, rng):
    """Jdot qd = d/dt (J(q + t qd) qd) at t = 0 (qdd = 0), base axes: the classical acceleration of
    the frame's origin and the frame's angular acceleration."""
    for model in (bundled, random_tree):
        q, qd, _ = random_state(model, rng)
        for frame in (model.end_effector, model.frame_names[1]):
            expected = _derivative(lambda t: rd.jacobian(model, q + t * qd, frame) @ qd, 1e-3)
            got = rd.jacobian_dot_qdot(model, q, qd, frame)
            assert relative_error(got, expected) < 1e-9, (frame, got, expected)
            # in frame axes: R^T (J qdd + Jdot qd), and the same derivative of the base-axes twist
            R = rd.frame_pose(model, q, frame)[:3, :3]
            local = rd.jacobian_dot_qdot(model, q, qd, frame, reference="local")
            assert relative_error(local, np.concatenate([R.T @ expected[:3], R.T @ expected[3:]])) < 1e-9


def test_the_identities_of_the_operational_space(bundled, random_tree, rng):
    """J A^-1 J^T Lambda = 1, J J_bar = 1, J_bar = A^-1 J^T Lambda, N N = N, J A^-1 N = 0 (no null-space
    torque accelerates the task: dynamic consistency) and J N^T = 0."""
    for model, rows in ((bundled, ROWS[bundled.name]), (random_tree, (0, 1, 2))):
        q, _, _ = random_state(model, rng, (8,))
        J, Lambda, J_bar, N = rd.operational_space(model, q, rows=rows)
        A = rd.crba(model, q)
        AiJt = np.linalg.solve(A, np.swapaxes(J, -1, -2))
        r = J.shape[-2]
        eye_r, eye_n = np.eye(r), np.eye(model.nq)
        scale = np.abs(J).max(axis=(-1, -2))[:, None, None]
        np.testing.assert_allclose(J @ AiJt @ Lambda, np.broadcast_to(eye_r, Lambda.shape), atol=TOL)
        np.testing.assert_allclose(J @ J_bar, np.broadcast_to(eye_r, Lambda.shape), atol=TOL)
        np.testing.assert_allclose(J_bar, AiJt @ Lambda, rtol=TOL, atol=TOL * np.abs(J_bar).max())
        np.testing.assert_allclose(N @ N, N, atol=TOL)
        np.testing.assert_allclose(N, eye_n - np.swapaxes(J, -1, -2) @ np.swapaxes(J_bar, -1, -2), atol=1e-14)
        JAi = np.swapaxes(AiJt, -1, -2)  # J A^-1
        assert np.abs(JAi @ N).max() < TOL * np.abs(JAi).max()
        assert np.abs(J @ np.swapaxes(N, -1, -2)).max() < TOL * scale.max()
        assert np.all(np.abs(np.trace(N, axis1=-2, axis2=-1) - (model.nq - r)) < 1e-10)  # a projector of rank nq - r
        np.testing.assert_array_equal(Lambda, np.swapaxes(Lambda, -1, -2))  # symmetric by construction
        assert np.all(np.linalg.eigvalsh(Lambda) > 0)


def test_one_state_batch_and_loop_agree_bit_for_bit(rng):
    model = rd.load_robot("iiwa14")
    q, _, _ = random_state(model, rng, (3, 4))
    whole = rd.operational_space(model, q, rows=(0, 1, 2, 5))
    assert whole.J.shape == (3, 4, 4, 7) and whole.Lambda.shape == (3, 4, 4, 4)
    assert whole.J_bar.shape == (3, 4, 7, 4) and whole.N.shape == (3, 4, 7, 7)
    for i in range(3):
        for j in range(4):
            one = rd.operational_space(model, q[i, j], rows=(0, 1, 2, 5))
            for a, b in zip(one, whole):
                np.testing.assert_array_equal(a, b[i, j])
    np.testing.assert_array_equal(rd.task_inertia(model, q, rows=(0, 1, 2, 5)), whole.Lambda)
    np.testing.assert_array_equal(rd.dynamically_consistent_inverse(model, q, rows=(0, 1, 2, 5)), whole.J_bar)
    np.testing.assert_array_equal(rd.null_space_projector(model, q, rows=(0, 1, 2, 5)), whole.N)
    # a list of lists takes the general path: the same numbers
    np.testing.assert_array_equal(rd.task_inertia(model, q[0].tolist()), rd.task_inertia(model, q[0]))


def test_rows_in_any_order_are_the_rows_permuted(rng):
    model = rd.load_robot("iiwa14")
    q, _, _ = random_state(model, rng)
    full = rd.operational_space(model, q)
    order = [5, 2, 0, 3]
    some = rd.operational_space(model, q, rows=order)
    np.testing.assert_array_equal(some.J, full.J[order])
    ascending = rd.operational_space(model, q, rows=sorted(order))
    back = [sorted(order).index(i) for i in order]
    np.testing.assert_array_equal(some.Lambda, ascending.Lambda[np.ix_(back, back)])
    np.testing.assert_array_equal(some.J_bar, ascending.J_bar[:, back])
    np.testing.assert_array_equal(some.N, ascending.N)
    # the position rows' task inertia is the inverse of the Schur block, not a block of the full one
    Ai = np.linalg.inv(rd.crba(model, q))
    Jp = full.J[:3]
    np.testing.assert_allclose(rd.task_inertia(model, q, rows=(0, 1, 2)), np.linalg.inv(Jp @ Ai @ Jp.T), rtol=1e-11)


def test_a_singular_pose_raises_and_the_damped_variant_stays_bounded():
    puma = rd.load_robot("puma560")
    q = np.zeros(6)  # the wrist aligned: joints 4 and 6 turn about one axis
    with pytest.raises(SingularityError, match="task_inertia: the task rows are dependent"):
        rd.task_inertia(puma, q)
    with pytest.raises(SingularityError, match="operational_space: the task rows are dependent"):
        rd.operational_space(puma, np.stack([q + 0.3, q]))
    J = rd.jacobian(puma, q)
    Ai = np.linalg.inv(rd.crba(puma, q))
    for lam in (1e-3, 0.1, 1.0):
        Lambda = rd.task_inertia(puma, q, damping=lam)
        np.testing.assert_allclose(Lambda, np.linalg.inv(J @ Ai @ J.T + lam**2 * np.eye(6)), rtol=1e-9,
                                   atol=1e-12 * np.abs(Lambda).max())
        assert np.abs(Lambda).max() <= 1.0 / lam**2 * (1 + 1e-12)  # the smallest eigenvalue is at least lambda^2
    # near the singularity: undamped, Lambda grows without bound; damped, it stays below 1 / lambda^2
    near = np.array([0.0, 0.0, 0.0, 0.0, 1e-7, 0.0])
    assert np.abs(rd.task_inertia(puma, near)).max() > 1e6
    assert np.abs(rd.task_inertia(puma, near, damping=0.1)).max() <= 100.0 * (1 + 1e-12)


def test_a_frame_no_joint_moves_has_no_task_inertia():
    ur = rd.load_robot("iiwa14")
    base = ur.frame_names[0]
    assert ur.frame_body[ur.frame_index(base)] < 0
    assert not rd.jacobian(ur, np.zeros(7), base).any()
    assert not rd.jacobian_dot_qdot(ur, np.zeros(7), np.ones(7), base).any()
    with pytest.raises(SingularityError, match="a frame no joint moves"):
        rd.task_inertia(ur, np.zeros(7), base)


def test_the_geared_robot_uses_its_own_inertia_matrix(rng):
    """A coupled gear train's A(q) (with the gears' spin) is the one Lambda inverts, not the virtual chain's."""
    model = rd.load_robot("three_dof_geared")
    q, _, _ = random_state(model, rng)
    rows = ROWS["three_dof_geared"]
    J = rd.jacobian(model, q)[list(rows)]
    Lambda = rd.task_inertia(model, q, rows=rows)
    np.testing.assert_allclose(Lambda, np.linalg.inv(J @ np.linalg.solve(rd.crba(model, q), J.T)), rtol=1e-11)
    from robot_dynamics.drivetrain import virtual_chain_model

    assert relative_error(rd.task_inertia(virtual_chain_model(model), q, rows=rows), Lambda) > 1e-6


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda m, q: rd.jacobian(m, q, reference="world"), InputError,
         r"reference: expected one of \['local_world_aligned', 'local'\]"),
        (lambda m, q: rd.task_inertia(m, q, rows=(0, 0, 1)), InputError, r"rows: expected distinct task rows among 0..5"),
        (lambda m, q: rd.task_inertia(m, q, rows=(6,)), InputError, r"rows: expected distinct task rows among 0..5"),
        (lambda m, q: rd.task_inertia(m, q, rows=()), InputError, r"rows: expected distinct task rows"),
        (lambda m, q: rd.task_inertia(m, q, damping=-0.1), InputError, r"damping: expected a finite number >= 0"),
        (lambda m, q: rd.null_space_projector(m, q, damping=float("nan")), InputError, r"damping: expected a finite"),
        (lambda m, q: rd.operational_space(m, q[:5]), InputError, r"q: expected shape \(\.\.\., 7\)"),
        (lambda m, q: rd.operational_space(m, np.where(np.arange(7) == 2, np.nan, q)), InputError, r"q: contains NaN"),
        (lambda m, q: rd.task_inertia(m, q, "no_such_link"), UnknownNameError, r"no_such_link"),
        (lambda m, q: rd.jacobian_dot_qdot(m, q, None), InputError, r"qd: expected 7 joint velocities, got None"),
        (lambda m, q: rd.jacobian_dot_qdot(m, q, q[:3]), InputError, r"qd: expected shape \(\.\.\., 7\)"),
        (lambda m, q: rd.jacobian_dot_qdot(m, q, q * 1e200), InputError, r"jacobian_dot_qdot: the result is not finite"),
    ],
)
def test_bad_input_is_named(call, error, message):
    model = rd.load_robot("iiwa14")
    with pytest.raises(error, match=message):
        call(model, np.full(7, 0.3))


def test_the_engine_calls_name_their_arguments():
    model = rd.load_robot("iiwa14")
    e = engine.engine()
    Q = np.zeros((2, 7))
    status = np.zeros(2, dtype=np.int64)
    bad_rows = np.zeros((2, 3, 7))  # rows 0-5 are six, not three
    with pytest.raises(ValueError, match="J: dimension 1 is 3, expected 6"):
        e.task_space_batch(model.engine_model, Q, None, 3, 0, 0, 0.0, None, bad_rows, None, None, None, None, None, status)
    with pytest.raises(ValueError, match="rows: expected task rows as bits 0-5"):
        e.task_space_batch(model.engine_model, Q, None, 3, 0, 64, 0.0, None, None, None, None, None, None, None, status)
    with pytest.raises(ValueError, match="QD: required for VEL and BIAS"):
        e.task_space_batch(model.engine_model, Q, None, 3, 0, 0, 0.0, None, None, np.zeros((2, 6)), None, None, None,
                           None, status)
    with pytest.raises(ValueError, match="frame index 99 out of range"):
        e.task_space_batch(model.engine_model, Q, None, 99, 0, 0, 0.0, None, None, None, None, None, None, None, status)
    J = np.zeros((2, 3, 7))  # rows 0, 1, 5: three
    e.task_space_batch(model.engine_model, Q, None, 8, 0, 0b100011, 0.0, None, J, None, None, None, None, None, status)
    np.testing.assert_array_equal(J, rd.jacobian(model, Q)[:, [0, 1, 5]])
    assert not status.any()
    data = model.engine_model.create_data()
    # a status other than OK, or a state that is not a clean vector, is the general path's to word
    assert e.task_space(model.engine_model, data, np.zeros(7), None, 0, 0, 0, 0.0, 16) is NotImplemented  # the fixed base
    assert e.task_space(model.engine_model, data, [0.0] * 7, None, 8, 0, 0, 0.0, 2) is NotImplemented
    assert e.task_space(model.engine_model, data, np.zeros(7), None, 8, 0, 0, 0.0, 8) is NotImplemented  # bias without qd
    with pytest.raises(ValueError, match="out of range"):
        e.task_space(model.engine_model, data, np.zeros(7), None, 8, 2, 0, 0.0, 2)  # reference 2
    T, J1 = e.task_space(model.engine_model, data, np.zeros(7), None, 8, 1, 0, 0.0, 3)
    np.testing.assert_array_equal(T, rd.frame_pose(model, np.zeros(7), model.frame_names[8]))
    np.testing.assert_array_equal(J1, rd.jacobian(model, np.zeros(7), model.frame_names[8], reference="local"))
