"""Controllers by name: the one builder the command line and the ROS controller node share.

Names are those of the controller node's ``controller`` parameter; the command line's
hyphenated spellings (``pd-gravity``, ``computed-torque``, ...) are the same controllers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._batch import real_array
from ..errors import InputError, UnknownNameError
from ..model import RobotModel
from .base import DEFAULT_OMEGA, ControllerBase
from .cartesian import CartesianImpedance, OperationalSpaceControl
from .computed_torque import ComputedTorque
from .lqr import LQR
from .pd_gravity import PDGravity
from .pid import JointPID
from .task_space import TaskComputedTorque, TaskPID

#: Controller names (the controller node's ``controller`` parameter).
CONTROLLERS = ("pid", "pd_gravity", "computed_torque", "lqr", "task_pid", "task_computed_torque", "cartesian_impedance",
               "operational_space")


def _compliant(model: RobotModel, key: str, P: np.ndarray | None, D: np.ndarray | None, omega: float, xi: float,
               frame: str | None, options: dict[str, Any]) -> ControllerBase:
    """The impedance takes its stiffness (``stiffness=`` or kp) and designs its damping from
    ``damping_ratio`` (xi by default); the operational-space law takes omega/xi or kp/kd."""
    if key == "cartesian_impedance":
        if D is not None:
            raise InputError("cartesian_impedance: its damping is designed from the task inertia; give damping_ratio, not kd")
        if P is not None and "stiffness" in options:
            raise InputError("cartesian_impedance: give the stiffness once (stiffness= or kp)")
        stiffness = options.pop("stiffness", P)
        return CartesianImpedance(model, stiffness, options.pop("damping_ratio", xi), frame=frame, **options)
    if P is not None or D is not None:
        return OperationalSpaceControl(model, kp=P, kd=D, frame=frame, **options)
    return OperationalSpaceControl(model, omega=omega, xi=xi, frame=frame, **options)


def _given(v: Sequence[float] | float | None, what: str) -> np.ndarray | None:
    if v is None:
        return None
    a = real_array(v, what, "gains")
    return None if a.size == 0 else a


def _rate(v: Any, what: str) -> float:
    """A positive finite design value (bandwidth [rad/s] or damping ratio), within 1e6."""
    a = real_array(v, what, "a positive number")
    if a.ndim != 0 or not (np.isfinite(a) and 0 < float(a) <= 1e6):
        raise InputError(f"{what}: expected a positive number up to 1e6, got {str(v)[:40]}")
    return float(a)


def build_controller(
    model: RobotModel,
    name: str,
    *,
    kp: Sequence[float] | float | None = None,
    kd: Sequence[float] | float | None = None,
    ki: Sequence[float] | float | None = None,
    omega: float = DEFAULT_OMEGA,
    xi: float = 1.0,
    frame: str | None = None,
    **options: Any,
) -> ControllerBase:
    """A controller of :mod:`robot_dynamics.control` by name, with per-joint (or per-task-row) gains.

    Args:
        model: the controller's model of the robot (it may differ from the plant's).
        name: one of :data:`CONTROLLERS` (``-`` may stand for ``_``).
        kp, kd, ki: gains, scalar or per joint (per task row for the task-space laws); empty or
            None uses the bandwidth design below.
        omega: closed-loop bandwidth [rad/s]; xi: damping ratio of the designs.
        frame: the task frame of the task-space laws (default: the model's end effector, the
            tip of its longest moving chain); a frame no joint moves is refused.
        options: passed on to :class:`ComputedTorque` (``scheme``, ``predictive``,
            ``friction_velocity``, limits, ``fault_action``), to :class:`LQR` (``Q``, ``R``,
            ``rate``, ``relinearize_period``, ``friction``) or to the other constructors.

    Bandwidth designs (empty gains): Khalil [9.10]'s triple pole for the PID
    (:meth:`JointPID.from_bandwidth`), ``s^2 + 2 xi omega s + omega^2`` per joint for PD +
    gravity (:meth:`PDGravity.from_bandwidth`), ``omega`` and ``xi`` directly for the
    computed-torque laws (Khalil [9.25]); the task PID takes ``kp = omega^2``,
    ``kd = 2 xi omega`` per unit task mass. The LQR has weights, not gains: ``omega`` and
    ``xi`` set its default weights (:class:`LQR`), ``Q`` and ``R`` replace them.

    Raises:
        UnknownNameError: unknown controller name (lists :data:`CONTROLLERS`).
        InputError: gains of the wrong length or sign (from the controller's own checks); gains
            given to the LQR.
    """
    key = str(name).replace("-", "_")
    P, D, I_ = _given(kp, "kp"), _given(kd, "kd"), _given(ki, "ki")
    omega, xi = _rate(omega, "omega"), _rate(xi, "xi")
    if key == "pid":
        if P is None and D is None and I_ is None:
            return JointPID.from_bandwidth(model, omega, **options)
        return JointPID(model, P if P is not None else 0.0, D if D is not None else 0.0,
                        I_ if I_ is not None else 0.0, **options)
    if key == "pd_gravity":
        if P is None and D is None:
            return PDGravity.from_bandwidth(model, omega, xi, **options)
        if P is None or D is None:
            design = PDGravity.from_bandwidth(model, omega, xi)
            P = design.kp if P is None else P
            D = design.kd if D is None else D
        return PDGravity(model, P, D, **options)
    if key == "computed_torque":
        if P is not None or D is not None:
            return ComputedTorque(model, kp=P, kd=D, **options)
        return ComputedTorque(model, omega=omega, xi=xi, **options)
    if key == "lqr":
        given = [what for what, v in (("kp", P), ("kd", D), ("ki", I_)) if v is not None]
        if given:
            raise InputError(f"lqr: takes the weights Q and R (or omega and xi), not the gains {given}")
        return LQR(model, omega=omega, xi=xi, **options)
    if key in ("task_pid", "task_computed_torque", "cartesian_impedance", "operational_space"):
        frame = model.moving_frame(frame)  # refuses a frame on the fixed base
    if key in ("cartesian_impedance", "operational_space"):
        return _compliant(model, key, P, D, omega, xi, frame or None, options)
    if key == "task_pid":
        return TaskPID(model, P if P is not None else omega**2, D if D is not None else 2.0 * xi * omega,
                       I_ if I_ is not None else 0.0, frame=frame or None,
                       **{"gravity_compensation": True, **options})
    if key == "task_computed_torque":
        if P is not None or D is not None:
            return TaskComputedTorque(model, kp=P, kd=D, frame=frame or None, **options)
        return TaskComputedTorque(model, omega=omega, xi=xi, frame=frame or None, **options)
    raise UnknownNameError("controller", name, CONTROLLERS)
