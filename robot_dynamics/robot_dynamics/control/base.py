"""What every controller shares: references, outputs, status, gains, limits, the torque maps.

A controller is built once from a model (the controller's *estimate* of the robot, which may
differ from the simulated plant), gains and limits; validation happens there and raises the
package's exceptions. Its per-tick ``update(t, q, qd, reference)`` never raises: a bad
measurement or reference, a non-finite result or any numerical failure yields a safe output
(hold the gravity torque of the last valid position, or zero torque) with ``Status.FAULT`` and
a logged reason, as ros2_controllers and ruckig do in their update loops.

Joint torques become actuator torques in one place, :func:`joint_to_actuator` (xi = A^-1 tau
with the drive train's structure matrix, the identity without one); saturation applies to
the actuator side.
"""

from __future__ import annotations

import enum
import math
import logging
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import real_array
from ..dynamics.rnea import rnea
from ..errors import InputError, ModelError
from ..engine import stages
from ..model.robot_model import RobotModel

__all__ = [
    "Status",
    "ControlOutput",
    "Reference",
    "TaskReference",
    "Controller",
    "ControllerBase",
    "gain_vector",
    "joint_to_actuator",
    "actuator_to_joint",
    "FAULT_ACTIONS",
    "DEFAULT_OMEGA",
]

Array = NDArray[np.float64]

logger = logging.getLogger("robot_dynamics.control")
# `import launch` (ROS 2) installs a logger class that does not propagate; a library logger must
# reach the application's handlers whatever was imported first.
logger.propagate = True

#: What a controller outputs when a tick cannot be computed.
FAULT_ACTIONS = ("hold", "zero")

#: The controllers' default closed-loop bandwidth [rad/s]: the one default every law, the
#: controller node, the studies and the command line read (poles at -omega with xi = 1, a
#: settling time of about 0.3 s).
DEFAULT_OMEGA = 20.0


class Status(enum.IntFlag):
    """Outcome of one controller tick; flags combine (``SATURATED | SINGULAR``).

    - OK: the control law was applied as designed.
    - SATURATED: at least one actuator command was clipped to its effort limit.
    - SINGULAR: the task Jacobian is near a singularity; the damped pseudo-inverse is active.
    - FAULT: the tick could not be computed (NaN measurement, bad reference, numerical failure);
      the output is the safe fallback (``fault_action``).
    """

    OK = 0
    SATURATED = 1
    SINGULAR = 2
    FAULT = 4


class ControlOutput(NamedTuple):
    """Result of one controller tick.

    Attributes:
        effort: command sent to the actuators, (nq,): actuator torques xi [N m or N] when the
            model has a drive train, joint torques otherwise; saturated.
        tau: joint torques that ``effort`` produces, (nq,) [N m or N].
        status: :class:`Status` flags.
        message: why the status is not OK ("" when OK).
    """

    effort: Array
    tau: Array
    status: Status
    message: str


class Reference(NamedTuple):
    """Desired joint motion at one instant (Khalil's q^d, qd^d, qdd^d), each (nq,)."""

    q: Array
    qd: Array
    qdd: Array


class TaskReference(NamedTuple):
    """Desired motion of a frame at one instant, base axes.

    Attributes:
        pose: T_base_frame desired, (4, 4) [m].
        twist: [v; w] desired, (6,) [m/s, rad/s] (velocity of the frame origin).
        accel: [a; alpha] desired, (6,) [m/s^2, rad/s^2].
    """

    pose: Array
    twist: Array
    accel: Array


@runtime_checkable
class Controller(Protocol):
    """The protocol the simulator and the ROS controller node drive."""

    model: RobotModel

    def reset(self) -> None:
        """Forget the internal state (integrators, last valid position)."""

    def update(self, t: float, q: ArrayLike, qd: ArrayLike, reference: Any) -> ControlOutput:
        """One tick: measured q, qd (nq,) at time t [s] and the reference -> output; never raises."""


