"""Kinematics: joint transforms, forward kinematics of every frame, Jacobians, IK.

All functions accept leading batch dimensions: ``q`` of shape (..., nq). Poses are 4x4
homogeneous transforms T_base_frame; Jacobians are geometric, ``[linear; angular]`` rows
(shape (..., 6, nq)), expressed in the base frame at the frame's origin (Khalil's J_n
projected in frame 0; Pinocchio's LOCAL_WORLD_ALIGNED).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._batch import as_batch
from .errors import InputError, SingularityError
from .model.robot_model import RobotModel
from .spatial import (
    cross,
    homogeneous,
    log_so3,
)

__all__ = [
    "body_coordinates",
    "joint_transforms",
    "spatial_motion",
    "transform_coefficients",
    "joint_plucker",
    "apply_basis",
    "forward_recursion",
    "body_poses",
    "frame_poses",
    "frame_pose",
    "jacobian",
    "frame_velocity",
    "jacobian_dot_qdot",
    "IKResult",
    "inverse_kinematics",
]

Array = NDArray[np.float64]


def body_coordinates(model: RobotModel, q: Array) -> Array:
    """Body joint coordinates from independent ones (mimic joints): (N, nq) -> (N, nb)."""
    if not model.has_mimic:
        return q
    return q @ model.mimic_matrix.T + model.mimic_offset


def joint_transforms(model: RobotModel, qb: Array) -> tuple[Array, Array]:
    """Plücker transforms parent -> body for every body.

    Args:
        qb: body joint coordinates, (N, nb).

    Returns:
        E: body_R_parent, (N, nb, 3, 3); r: body origin in parent coordinates, (N, nb, 3).
    """
    N = qb.shape[0]
    # Revolute: child = joint frame rotated by q about the axis, so E = R(axis, q)^T E_tree,
    # in closed form (Rodrigues) from per-model constants: c E_tree - s [a]x E_tree + (1 - c) a a^T E_tree.
    qr = np.where(model.is_prismatic, 0.0, qb)[..., None, None]
    c, s = np.cos(qr), np.sin(qr)
    E = c * model.E_tree - s * model.axis_skew_E_tree + (1.0 - c) * model.axis_outer_E_tree
    r = np.broadcast_to(model.r_tree, (N, model.nb, 3))
    if np.any(model.is_prismatic):
        r = r.copy()
        pr = model.is_prismatic
        # Prismatic: the origin slides by q along the axis, expressed in parent coordinates.
        axis_parent = (np.swapaxes(model.E_tree[pr], -1, -2) @ model.axis[pr][..., None])[..., 0]
        r[:, pr] += axis_parent * qb[:, pr, None]
    return E, r


def transform_coefficients(model: RobotModel, qb: Array) -> tuple[Array, Array]:
    """Per-sample numbers of the joint transforms X_i = P0 + alpha Q + beta P1.

    Revolute: alpha = cos q - 1, beta = -sin q; prismatic: alpha = q, beta = 0 (the constant
    matrices are ``model.X_parts``).

    Args:
        qb: body joint coordinates, (N, nb).

    Returns:
        alpha, beta: (N, nb) each.
    """
    pr = model.is_prismatic
    alpha = np.where(pr, qb, np.cos(qb) - 1.0)
    beta = np.where(pr, 0.0, -np.sin(qb))
    return alpha, beta


def joint_plucker(model: RobotModel, qb: Array) -> Array:
    """6x6 motion transforms parent -> body of every body, (N, nb, 6, 6)."""
    alpha, beta = transform_coefficients(model, qb)
    P0, Q, P1 = model.X_parts[:, 0], model.X_parts[:, 1], model.X_parts[:, 2]
    return P0 + alpha[..., None, None] * Q + beta[..., None, None] * P1


def apply_basis(rows: Array, m: Array, alpha: Array, beta: Array) -> Array:
    """Apply X (``rows = model.X_rows[i]``) or X^T (``model.XT_rows[i]``) to batch-last vectors.

    One small GEMM then two scaled additions on contiguous rows:
    ``Y = rows @ m``, ``Y[:6] + alpha Y[6:12] + beta Y[12:]``.

    Args:
        rows: (18, 6). m: (..., 6, N). alpha, beta: (N,).
    """
    Y = rows @ m
    if Y.shape[-1] != alpha.shape[-1]:  # one vector for the whole batch (the base acceleration)
        return Y[..., :6, :] + alpha * Y[..., 6:12, :] + beta * Y[..., 12:, :]
    # in place on the one (..., 18, N) buffer: fewer temporaries, less allocator traffic
    Ya, Yb = Y[..., 6:12, :], Y[..., 12:, :]
    Ya *= alpha
    Yb *= beta
    Ya += Yb
    out = Y[..., :6, :]
    out += Ya
    return out


def forward_recursion(
    model: RobotModel,
    qdb: Array,
    qddb: Array | None,
    base_acceleration: Array | None,
    alpha: Array,
    beta: Array,
) -> tuple[Array, Array | None]:
    """Body velocities and accelerations in the batch-last layout of the recursions.

    ``v_i = X_i v_p + S_i qd_i``; ``a_i = X_i a_p + S_i qdd_i + v_i x S_i qd_i`` (Khalil
    [7.43]-[7.45]), in body coordinates, Featherstone order [angular; linear]; gravity enters as
    the base acceleration ``a_0 = [0; -g]`` (Featherstone's trick, Khalil's dV_0 = -g).

    Args:
        qdb: body joint velocities, (N, nb); qddb: accelerations (N, nb) or None.
        base_acceleration: (6,) or None for 0.
        alpha, beta: from :func:`transform_coefficients`, transposed to (nb, N).

    Returns:
        v, a: (nb, 6, N) each (a is None without qddb).
    """
    N, nb = qdb.shape
    S = model.S
    qdT = np.ascontiguousarray(qdb.T)
    qddT = None if qddb is None else np.ascontiguousarray(qddb.T)
    v = np.empty((nb, 6, N))
    a = np.empty((nb, 6, N)) if qddT is not None else None
    for i in range(nb):
        p = model.parent[i]
        vJ = S[i][:, None] * qdT[i]
        if a is None:
            v[i] = vJ if p < 0 else apply_basis(model.X_rows[i], v[p], alpha[i], beta[i]) + vJ
            continue
        aJ = S[i][:, None] * qddT[i]  # type: ignore[index]
        if p >= 0:
            # the parent's v and a through the same transform, in one GEMM
            va = apply_basis(model.X_rows[i], np.stack((v[p], a[p])), alpha[i], beta[i])
            v[i] = va[0] + vJ
            a[i] = va[1] + aJ + (model.S_cross[i] @ v[i]) * qdT[i]  # + v_i x S_i qd_i
        else:
            v[i] = vJ
            a[i] = aJ  # v_i = vJ here, and vJ x vJ = 0
            if base_acceleration is not None:
                a[i] += apply_basis(model.X_rows[i], base_acceleration[:, None], alpha[i], beta[i])
    return v, a


def spatial_motion(
    model: RobotModel,
    qb: Array,
    qdb: Array,
    qddb: Array | None,
    base_acceleration: Array | None,
) -> tuple[Array, Array, Array, Array | None]:
    """Forward recursion of body velocities and accelerations (:func:`forward_recursion`),
    with the joint transforms, in the (N, nb, ...) layout.

    Args:
        qb, qdb: body coordinates and velocities, (N, nb).
        qddb: body accelerations, (N, nb), or None to skip accelerations.
        base_acceleration: spatial acceleration of the base, (6,), or None for 0.

    Returns:
        (E, r, v, a): transforms (N, nb, 3, 3), (N, nb, 3); velocities (N, nb, 6);
        accelerations (N, nb, 6) or None (views of batch-last arrays).
    """
    E, r = joint_transforms(model, qb)
    alpha, beta = transform_coefficients(model, qb)
    v, a = forward_recursion(model, qdb, qddb, base_acceleration, np.ascontiguousarray(alpha.T), np.ascontiguousarray(beta.T))
    return E, r, v.transpose(2, 0, 1), (a.transpose(2, 0, 1) if a is not None else None)


def _poses_from_transforms(model: RobotModel, E: Array, r: Array) -> Array:
    """T_base_body for every body from the parent -> body transforms, (N, nb, 4, 4)."""
    N = E.shape[0]
    T_local = homogeneous(np.swapaxes(E, -1, -2), r)  # T_parent_body
    T = np.empty((N, model.nb, 4, 4))
    for i in range(model.nb):
        p = model.parent[i]
        T[:, i] = T_local[:, i] if p < 0 else T[:, p] @ T_local[:, i]
    return T


def body_poses(model: RobotModel, q: ArrayLike) -> Array:
    """Poses of the moving bodies, T_base_body, shape (..., nb, 4, 4)."""
    qf, batch = as_batch(q, model.nq, "q", model.joint_names)
    E, r = joint_transforms(model, body_coordinates(model, qf))
    return _poses_from_transforms(model, E, r).reshape(batch + (model.nb, 4, 4))


def _frame_poses_flat(model: RobotModel, qf: Array) -> tuple[Array, Array]:
    E, r = joint_transforms(model, body_coordinates(model, qf))
    Tb = _poses_from_transforms(model, E, r)
    N = qf.shape[0]
    # Base frame (body -1) gets the identity.
    Tb_ext = np.concatenate([Tb, np.broadcast_to(np.eye(4), (N, 1, 4, 4))], axis=1)
    T = Tb_ext[:, model.frame_body] @ model.frame_placement
    return T, Tb


def frame_poses(model: RobotModel, q: ArrayLike) -> Array:
    """Poses of every frame (every URDF link), T_base_frame, shape (..., nf, 4, 4)."""
    qf, batch = as_batch(q, model.nq, "q", model.joint_names)
    T, _ = _frame_poses_flat(model, qf)
    return T.reshape(batch + (len(model.frame_names), 4, 4))


def frame_pose(model: RobotModel, q: ArrayLike, frame: str | None = None) -> Array:
    """Pose T_base_frame of one frame (default: the end effector), shape (..., 4, 4)."""
    k = model.frame_index(frame or model.end_effector)
    qf, batch = as_batch(q, model.nq, "q", model.joint_names)
    T, _ = _frame_poses_flat(model, qf)
    return T[:, k].reshape(batch + (4, 4))


def _ancestors(model: RobotModel, body: int) -> list[int]:
    chain = []
    while body >= 0:
        chain.append(body)
        body = int(model.parent[body])
    return chain


def jacobian(model: RobotModel, q: ArrayLike, frame: str | None = None) -> Array:
    """Geometric Jacobian of a frame, ``[v; w] = J qd``, shape (..., 6, nq).

    Rows are [linear; angular] in base-frame axes; the linear part is the velocity of the
    frame's origin. Columns follow ``model.joint_names`` (mimic joints folded in).
    """
    k = model.frame_index(frame or model.end_effector)
    qf, batch = as_batch(q, model.nq, "q", model.joint_names)
    T, Tb = _frame_poses_flat(model, qf)
    p = T[:, k, :3, 3]
    Jb = np.zeros((qf.shape[0], 6, model.nb))
    for j in _ancestors(model, int(model.frame_body[k])):
        z = Tb[:, j, :3, :3] @ model.axis[j]
        if model.is_prismatic[j]:
            Jb[:, :3, j] = z
        else:
            Jb[:, :3, j] = cross(z, p - Tb[:, j, :3, 3])
            Jb[:, 3:, j] = z
    J = Jb @ model.mimic_matrix if model.has_mimic else Jb
    return J.reshape(batch + (6, model.nq))


def _point_motion(
    model: RobotModel, qf: Array, qdf: Array, k: int, with_acceleration: bool
) -> tuple[Array, Array | None]:
    """Classical velocity [v; w] and (qdd = 0, no gravity) acceleration of frame k's origin."""
    N = qf.shape[0]
    body = int(model.frame_body[k])
    if body < 0:
        return np.zeros((N, 6)), (np.zeros((N, 6)) if with_acceleration else None)
    qb, qdb = body_coordinates(model, qf), qdf @ model.mimic_matrix.T if model.has_mimic else qdf
    zeros = np.zeros_like(qb) if with_acceleration else None
    E, r, v, a = spatial_motion(model, qb, qdb, zeros, None)
    Tb = _poses_from_transforms(model, E, r)
    R = Tb[:, body, :3, :3]
    pb = model.frame_placement[k, :3, 3]  # frame origin in body coordinates
    w, vo = v[:, body, :3], v[:, body, 3:]
    vp = vo + cross(w, pb)  # velocity of the point (spatial shift)
    vel = np.concatenate([(R @ vp[..., None])[..., 0], (R @ w[..., None])[..., 0]], -1)
    if a is None:
        return vel, None
    alpha, ao = a[:, body, :3], a[:, body, 3:]
    # classical acceleration of a body-fixed point: spatial accel shifted to it, plus w x v_p
    acc_p = ao + cross(alpha, pb) + cross(w, vp)
    acc = np.concatenate([(R @ acc_p[..., None])[..., 0], (R @ alpha[..., None])[..., 0]], -1)
    return vel, acc


