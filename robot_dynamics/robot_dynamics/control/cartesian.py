"""Compliant task-space control on the task inertia: Cartesian impedance and operational space.

Both control one frame's pose (base axes, [linear; angular], the pose error of
:func:`~robot_dynamics.control.task_space.task_error`) through the engine's operational-space
quantities of the same A(q) (:func:`robot_dynamics.operational_space`: the task rows of J, the task
inertia Lambda = (J A^-1 J^T)^-1 by Cholesky factors, the dynamically consistent inverse J_bar and
the torque null-space projector N = 1 - J^T J_bar^T):

* **Cartesian impedance** (Hogan 1985; Albu-Schaeffer, Ott, Frese and Hirzinger, "Cartesian
  impedance control of redundant robots", ICRA 2003):
  ``tau = J^T (K e + D e_dot) + C(q, qd) qd + g(q) + N tau_0``. The stiffness K is what the
  end effector feels at rest: a wrench F held by the arm moves it by K^-1 F. The damping D is
  designed on the task inertia so that each mode of ``Lambda x_dd + D x_d + K x = 0`` has the
  damping ratio asked (their "double diagonalization": K phi = w^2 Lambda phi with
  Phi^T Lambda Phi = 1, D = Lambda Phi diag(2 zeta w) Phi^T Lambda).
* **Operational space** (Khatib 1987; Khalil [9.36]):
  ``tau = J^T Lambda (x_dd^d + Kd e_dot + Kp e - Jdot qd) + C(q, qd) qd + g(q) + N tau_0``: the
  task's acceleration follows ``x_dd^d + Kd e_dot + Kp e`` exactly, each row a second-order
  system of bandwidth omega and damping xi; its stiffness against a push is Lambda Kp.

The posture task ``tau_0 = K_n (q_n - q) - D_n qd`` (q_n: the posture, by default the joints at
the first tick) acts through N only: it keeps a redundant arm's self-motion still and moves the
task not at all (J A^-1 N = 0). Near a singularity (the smallest singular value of J below
``singular_threshold``) Lambda is damped, ``(J A^-1 J^T + lambda^2 1)^-1`` with
``lambda^2 = damping^2 (1 - (s_min / threshold)^2)``, so the command stays bounded. The task
wrench is saturated (``max_force`` [N], ``max_moment`` [N m], by scaling its force and moment
parts) and the torque's change per tick (``max_torque_rate`` [N m/s]).

A target the arm cannot reach without passing a joint's position limit does not drive the joint
into it: within ``joint_limit_margin`` of a limit (default 0.1 rad, at most a quarter of the
joint's range) the joint's acceleration toward it is capped at
``omega^2 (q_edge - q) - 2 omega qd`` (``omega = joint_limit_frequency``, default 20 rad/s,
q_edge the band's inner edge): a critically damped return to the edge, which a joint entering
the band at speed v overshoots by at most ``v / (e omega)`` (0.04 rad at 2.3 rad/s). The cut
``delta`` in acceleration is added as ``A delta``, so the other joints move as the law asked.
The effort limits clip after it: an arm too weak to brake leaves the band deeper.

Nor does a target that moves faster than the joints may drive them past their velocity limits
(the model's ``velocity_limit``; a URDF's velocity 0, its unset value, is none): faster than half
its limit v a joint's acceleration away from zero is capped at ``omega (v - |qd|)``, so that its
speed approaches v at the rate omega; and at every tick after the first (dt known) at
``(v - |qd|) / dt``, so that no tick takes it past v, however large the law's acceleration. Where
the two barriers disagree the position barrier wins.

Both laws run in the engine, one call a tick (``rd_compliant_control`` of src/engine/compliant.c,
through :func:`robot_dynamics.engine.stages.compliant`): the one implementation that the
ros2_control controllers share. The classes here validate the options and word the status.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..engine import check_status, engine, stages
from ..errors import InputError, SingularityError
from ..model.robot_model import RobotModel
from .base import Status, TaskReference, gain_vector
from .task_space import TaskController

__all__ = ["CartesianImpedance", "OperationalSpaceControl", "impedance_damping"]

Array = NDArray[np.float64]


def impedance_damping(stiffness: Array, Lambda: Array, damping_ratio: float) -> Array:
    """The damping matrix D (r, r) that gives every mode of ``Lambda x_dd + D x_d + K x = 0`` the
    damping ratio zeta (Albu-Schaeffer et al. 2003): with the generalized eigenvectors
    K phi = w^2 Lambda phi (Phi^T Lambda Phi = 1), D = Lambda Phi diag(2 zeta w) Phi^T Lambda.

    The engine's design (``rd_impedance_damping``): for a positive diagonal K = C^2 (the one the
    law runs) D = 2 zeta C sqrt(C^-1 Lambda C^-1) C, the square root from a symmetric
    eigen-decomposition (Householder tridiagonal form, QR steps); for a full K, with Lambda = L L^T,
    S = L^-1 K L^-T = U diag(w^2) U^T by Jacobi rotations and D = L U diag(2 zeta w) U^T L^T.

    Args:
        stiffness: K, (r,) diagonal or (r, r) symmetric [N/m, N m/rad], r <= 6.
        Lambda: the task inertia (r, r) symmetric positive definite [kg, kg m, kg m^2].
        damping_ratio: zeta > 0.

    Raises:
        InputError: shapes other than (r,) or (r, r) and (r, r) with r <= 6, or non-finite values.
        SingularityError: Lambda not positive definite.
    """
    K = np.diag(stiffness) if np.ndim(stiffness) == 1 else np.asarray(stiffness, dtype=float)
    L = np.asarray(Lambda, dtype=float)
    r = L.shape[0] if L.ndim == 2 else 0
    if not (1 <= r <= 6 and L.shape == (r, r) and K.shape == (r, r)):
        raise InputError(f"impedance_damping: expected Lambda (r, r) with r <= 6 and a stiffness (r,) or (r, r); got "
                         f"{L.shape} and {np.shape(stiffness)}")
    code, D = stages.impedance_damping(K, L, float(damping_ratio))
    if code == engine().NOT_POSITIVE_DEFINITE:
        raise SingularityError("impedance_damping: the task inertia Lambda is not positive definite")
    if code != engine().OK:
        raise InputError("impedance_damping: expected finite stiffness, task inertia and damping ratio")
    return D


def _positive(value: Any, what: str) -> float:
    v = float(value)
    if not (np.isfinite(v) and v > 0.0):
        raise InputError(f"{what}: expected a finite number > 0, got {value!r}")
    return v


def _limit(value: Any, what: str) -> float:
    v = float(np.inf if value is None else value)
    if np.isnan(v) or v <= 0.0:
        raise InputError(f"{what}: expected a number > 0 (inf or None: no limit), got {value!r}")
    return v


class _Compliant(TaskController):
    """The shared part: the options of the posture in the null space, the singular damping and the
    saturations, validated here, and the tick, one call of the engine's law; subclasses give the
    law and its gains (:meth:`_law_gains`)."""

    def __init__(self, model: RobotModel, *, frame: str | None = None, rows: Sequence[int] | None = None,
                 null_space_stiffness: ArrayLike = 10.0, null_space_damping_ratio: float = 1.0,
                 posture: ArrayLike | None = None, max_force: float | None = None, max_moment: float | None = None,
                 max_torque_rate: float | None = None, singular_threshold: float = 0.02, damping: float = 0.05,
                 joint_limit_margin: float = 0.1, joint_limit_frequency: float = 20.0, **limits: Any):
        super().__init__(model, frame, rows, **limits)
        self.null_space_stiffness = gain_vector(null_space_stiffness, model.nq, "null_space_stiffness", model.joint_names)
        self.null_space_damping_ratio = _positive(null_space_damping_ratio, "null_space_damping_ratio")
        self.posture = None if posture is None else self._posture(posture)
        self.max_force, self.max_moment = _limit(max_force, "max_force"), _limit(max_moment, "max_moment")
        self.max_torque_rate = _limit(max_torque_rate, "max_torque_rate")
        for what, v in (("singular_threshold", singular_threshold), ("damping", damping)):
            if not (np.isfinite(v) and v >= 0.0):
                raise InputError(f"{what}: expected a finite number >= 0, got {v!r}")
        self.singular_threshold, self.damping = float(singular_threshold), float(damping)
        if not (np.isfinite(joint_limit_margin) and joint_limit_margin >= 0.0):
            raise InputError(f"joint_limit_margin: expected a finite number >= 0 [rad or m] (0: no barrier), got "
                             f"{joint_limit_margin!r}")
        self.joint_limit_margin = float(joint_limit_margin)
        self.joint_limit_frequency = _positive(joint_limit_frequency, "joint_limit_frequency")
        v = model.velocity_limit  # the velocity barrier's limits: a URDF's velocity 0 (unset) is none
        self._velocity_limit = np.where(v > 0.0, v, np.inf)
        self._hold: Array | None = None
        self._tau_prev: Array | None = None
        # the engine's task: the frame's index and the rows as bits; their values in the bits' order
        self._frame_index = model.frame_index(self.frame)
        self._mask = int(sum(1 << int(i) for i in self.rows))
        self._order = np.argsort(self.rows)

    def _posture(self, posture: ArrayLike) -> Array:
        p = np.asarray(posture, dtype=float).reshape(-1)
        if p.shape != (self.model.nq,) or not np.all(np.isfinite(p)):
            raise InputError(f"posture: expected {self.model.nq} finite joint positions, got shape {p.shape}")
        return p

    def reset(self) -> None:
        super().reset()
        self._hold, self._tau_prev = None, None

    def _law_gains(self) -> tuple[int, Array, Array | None, float]:
        """The engine's law, its Kp (or K) and Kd per task row (self.rows' order) and its damping ratio."""
        raise NotImplementedError

    def _options(self) -> stages.CompliantOptions:
        """The engine's options of this tick (the task rows in the engine's order, the posture held)."""
        law, kp, kd, zeta = self._law_gains()
        order = self._order
        return stages.CompliantOptions(law, self._frame_index, self._mask, kp[order], None if kd is None else kd[order],
                                       zeta, self.null_space_stiffness, self.null_space_damping_ratio, self._hold,
                                       self.max_force, self.max_moment, self.max_torque_rate, self.singular_threshold,
                                       self.damping, self.model.lower, self.model.upper, self.joint_limit_margin,
                                       self.joint_limit_frequency, self._velocity_limit)

    def _law(self, t: float, dt: float, q: Array, qd: Array, reference: TaskReference) -> tuple[Array, Status, str]:
        if self._hold is None:
            self._hold = q.copy() if self.posture is None else self.posture
        options = self._options()
        accel = reference.accel if options.law == engine().OPERATIONAL_SPACE else None
        tick = stages.compliant(self.model, options, q, qd, reference.pose, reference.twist, accel, self._tau_prev, dt)
        e = engine()
        if tick.code == e.BAD_OUTPUT:  # the tick's fault: "non-finite torques"
            return np.full(self.model.nq, np.nan), Status.OK, ""
        if tick.code == e.BAD_SIZE:
            raise InputError(f"{self.name}: an option out of range (a gain, ratio, limit or posture changed after "
                             "construction)")
        check_status(self.model, tick.code, "operational_space")
        self._tau_prev = tick.tau
        if tick.singular:
            message = f"near a singularity (smallest singular value {tick.s_min:.3g}); damped task inertia"
            return tick.tau, Status.SINGULAR, message
        return tick.tau, Status.OK, ""


class CartesianImpedance(_Compliant):
    """Cartesian impedance: ``tau = J^T (K e + D e_dot) + C qd + g + N tau_0`` (module docstring).

    Args:
        model: the controller's model.
        stiffness: K per task row, scalar or (len(rows),), > 0 [N/m for x, y, z; N m/rad for
            rx, ry, rz]; default 1000 N/m and 100 N m/rad.
        damping_ratio: zeta of every task mode (> 0), D designed on Lambda (:func:`impedance_damping`).
        frame, rows: the task frame (default ``model.end_effector``) and its rows among
            [x, y, z, rx, ry, rz] (default all six, the position alone below six joints).
        null_space_stiffness: K_n of the posture [N m/rad], scalar or (nq,), >= 0.
        null_space_damping_ratio: the posture's D_n = 2 zeta_n sqrt(K_n A_ii) (> 0).
        posture: q_n (nq,) [rad]; None: the joints at the first tick after a reset.
        max_force, max_moment: the task wrench's force and moment norms [N, N m]; None: none.
        max_torque_rate: the largest change of a joint torque [N m/s]; None: none.
        singular_threshold, damping: J's smallest singular value below which Lambda is damped,
            and the largest lambda.
        joint_limit_margin, joint_limit_frequency: the joint-limit barriers (module docstring): the band
            inside each position limit [rad or m] (0: none) and omega [rad/s], of the position barrier and
            of the velocity barrier (on the model's velocity limits).
        effort_limit, actuator_limit, fault_action: see :class:`ControllerBase`.
    """

    name = "cartesian-impedance"

    def __init__(self, model: RobotModel, stiffness: ArrayLike | None = None, damping_ratio: float = 0.7, **options: Any):
        super().__init__(model, **options)
        default = np.where(self.rows < 3, 1000.0, 100.0)
        self.stiffness = gain_vector(default if stiffness is None else stiffness, self.rows.size, "stiffness",
                                     self.row_names, allow_zero=False)
        self.damping_ratio = _positive(damping_ratio, "damping_ratio")

    def _law_gains(self) -> tuple[int, Array, Array | None, float]:
        return engine().CARTESIAN_IMPEDANCE, self.stiffness, None, self.damping_ratio


class OperationalSpaceControl(_Compliant):
    """Khatib's operational-space control: ``tau = J^T Lambda (x_dd^d + Kd e_dot + Kp e - Jdot qd)
    + C qd + g + N tau_0`` (module docstring; Khalil [9.36]).

    Args:
        model: the controller's model.
        omega, xi: each task row's bandwidth [rad/s] and damping ratio (Kp = omega^2,
            Kd = 2 xi omega), scalar or (len(rows),); or kp [1/s^2], kd [1/s] directly.
        Others: as :class:`CartesianImpedance`.
    """

    name = "operational-space"

    def __init__(self, model: RobotModel, *, omega: ArrayLike | None = None, xi: ArrayLike = 1.0,
                 kp: ArrayLike | None = None, kd: ArrayLike | None = None, **options: Any):
        super().__init__(model, **options)
        self.kp, self.kd = self._gains(omega, xi, kp, kd)

    def _law_gains(self) -> tuple[int, Array, Array | None, float]:
        return engine().OPERATIONAL_SPACE, self.kp, self.kd, 1.0
