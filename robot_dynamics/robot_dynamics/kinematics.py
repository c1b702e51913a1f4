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

from . import engine
from ._batch import as_batch, kernel_array
from .errors import InputError, SingularityError
from .model.robot_model import RobotModel
from .spatial import log_so3

__all__ = [
    "spatial_motion",
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


def _states(model: RobotModel, q: ArrayLike, qd: ArrayLike | None = None, *, need_qd: bool = False) -> tuple[Array, Array | None, tuple[int, ...]]:
    qf, b1 = as_batch(q, model.nq, "q", model.joint_names)
    if qd is None:
        if need_qd:
            raise InputError(f"qd: expected {model.nq} joint velocities, got None")
        return kernel_array(qf), None, b1
    qdf, b2 = as_batch(qd, model.nq, "qd", model.joint_names)
    if b1 != b2:
        raise InputError(f"q and qd must have the same batch shape, got {b1} and {b2}")
    return kernel_array(qf), kernel_array(qdf), b1


def spatial_motion(
    model: RobotModel, q: Array, qd: Array, qdd: Array, gravity: Array
) -> tuple[Array, Array, Array, Array]:
    """The forward recursion of the core (Khalil [7.43]-[7.45]) for N states, for algorithms
    built on it (the regressor).

    Args:
        q, qd, qdd: independent joint positions, velocities, accelerations, (N, nq), validated.
        gravity: (3,); it enters as the base acceleration [0; -g].

    Returns:
        E: body_R_parent (N, nb, 3, 3); r: body origins in parent coordinates (N, nb, 3);
        v, a: body velocities and accelerations, body coordinates, [angular; linear], (N, nb, 6).
    """
    N, nb = q.shape[0], model.nb
    E, r, v, a = engine.motion(model, q, qd, qdd, gravity)
    return E.reshape(N, nb, 3, 3), r, v[:, :nb], a[:, :nb]


def body_poses(model: RobotModel, q: ArrayLike) -> Array:
    """Poses of the moving bodies, T_base_body, shape (..., nb, 4, 4)."""
    qf, _, batch = _states(model, q)
    frames = np.array([model.frame_names.index(b) for b in model.body_names], dtype=np.int64)
    return _poses(model, qf, frames).reshape(batch + (model.nb, 4, 4))


def _poses(model: RobotModel, qf: Array, frames: NDArray[np.int64]) -> Array:
    return engine.frame_poses(model, qf, frames)


def frame_poses(model: RobotModel, q: ArrayLike) -> Array:
    """Poses of every frame (every URDF link), T_base_frame, shape (..., nf, 4, 4)."""
    qf, _, batch = _states(model, q)
    nf = len(model.frame_names)
    return _poses(model, qf, np.arange(nf, dtype=np.int64)).reshape(batch + (nf, 4, 4))


def frame_pose(model: RobotModel, q: ArrayLike, frame: str | None = None) -> Array:
    """Pose T_base_frame of one frame (default: the end effector), shape (..., 4, 4)."""
    k = model.frame_index(frame or model.end_effector)
    qf, _, batch = _states(model, q)
    return _poses(model, qf, np.array([k], dtype=np.int64)).reshape(batch + (4, 4))


def jacobian(model: RobotModel, q: ArrayLike, frame: str | None = None) -> Array:
    """Geometric Jacobian of a frame, ``[v; w] = J qd``, shape (..., 6, nq).

    Rows are [linear; angular] in base-frame axes; the linear part is the velocity of the
    frame's origin. Columns follow ``model.joint_names`` (mimic joints folded in).
    """
    k = model.frame_index(frame or model.end_effector)
    qf, _, batch = _states(model, q)
    return engine.jacobian(model, qf, k).reshape(batch + (6, model.nq))


def _point_motion(model: RobotModel, q: ArrayLike, qd: ArrayLike, frame: str | None) -> tuple[Array, Array, tuple[int, ...]]:
    """Twist [v; w] of a frame's origin and its acceleration at qdd = 0 without gravity, (N, 6) each."""
    k = model.frame_index(frame or model.end_effector)
    qf, qdf, batch = _states(model, q, qd, need_qd=True)
    vel, acc = engine.point_motion(model, qf, qdf, k)
    if not (np.all(np.isfinite(vel)) and np.all(np.isfinite(acc))):
        raise InputError("frame motion: the result is not finite: the velocities are too large for double precision")
    return vel, acc, batch


def frame_velocity(model: RobotModel, q: ArrayLike, qd: ArrayLike, frame: str | None = None) -> Array:
    """Twist [v; w] of a frame's origin in base axes, shape (..., 6); equals J qd."""
    vel, _, batch = _point_motion(model, q, qd, frame)
    return vel.reshape(batch + (6,))


def jacobian_dot_qdot(model: RobotModel, q: ArrayLike, qd: ArrayLike, frame: str | None = None) -> Array:
    """``Jdot qd``: the frame origin's acceleration [a; alpha] at qdd = 0, base axes, (..., 6).

    So that the classical acceleration is ``J qdd + Jdot qd`` (Khalil [9.33]).
    """
    _, acc, batch = _point_motion(model, q, qd, frame)
    return acc.reshape(batch + (6,))


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