def frame_velocity(model: RobotModel, q: ArrayLike, qd: ArrayLike, frame: str | None = None) -> Array:
    """Twist [v; w] of a frame's origin in base axes, shape (..., 6); equals J qd."""
    k = model.frame_index(frame or model.end_effector)
    qf, b1 = as_batch(q, model.nq, "q", model.joint_names)
    qdf, b2 = as_batch(qd, model.nq, "qd", model.joint_names)
    if b1 != b2:
        raise InputError(f"q and qd must have the same batch shape, got {b1} and {b2}")
    vel, _ = _point_motion(model, qf, qdf, k, False)
    return vel.reshape(b1 + (6,))


def jacobian_dot_qdot(model: RobotModel, q: ArrayLike, qd: ArrayLike, frame: str | None = None) -> Array:
    """``Jdot qd``: the frame origin's acceleration [a; alpha] at qdd = 0, base axes, (..., 6).

    So that the classical acceleration is ``J qdd + Jdot qd`` (Khalil [9.33]).
    """
    k = model.frame_index(frame or model.end_effector)
    qf, b1 = as_batch(q, model.nq, "q", model.joint_names)
    qdf, b2 = as_batch(qd, model.nq, "qd", model.joint_names)
    if b1 != b2:
        raise InputError(f"q and qd must have the same batch shape, got {b1} and {b2}")
    _, acc = _point_motion(model, qf, qdf, k, True)
    assert acc is not None
    return acc.reshape(b1 + (6,))