def gain_vector(value: ArrayLike, n: int, what: str, names: Sequence[str] | None = None, *, allow_zero: bool = True) -> Array:
    """A diagonal gain as a vector: a scalar (same gain everywhere) or ``n`` values.

    Raises:
        InputError: wrong length, a matrix, NaN/inf, a negative value (or zero with
            ``allow_zero=False``); the message names the offending entries.
    """
    arr = real_array(value, what, f"gains (a number or {n} numbers)")
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        hint = f" ordered as {list(names)}" if names is not None else ""
        raise InputError(f"{what}: expected a scalar or {n} values{hint}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{what}: gains must be finite, got {arr.tolist()}")
    bad = arr < 0.0 if allow_zero else arr <= 0.0
    if np.any(bad):
        labels = list(names) if names is not None else list(range(n))
        which = [labels[i] for i in np.flatnonzero(bad)]
        sign = ">= 0" if allow_zero else "> 0"
        raise InputError(f"{what}: gains must be {sign}; bad entries {which}: {arr[bad].tolist()}")
    return arr


def joint_to_actuator(model: RobotModel, q: ArrayLike, tau: ArrayLike) -> Array:
    """Actuator torques xi that produce joint torques ``tau``: ``xi = A^-1 tau``.

    The structure matrix A of a geared robot (seed 000 eq. 22, Khalil [7.33]: G = A xi) comes
    from ``model.drivetrain``; without a drive train this is the identity (direct drive, or
    gears folded into the joint torques and rotor inertias).

    Args:
        q: joint positions (nq,) [rad or m] (kept for transmissions that depend on q).
        tau: joint torques (..., nq) [N m or N].

    Returns:
        xi in ``model.drivetrain.inputs`` order, (..., nq).
    """
    t = np.asarray(tau, dtype=float)
    dt = model.drivetrain
    if dt is None:
        return t
    return t @ np.asarray(dt.A_inv).T


def actuator_to_joint(model: RobotModel, q: ArrayLike, xi: ArrayLike) -> Array:
    """Joint torques produced by actuator torques ``xi``: ``tau = A xi`` (inverse of :func:`joint_to_actuator`)."""
    x = np.asarray(xi, dtype=float)
    dt = model.drivetrain
    if dt is None:
        return x
    return x @ np.asarray(dt.A).T


