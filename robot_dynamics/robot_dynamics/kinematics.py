"""Kinematics: joint transforms, forward kinematics of every frame, Jacobians, IK.

All functions accept leading batch dimensions: ``q`` of shape (..., nq). Poses are 4x4
homogeneous transforms T_base_frame; Jacobians are geometric, ``[linear; angular]`` rows
(shape (..., 6, nq)) for the velocity of the frame's origin, expressed in the base frame's axes
(``reference="local_world_aligned"``, the default: Khalil's J_n projected in frame 0, Pinocchio's
LOCAL_WORLD_ALIGNED) or in the frame's own axes (``reference="local"``: Pinocchio's LOCAL, the
same rows rotated by R^T, R = base_R_frame). The engine's ``rd_task_space`` computes them.
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
    "REFERENCES",
    "reference_axes",
    "task_row_mask",
    "IKResult",
    "inverse_kinematics",
]

Array = NDArray[np.float64]

#: The axes a frame's Jacobian, twist and Jdot qd are expressed in: the base frame's axes at the
#: frame's origin (Pinocchio's LOCAL_WORLD_ALIGNED) or the frame's own axes (Pinocchio's LOCAL).
REFERENCES = ("local_world_aligned", "local")

#: The task rows, indices into [linear; angular]: [vx, vy, vz, wx, wy, wz].
TASK_ROWS = ("x", "y", "z", "rx", "ry", "rz")


_REFERENCE_CODES: dict[str, int] = {}


def reference_axes(reference: str) -> int:
    """The engine's code of a reference (one of :data:`REFERENCES`); InputError naming them otherwise."""
    if not _REFERENCE_CODES:
        _REFERENCE_CODES.update(local_world_aligned=engine.engine().LOCAL_WORLD_ALIGNED, local=engine.engine().LOCAL)
    code = _REFERENCE_CODES.get(reference) if isinstance(reference, str) else None
    if code is None:
        raise InputError(f"reference: expected one of {list(REFERENCES)} (the axes of the result), got {reference!r}")
    return code


def task_row_mask(rows: object) -> tuple[int, list[int] | None]:
    """Task rows (distinct indices among 0..5 into [x, y, z, rx, ry, rz], or None: all six) as the
    engine's mask (bit i: row i), and the order to put the engine's ascending rows in (None when
    they are already in it)."""
    if rows is None:
        return 0, None
    r = np.asarray(rows)
    if (r.ndim != 1 or r.size == 0 or r.dtype.kind not in "iu" or np.any((r < 0) | (r > 5))
            or len(set(r.tolist())) != r.size):
        raise InputError(f"rows: expected distinct task rows among 0..5 {list(TASK_ROWS)}, got {rows!r}")
    given = [int(i) for i in r]
    ascending = sorted(given)
    return sum(1 << i for i in given), (None if given == ascending else [ascending.index(i) for i in given])


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
    return engine.task_space(model, q, None, k, 0, 0, 0.0, ("T",), "frame_pose")[0]


def jacobian(model: RobotModel, q: ArrayLike, frame: str | None = None, *, reference: str = "local_world_aligned") -> Array:
    """Geometric Jacobian of a frame, ``[v; w] = J qd``, shape (..., 6, nq) [m/rad or 1; 1 or 0].

    Rows are [linear; angular]: the velocity of the frame's origin [m/s] and the frame's angular
    velocity [rad/s], in the base frame's axes (``reference="local_world_aligned"``) or in the
    frame's own (``"local"``). Columns follow ``model.joint_names`` (mimic joints folded in).
    """
    k = model.frame_index(frame or model.end_effector)
    return engine.task_space(model, q, None, k, reference_axes(reference), 0, 0.0, ("J",), "jacobian")[0]


def _frame_motion(model: RobotModel, q: ArrayLike, qd: ArrayLike, frame: str | None, reference: str, what: str,
                  name: str) -> Array:
    """The engine's twist ("vel") or Jdot qd ("bias") of a frame's origin, (..., 6)."""
    k = model.frame_index(frame or model.end_effector)
    if qd is None:
        raise InputError(f"qd: expected {model.nq} joint velocities, got None")
    return engine.task_space(model, q, qd, k, reference_axes(reference), 0, 0.0, (name,), what)[0]


def frame_velocity(model: RobotModel, q: ArrayLike, qd: ArrayLike, frame: str | None = None, *,
                   reference: str = "local_world_aligned") -> Array:
    """Twist [v; w] of a frame's origin [m/s, rad/s], shape (..., 6), in the axes of ``reference``
    (base axes by default, or the frame's own: ``"local"``); equals J qd."""
    return _frame_motion(model, q, qd, frame, reference, "frame_velocity", "vel")


def jacobian_dot_qdot(model: RobotModel, q: ArrayLike, qd: ArrayLike, frame: str | None = None, *,
                      reference: str = "local_world_aligned") -> Array:
    """``Jdot qd``: the frame origin's classical acceleration and the frame's angular acceleration
    [a; alpha] at qdd = 0 without gravity [m/s^2, rad/s^2], shape (..., 6), in the axes of
    ``reference`` (base axes by default, or the frame's own: ``"local"``).

    So that the classical acceleration is ``J qdd + Jdot qd`` (Khalil [9.33]) in the same axes;
    Pinocchio's ``getFrameClassicalAcceleration`` after ``forwardKinematics(q, qd, 0)``.
    """
    return _frame_motion(model, q, qd, frame, reference, "jacobian_dot_qdot", "bias")


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