class IKResult(NamedTuple):
    """Result of :func:`inverse_kinematics`.

    Attributes:
        q: joint positions, (nq,).
        success: True when the pose error is within tolerance.
        position_error: [m]; orientation_error: [rad] at ``q``.
        iterations: iterations used.
    """

    q: Array
    success: bool
    position_error: float
    orientation_error: float
    iterations: int


def inverse_kinematics(
    model: RobotModel,
    target: ArrayLike,
    frame: str | None = None,
    q0: ArrayLike | None = None,
    *,
    position_only: bool = False,
    damping: float = 1e-3,
    tolerance: float = 1e-10,
    max_iterations: int = 200,
    respect_limits: bool = True,
    raise_on_failure: bool = False,
) -> IKResult:
    """Damped least squares inverse kinematics of one frame (Levenberg-Marquardt steps).

    Iterates ``dq = J^T (J J^T + lambda^2 I)^-1 e`` with e = [p* - p; log(R* R^T)] in base axes,
    clamping to the joint limits.

    Args:
        target: T_base_frame wanted, (4, 4); or a position (3,) with ``position_only``.
        frame: frame name (default: the end effector).
        q0: initial guess (nq,); default the middle of the limits (0 when unlimited).
        position_only: solve the position only.
        damping: lambda [m]; larger is more robust near singularities, slower to converge.
        tolerance: stop when the error norm is below this.
        raise_on_failure: raise SingularityError instead of returning ``success=False``.
    """
    fname = frame or model.end_effector
    model.frame_index(fname)
    tgt = np.asarray(target, dtype=float)
    if position_only and tgt.shape == (3,):
        p_star, R_star = tgt, None
    elif tgt.shape == (4, 4):
        p_star, R_star = tgt[:3, 3], (None if position_only else tgt[:3, :3])
    else:
        raise InputError(f"target: expected a (4, 4) pose (or a (3,) position with position_only), got {tgt.shape}")
    if not np.all(np.isfinite(tgt)):
        raise InputError("target: contains NaN or infinite values")
    lo = np.where(np.isfinite(model.lower), model.lower, -np.inf)
    hi = np.where(np.isfinite(model.upper), model.upper, np.inf)
    if q0 is None:
        q = np.where(np.isfinite(lo) & np.isfinite(hi), 0.5 * (lo + hi), 0.0)
    else:
        q = as_batch(q0, model.nq, "q0", model.joint_names)[0][0].copy()
    rows = slice(0, 3) if R_star is None else slice(0, 6)
    err = np.inf
    it = 0
    for it in range(1, max_iterations + 1):
        T = frame_pose(model, q, fname)
        e = np.zeros(6)
        e[:3] = p_star - T[:3, 3]
        if R_star is not None:
            e[3:] = log_so3(R_star @ T[:3, :3].T)
        e = e[rows]
        err = float(np.linalg.norm(e))
        if err < tolerance:
            break
        J = jacobian(model, q, fname)[rows]
        dq = J.T @ np.linalg.solve(J @ J.T + damping**2 * np.eye(J.shape[0]), e)
        q = q + dq
        if respect_limits:
            q = np.clip(q, lo, hi)
    T = frame_pose(model, q, fname)
    pos_err = float(np.linalg.norm(p_star - T[:3, 3]))
    rot_err = 0.0 if R_star is None else float(np.linalg.norm(log_so3(R_star @ T[:3, :3].T)))
    ok = np.hypot(pos_err, rot_err) < max(tolerance * 10, 1e-9)
    if not ok and raise_on_failure:
        raise SingularityError(
            f"Inverse kinematics of {fname!r} did not converge in {it} iterations: position error "
            f"{pos_err:.3g} m, orientation error {rot_err:.3g} rad (target unreachable or singular)"
        )
    return IKResult(q, bool(ok), pos_err, rot_err, it)