class ControllerBase(ABC):
    """Common machinery: input checks, saturation, drive-train mapping, safe fallback, logging.

    Subclasses implement :meth:`_law` (the control law, joint torques out) and may override
    :meth:`_check_reference` and :meth:`reset`.

    Args:
        model: the controller's model of the robot (may differ from the simulated plant).
        effort_limit: joint torque limits (scalar or (nq,)) [N m or N]; default
            ``model.effort_limit`` (the URDF's, inf = unlimited). Joint torques are clipped
            to +-limit.
        actuator_limit: limits of the actuator torques xi (drive-train robots), (nq,) in
            ``model.drivetrain.inputs`` order; None = no limit beyond ``effort_limit``.
        fault_action: ``"hold"`` (gravity torque of the last valid position, zero before any)
            or ``"zero"`` (zero torque) when a tick cannot be computed.
    """

    #: Short name used in tables and logs.
    name = "controller"

    def __init__(
        self,
        model: RobotModel,
        *,
        effort_limit: ArrayLike | None = None,
        actuator_limit: ArrayLike | None = None,
        fault_action: str = "hold",
    ):
        if not isinstance(model, RobotModel):
            raise InputError(f"model: expected a RobotModel, got {type(model).__name__}")
        self.model = model
        self.effort_limit = _limit_vector(model.effort_limit if effort_limit is None else effort_limit, model, "effort_limit")
        self.actuator_limit = None if actuator_limit is None else _limit_vector(actuator_limit, model, "actuator_limit")
        if fault_action not in FAULT_ACTIONS:
            raise InputError(f"fault_action: expected one of {list(FAULT_ACTIONS)}, got {fault_action!r}")
        self.fault_action = fault_action
        dt = model.drivetrain
        if dt is not None and (getattr(dt, "A", None) is None or np.shape(dt.A) != (model.nq, model.nq)):
            raise ModelError(f"Robot {model.name!r}: the drive train has no ({model.nq}, {model.nq}) structure matrix A")
        self._last_valid_q: Array | None = None
        self._last_message = ""
        self._t_prev: float | None = None
        self._zeros = np.zeros(model.nq)
        self._A_inv = None if dt is None else np.ascontiguousarray(dt.A_inv, dtype=float)

    def _rnea(self, q: Array, qd: Array, qdd: Array, *, friction: bool = True) -> Array:
        """rnea of the controller's model for one state (the core's compiled kernel, Khalil 7.5):
        model gravity and rotor inertia included, friction on request."""
        return rnea(self.model, q, qd, qdd, friction=friction)

    def _gravity(self, q: Array) -> Array:
        """Gravity torques Q(q) of the controller's model (friction vanishes at rest)."""
        return self._rnea(q, self._zeros, self._zeros)

    # -- to implement ----------------------------------------------------------------------
    @abstractmethod
    def _law(self, t: float, dt: float, q: Array, qd: Array, reference: Any) -> tuple[Array, Status, str]:
        """Joint torques (nq,) of the control law, a status and a message."""

    def _check_reference(self, reference: Any) -> Any:
        """Validate and normalise a joint reference; raise InputError when unusable."""
        return as_joint_reference(reference, self.model.nq)

    def _integrator_feedback(self, saturated: Array) -> None:
        """Called after saturation (anti-windup hook for integral actions)."""

    def reset(self) -> None:
        """Forget integrators, the last valid position and the last tick's time."""
        self._last_valid_q = None
        self._last_message = ""
        self._t_prev = None

    def record_tick(self, t: float, q: ArrayLike, message: str) -> None:
        """Remember a tick that this controller's law gave outside :meth:`update` (the engine's
        compiled simulation loop runs it): its time t [s], its measured joint positions q (nq,)
        and its message, as :meth:`update` remembers them (the next tick's dt, the fault's hold,
        the message logged once)."""
        self._t_prev = float(t)
        self._last_valid_q = np.array(q, dtype=float)
        self._last_message = message

    # -- the loop --------------------------------------------------------------------------
    def update(self, t: float, q: ArrayLike, qd: ArrayLike, reference: Any) -> ControlOutput:
        """One controller tick.

        Args:
            t: time [s] (monotonic; the integral actions use the difference to the last tick).
            q, qd: measured joint positions and velocities, (nq,), ``model.joint_names`` order.
            reference: :class:`Reference` (or a (q, qd, qdd) tuple, or a goal position (nq,))
                for joint-space controllers; :class:`TaskReference` for task-space ones.

        Returns:
            :class:`ControlOutput`. Never raises: failures give ``Status.FAULT`` and the safe
            fallback output.
        """
        try:
            n = self.model.nq
            qa = np.asarray(q, dtype=float).reshape(-1)
            qda = np.asarray(qd, dtype=float).reshape(-1)
            tf = float(t)
            if qa.shape != (n,) or qda.shape != (n,):
                return self._fault(f"measurement has shape q {qa.shape}, qd {qda.shape}; expected ({n},)")
            if not (all_finite(qa) and all_finite(qda)):
                bad = [self.model.joint_names[i] for i in np.flatnonzero(~(np.isfinite(qa) & np.isfinite(qda)))]
                return self._fault(f"non-finite measurement on joints {bad}")
            if not np.isfinite(tf):
                return self._fault("non-finite time")
            try:
                ref = self._check_reference(reference)
            except (InputError, TypeError, ValueError) as exc:
                return self._fault(f"bad reference: {exc}")
            dt = 0.0 if self._t_prev is None else max(tf - self._t_prev, 0.0)
            tau, status, message = self._law(tf, dt, qa, qda, ref)
            if not all_finite(tau):
                return self._fault("control law produced non-finite torques")
            self._t_prev = tf
            self._last_valid_q = qa.copy()
            out = self._saturate(qa, tau, status, message)
            if out.message != self._last_message and out.status & Status.FAULT:
                logger.warning("%s: %s", self.name, out.message)
            self._last_message = out.message
            return out
        except Exception as exc:  # noqa: BLE001 - a control tick never raises
            return self._fault(f"{type(exc).__name__}: {exc}")

    def _saturate(self, q: Array, tau: Array, status: Status, message: str) -> ControlOutput:
        """Joint torques clipped to the effort limits, mapped to the actuators and clipped to
        theirs: the engine's stage, the one the compiled loop runs."""
        tau_sat, xi, clipped, actuator = stages.saturate(self.model, self.effort_limit, self._A_inv, self.actuator_limit, tau)
        if actuator:
            tau_sat = actuator_to_joint(self.model, q, xi)
        self._integrator_feedback(clipped)
        if clipped.any():
            status = status | Status.SATURATED
            names = [self.model.joint_names[i] for i in np.flatnonzero(clipped)]
            message = (message + "; " if message else "") + f"effort saturated on {names}"
        return ControlOutput(xi, tau_sat, status, message)

    def _fault(self, reason: str) -> ControlOutput:
        """The safe output: hold the gravity torque at the last valid position, or zero."""
        n = self.model.nq
        tau = np.zeros(n)
        action = "zero torque"
        if self.fault_action == "hold" and self._last_valid_q is not None:
            try:
                tau = self._gravity(self._last_valid_q)
                action = "holding the gravity torque of the last valid position"
            except Exception:  # noqa: BLE001
                tau = np.zeros(n)
        message = f"{reason}; {action}"
        if message != self._last_message:
            logger.warning("%s: %s", self.name, message)
        self._last_message = message
        q = self._last_valid_q if self._last_valid_q is not None else np.zeros(n)
        try:
            tau = np.clip(tau, -self.effort_limit, self.effort_limit)
            xi = joint_to_actuator(self.model, q, tau)
            if self.actuator_limit is not None:
                xi = np.clip(xi, -self.actuator_limit, self.actuator_limit)
                tau = actuator_to_joint(self.model, q, xi)
        except Exception:  # noqa: BLE001
            xi, tau = np.zeros(n), np.zeros(n)
        return ControlOutput(xi, tau, Status.FAULT, message)


