"""Task-space controllers: PID through J^T (Khalil 9.3.3) and resolved acceleration (9.4.3).

Task coordinates are those of one frame, base axes, [linear; angular] like the Jacobian.
The pose error is ``e_x = [p^d - p; log(R^d R^T)]`` (rotation vector in base axes, so its
rate is ``w^d - w`` to first order). ``rows`` picks the task coordinates to control, e.g.
``(0, 1, 2)`` for the position only (default for robots with fewer than 6 joints).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError
from ..kinematics import frame_pose, jacobian, jacobian_dot_qdot
from ..model.robot_model import RobotModel
from ..spatial import log_so3
from .base import DEFAULT_OMEGA, ControllerBase, Status, TaskReference, as_task_reference, gain_vector
from .computed_torque import gains_from_bandwidth

__all__ = ["TaskController", "TaskPID", "TaskComputedTorque", "damped_pseudo_inverse", "task_error"]

Array = NDArray[np.float64]

_ROW_NAMES = ("x", "y", "z", "rx", "ry", "rz")


def damped_pseudo_inverse(J: ArrayLike, threshold: float = 0.02, damping: float = 0.05) -> tuple[Array, float, bool]:
    """Pseudo-inverse of J (m, n) by SVD, damped near singularities.

    ``J# = V diag(s / (s^2 + lambda^2)) U^T`` with ``lambda^2 = damping^2 (1 - (s_min /
    threshold)^2)`` when the smallest singular value s_min drops below ``threshold``, zero
    otherwise (Nakamura-Hanafusa / Maciejewski damped least squares, the generalised inverse
    Khalil's note after [9.37] asks for at singular positions and for redundant robots).

    Returns:
        (J# (n, m), s_min, damped?).
    """
    U, s, Vt = np.linalg.svd(np.asarray(J, dtype=float), full_matrices=False)
    s_min = float(s[-1]) if s.size else 0.0
    lam2 = damping**2 * (1.0 - (s_min / threshold) ** 2) if s_min < threshold else 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = np.where(s > 1e-12, s / (s**2 + lam2), 0.0) if lam2 == 0.0 else s / (s**2 + lam2)
    return (Vt.T * inv) @ U.T, s_min, lam2 > 0.0


def task_error(T_desired: Array, T: Array) -> Array:
    """Pose error [p^d - p; log(R^d R^T)] in base axes, (6,) [m, rad]."""
    e = np.empty(6)
    e[:3] = T_desired[:3, 3] - T[:3, 3]
    e[3:] = log_so3(T_desired[:3, :3] @ T[:3, :3].T)
    return e


def _rows(model: RobotModel, rows: Sequence[int] | None) -> NDArray[np.int_]:
    if rows is None:
        return np.arange(6) if model.nq >= 6 else np.arange(3)
    r = np.asarray(rows)
    if r.ndim != 1 or r.size == 0 or r.dtype.kind not in "iu" or np.any((r < 0) | (r > 5)) or len(set(r.tolist())) != r.size:
        raise InputError(f"rows: expected distinct task rows among 0..5 {list(_ROW_NAMES)}, got {rows!r}")
    return r


class TaskController(ControllerBase):
    """A controller of one frame's pose: ``frame``, its task ``rows`` and their names; its
    reference is a :class:`TaskReference`."""

    def __init__(self, model: RobotModel, frame: str | None, rows: Sequence[int] | None, **kwargs: Any):
        super().__init__(model, **kwargs)
        self.frame = frame or model.end_effector
        model.frame_index(self.frame)  # UnknownNameError listing the frames
        self.rows = _rows(model, rows)
        self.row_names = [_ROW_NAMES[i] for i in self.rows]

    def _check_reference(self, reference: Any) -> TaskReference:
        return as_task_reference(reference)

    def _gains(self, omega: ArrayLike | None, xi: ArrayLike, kp: ArrayLike | None, kd: ArrayLike | None) -> tuple[Array, Array]:
        """(Kp, Kd) per task row: omega^2 and 2 xi omega ([9.26] in task space), or kp and kd given."""
        m = self.rows.size
        if (kp is None) != (kd is None):
            raise InputError("kp and kd: give both, or neither and use omega/xi")
        if kp is not None and omega is not None:
            raise InputError("give either omega/xi or kp/kd, not both")
        if kp is None:
            return gains_from_bandwidth(DEFAULT_OMEGA if omega is None else omega, xi, m, self.row_names)
        return gain_vector(kp, m, "kp", self.row_names), gain_vector(kd, m, "kd", self.row_names)


class TaskPID(TaskController):
    """Khalil [9.17]: ``Gamma = J^T [Kp e_x + Kd e_x' + KI int e_x dt]`` (+ Q(q) if asked).

    Args:
        model: the controller's model.
        kp, kd, ki: task gains, scalar or (len(rows),), >= 0 [N/m, N s/m, N/(m s)] (N m/rad
            for the rotation rows).
        frame: controlled frame (default ``model.end_effector``).
        rows: task coordinates controlled, indices into [x, y, z, rx, ry, rz].
        gravity_compensation: add Q(q) of the model (not in [9.17]).
        effort_limit, actuator_limit, fault_action: see :class:`ControllerBase`.
    """

    name = "task-pid"

    def __init__(
        self,
        model: RobotModel,
        kp: ArrayLike,
        kd: ArrayLike,
        ki: ArrayLike = 0.0,
        *,
        frame: str | None = None,
        rows: Sequence[int] | None = None,
        gravity_compensation: bool = False,
        effort_limit: ArrayLike | None = None,
        actuator_limit: ArrayLike | None = None,
        fault_action: str = "hold",
    ):
        super().__init__(model, frame, rows, effort_limit=effort_limit, actuator_limit=actuator_limit, fault_action=fault_action)
        m = self.rows.size
        self.kp = gain_vector(kp, m, "kp", self.row_names)
        self.kd = gain_vector(kd, m, "kd", self.row_names)
        self.ki = gain_vector(ki, m, "ki", self.row_names)
        self.gravity_compensation = bool(gravity_compensation)
        self.integral = np.zeros(m)
        self._integral_before = self.integral.copy()

    def reset(self) -> None:
        super().reset()
        self.integral = np.zeros(self.rows.size)

    def _law(self, t: float, dt: float, q: Array, qd: Array, reference: TaskReference) -> tuple[Array, Status, str]:
        T = frame_pose(self.model, q, self.frame)
        J = jacobian(self.model, q, self.frame)[self.rows]
        ex = task_error(reference.pose, T)[self.rows]
        exd = reference.twist[self.rows] - J @ qd
        self._integral_before = self.integral.copy()
        self.integral = self.integral + ex * dt
        tau = J.T @ (self.kp * ex + self.kd * exd + self.ki * self.integral)  # Khalil [9.17]
        if self.gravity_compensation:
            tau = tau + self._gravity(q)
        return tau, Status.OK, ""

    def _integrator_feedback(self, saturated: Array) -> None:
        if np.any(saturated):
            self.integral = self._integral_before


class TaskComputedTorque(TaskController):
    """Resolved acceleration control (Khalil [9.33]-[9.35]).

    ``w = Xdd^d + Kd (Xd^d - Xd) + Kp (X^d - X)`` [9.35]; ``qdd* = J# (w - Jdot qd)`` [9.33]
    with the damped pseudo-inverse J#; ``Gamma = A^(q) qdd* + H^(q, qd)`` by Newton-Euler.
    For redundant robots a joint damping term ``(I - J# J)(-k_null qd)`` in the null space of
    J keeps the self motion at rest (Khalil's note after [9.37]).

    Args:
        model: the controller's model.
        omega, xi: task bandwidth [rad/s] and damping, scalar or (len(rows),) ([9.26] in task
            space); or kp, kd directly.
        frame, rows: see :class:`TaskPID`.
        singular_threshold: smallest singular value of J below which damping starts.
        damping: maximum damping lambda of the pseudo-inverse.
        null_space_kd: joint damping in the null space [1/s].
        effort_limit, actuator_limit, fault_action: see :class:`ControllerBase`.
    """

    name = "task-computed-torque"

    def __init__(
        self,
        model: RobotModel,
        *,
        omega: ArrayLike | None = None,
        xi: ArrayLike = 1.0,
        kp: ArrayLike | None = None,
        kd: ArrayLike | None = None,
        frame: str | None = None,
        rows: Sequence[int] | None = None,
        singular_threshold: float = 0.02,
        damping: float = 0.05,
        null_space_kd: float = 10.0,
        effort_limit: ArrayLike | None = None,
        actuator_limit: ArrayLike | None = None,
        fault_action: str = "hold",
    ):
        super().__init__(model, frame, rows, effort_limit=effort_limit, actuator_limit=actuator_limit, fault_action=fault_action)
        self.kp, self.kd = self._gains(omega, xi, kp, kd)
        for what, v in (("singular_threshold", singular_threshold), ("damping", damping), ("null_space_kd", null_space_kd)):
            if not np.isfinite(v) or v < 0:
                raise InputError(f"{what}: expected a finite number >= 0, got {v!r}")
        self.singular_threshold = float(singular_threshold)
        self.damping = float(damping)
        self.null_space_kd = float(null_space_kd)

    def _law(self, t: float, dt: float, q: Array, qd: Array, reference: TaskReference) -> tuple[Array, Status, str]:
        T = frame_pose(self.model, q, self.frame)
        J = jacobian(self.model, q, self.frame)[self.rows]
        Jdqd = jacobian_dot_qdot(self.model, q, qd, self.frame)[self.rows]
        ex = task_error(reference.pose, T)[self.rows]
        exd = reference.twist[self.rows] - J @ qd
        w = reference.accel[self.rows] + self.kd * exd + self.kp * ex  # Khalil [9.35]
        J_pinv, s_min, damped = damped_pseudo_inverse(J, self.singular_threshold, self.damping)
        qdd = J_pinv @ (w - Jdqd)  # Khalil [9.33], J^-1 replaced by a generalised inverse
        if self.model.nq > self.rows.size and self.null_space_kd > 0:
            qdd = qdd + (np.eye(self.model.nq) - J_pinv @ J) @ (-self.null_space_kd * qd)
        tau = self._rnea(q, qd, qdd)
        if damped:
            return tau, Status.SINGULAR, f"near a singularity (smallest singular value {s_min:.3g}); damped inverse"
        return tau, Status.OK, ""