def all_finite(x: Array) -> bool:
    """True when every value of the float vector x (n,) is finite.

    A sum of Python floats is the cheap test (a few hundred ns against microseconds for
    np.isfinite on a small vector, and no numpy overflow warning for a huge finite value); only
    when it is not finite (NaN, inf, or finite values that overflow the sum) are the values tested
    one by one.
    """
    values = x.tolist()
    return math.isfinite(sum(values)) or all(map(math.isfinite, values))


def _limit_vector(value: ArrayLike, model: RobotModel, what: str) -> Array:
    limit = real_array(value, what, "positive limits")
    if limit.ndim == 0:
        limit = np.full(model.nq, float(limit))
    if limit.shape != (model.nq,):
        raise InputError(f"{what}: expected a positive scalar or {model.nq} values, got shape {limit.shape}")
    bad = np.isnan(limit) | (limit <= 0)
    if np.any(bad):
        joints = [model.joint_names[i] for i in np.flatnonzero(bad)]
        raise InputError(
            f"{what}: joints {joints} have a limit of {sorted(set(limit[bad].tolist()))} (expected > 0; inf = "
            "unlimited): give them a positive <limit effort> in the URDF or the joint-properties YAML"
        )
    return limit


def as_joint_reference(reference: Any, n: int) -> Reference:
    """Normalise a joint reference: :class:`Reference`, a (q, qd, qdd) tuple, or a goal q (n,).

    Raises:
        InputError: wrong shapes or non-finite values.
    """
    if isinstance(reference, TaskReference):
        raise InputError("expected a joint-space reference (q, qd, qdd), got a TaskReference")
    if isinstance(reference, tuple) and len(reference) == 3:
        parts = [np.asarray(x, dtype=float).reshape(-1) for x in reference]
    else:
        goal = np.asarray(reference, dtype=float).reshape(-1)
        parts = [goal, np.zeros_like(goal), np.zeros_like(goal)]
    for what, x in zip(("q", "qd", "qdd"), parts):
        if x.shape != (n,):
            raise InputError(f"reference {what}: expected shape ({n},), got {x.shape}")
        if not all_finite(x):
            raise InputError(f"reference {what}: contains NaN or infinite values")
    return Reference(*parts)


def as_task_reference(reference: Any) -> TaskReference:
    """Normalise a task reference: :class:`TaskReference` or a (pose, twist, accel) tuple.

    Raises:
        InputError: wrong shapes or non-finite values.
    """
    if not (isinstance(reference, tuple) and len(reference) == 3):
        raise InputError("expected a TaskReference (pose (4, 4), twist (6,), accel (6,))")
    pose, twist, accel = (np.asarray(x, dtype=float) for x in reference)
    if pose.shape != (4, 4) or twist.shape != (6,) or accel.shape != (6,):
        raise InputError(
            f"task reference: expected pose (4, 4), twist (6,), accel (6,); got {pose.shape}, {twist.shape}, {accel.shape}"
        )
    if not (np.all(np.isfinite(pose)) and np.all(np.isfinite(twist)) and np.all(np.isfinite(accel))):
        raise InputError("task reference: contains NaN or infinite values")
    return TaskReference(pose, twist, accel)
