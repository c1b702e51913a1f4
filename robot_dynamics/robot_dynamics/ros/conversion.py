"""Pure conversion between ROS 2 messages and joint arrays: joints matched by name.

No rclpy and no message package is imported here: functions read and write message objects
by their field names (the layouts of sensor_msgs/JointState, trajectory_msgs/JointTrajectory,
std_msgs/Float64MultiArray, builtin_interfaces/Duration and the robot_dynamics_interfaces
services), so they are tested with plain objects of the same layout.

Arrays are always in the model's joint order (``model.joint_names``). Functions that read a
message raise :class:`robot_dynamics.InputError` / :class:`robot_dynamics.UnknownNameError`
with a message naming what was expected; the callers (``logic.py``) turn those into
``success: false`` or a status, never into an exception that leaves a callback.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError, UnknownNameError

__all__ = [
    "JointArrays",
    "match_joints",
    "ordered_values",
    "joint_state_to_arrays",
    "fill_joint_state",
    "request_vector",
    "duration_to_seconds",
    "stamp_nanoseconds",
    "seconds_to_duration",
    "fill_duration",
    "float64_multi_array_to_vector",
    "joint_state_effort_to_vector",
    "as_float_array",
    "fill_float64_multi_array",
    "trajectory_to_arrays",
    "fill_joint_trajectory",
    "wrench_to_array",
    "to_list",
]

Array = NDArray[np.float64]

#: The most joint names (and values per field) one message may carry; a longer list is refused
#: before any matching (a real arm's /joint_states has tens).
MAX_MESSAGE_JOINTS = 10_000
#: The most points of one JointTrajectory request.
MAX_TRAJECTORY_POINTS = 100_000


def check_names(names: Sequence[Any], what: str) -> list[str]:
    """``names`` as strings: refused when more than :data:`MAX_MESSAGE_JOINTS` or repeated
    (found in one pass: the matching stays linear in the message's size)."""
    if len(names) > MAX_MESSAGE_JOINTS:
        raise InputError(f"{what}: {len(names):,} joint names, more than {MAX_MESSAGE_JOINTS:,}; expected one name "
                         "per joint")
    out = [str(n) for n in names]
    seen: set[str] = set()
    dup: set[str] = set()
    for n in out:
        (dup if n in seen else seen).add(n)
    if dup:
        shown = sorted(dup)
        raise InputError(f"{what}: repeated joint names {shown[:10]}{' ...' if len(shown) > 10 else ''}; "
                         "expected each joint once")
    return out


def to_list(values: Any) -> list[float]:
    """A plain list of Python floats (what every float64[] field accepts)."""
    return [float(v) for v in np.asarray(values, dtype=float).ravel()]


def as_float_array(values: Any, what: str) -> Array:
    """A message's float64[] field (list, array.array or numpy array) as a 1-D float array."""
    if hasattr(values, "__len__") and len(values) > MAX_MESSAGE_JOINTS:
        raise InputError(f"{what}: {len(values):,} values, more than {MAX_MESSAGE_JOINTS:,}; expected one per joint")
    try:
        arr = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"{what}: expected numbers, got {values!r}") from None
    if arr.ndim != 1:
        raise InputError(f"{what}: expected a flat list of numbers, got shape {arr.shape}")
    return arr


def match_joints(
    model_joints: Sequence[str], names: Sequence[str], *, allow_extra: bool, what: str = "joint_names"
) -> NDArray[np.int_]:
    """Positions in ``names`` of every model joint: ``idx[k]`` is where ``model_joints[k]`` is.

    Args:
        model_joints: the model's joint order.
        names: the joint names of a message.
        allow_extra: accept names the model does not have (a real arm's /joint_states may carry
            gripper or wheel joints); otherwise they are an error, as in a service request.

    Raises:
        InputError: a model joint is missing, or a name repeats.
        UnknownNameError: an unknown name when ``allow_extra`` is False (lists the valid ones).
    """
    names = check_names(names, what)
    where = {n: i for i, n in enumerate(names)}
    if not allow_extra:
        known = set(model_joints)
        for n in names:
            if n not in known:
                raise UnknownNameError("joint", n, model_joints)
    missing = [j for j in model_joints if j not in where]
    if missing:
        raise InputError(f"{what}: missing joints {missing}; the model's joints are {list(model_joints)}")
    return np.array([where[j] for j in model_joints], dtype=int)


def ordered_values(
    values: Any, n_names: int, index: NDArray[np.int_], what: str, *, empty_is_zero: bool
) -> Array:
    """One float64[] field reordered into model order; checks length and finiteness.

    Args:
        values: the field (length ``n_names``, or empty when ``empty_is_zero``).
        n_names: number of names in the message.
        index: from :func:`match_joints`.
        empty_is_zero: an empty field means zeros (JointState.velocity may be empty).
    """
    arr = as_float_array(values, what)
    if arr.size == 0 and empty_is_zero:
        return np.zeros(index.size)
    if arr.size != n_names:
        raise InputError(f"{what}: expected {n_names} values (one per joint name), got {arr.size}")
    out = arr[index]
    if not np.all(np.isfinite(out)):
        raise InputError(f"{what}: contains NaN or infinite values")
    return out


@dataclass(frozen=True)
class JointArrays:
    """Joint positions, velocities and efforts in model order (shape (nq,) each)."""

    position: Array
    velocity: Array
    effort: Array
    has_velocity: bool
    has_effort: bool


def joint_state_to_arrays(msg: Any, model_joints: Sequence[str]) -> JointArrays:
    """A sensor_msgs/JointState to arrays in model order.

    Extra joints are ignored (a real robot may publish more joints than the model has);
    missing joints, wrong lengths, NaN positions and infinite values raise InputError.
    ``velocity`` and ``effort`` may be empty (the message allows it) or NaN: ros2_control's
    joint_state_broadcaster fills the interfaces a hardware lacks with NaN. Either way the field
    is missing: zeros in the array and ``has_velocity`` / ``has_effort`` False, for the consumer
    that needs it to decide (estimate it, or refuse).
    """
    names = list(msg.name)
    index = match_joints(model_joints, names, allow_extra=True, what="JointState.name")
    n = len(names)
    q = ordered_values(msg.position, n, index, "JointState.position", empty_is_zero=False)
    fields = []
    for what, raw in (("JointState.velocity", msg.velocity), ("JointState.effort", msg.effort)):
        values = as_float_array(raw, what)
        if values.size == n and np.any(np.isnan(values[index])):
            values = values[:0]  # an interface the hardware does not have
        fields.append((ordered_values(values, n, index, what, empty_is_zero=True), values.size > 0))
    (qd, has_qd), (tau, has_tau) = fields
    return JointArrays(q, qd, tau, has_qd, has_tau)


def fill_joint_state(
    msg: Any,
    joint_names: Sequence[str],
    position: Any,
    velocity: Any | None = None,
    effort: Any | None = None,
) -> Any:
    """Write names and arrays (model order) into a JointState; returns ``msg``."""
    msg.name = [str(n) for n in joint_names]
    msg.position = to_list(position)
    msg.velocity = to_list(velocity) if velocity is not None else []
    msg.effort = to_list(effort) if effort is not None else []
    return msg


def request_vector(
    names: Sequence[str], values: Any, model_joints: Sequence[str], what: str, *, empty_is_zero: bool
) -> Array:
    """A float64[] field of a service request in model order.

    Empty ``names`` means the model's order. In a request every name must be a model joint
    (an unknown one is an error, listing the valid names) and every model joint must appear.
    """
    names = list(names)
    if not names:
        arr = as_float_array(values, what)
        if arr.size == 0 and empty_is_zero:
            return np.zeros(len(model_joints))
        if arr.size != len(model_joints):
            raise InputError(
                f"{what}: expected {len(model_joints)} values ordered as {list(model_joints)}, got {arr.size}"
            )
        if not np.all(np.isfinite(arr)):
            raise InputError(f"{what}: contains NaN or infinite values")
        return arr
    index = match_joints(model_joints, names, allow_extra=False)
    return ordered_values(values, len(names), index, what, empty_is_zero=empty_is_zero)


def stamp_nanoseconds(stamp: Any) -> int:
    """builtin_interfaces/Time (sec, nanosec) to integer nanoseconds (exact, unlike a double)."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def duration_to_seconds(d: Any) -> float:
    """builtin_interfaces/Duration (sec, nanosec) to seconds."""
    return float(d.sec) + 1e-9 * float(d.nanosec)


def seconds_to_duration(t: float) -> tuple[int, int]:
    """Seconds to (sec, nanosec) with 0 <= nanosec < 1e9, as builtin_interfaces/Duration wants."""
    if not math.isfinite(t):
        raise InputError(f"time: expected a finite number of seconds, got {t}")
    if not -(2**31) <= t < 2**31:  # its sec field is an int32
        raise InputError(f"time: {t:g} s does not fit a builtin_interfaces/Duration (|t| < 2^31 s, 68 years)")
    total = int(round(t * 1e9))
    sec, nanosec = divmod(total, 1_000_000_000)
    return int(sec), int(nanosec)


def fill_duration(d: Any, t: float) -> Any:
    """Write seconds into a Duration (or Time) message; returns it."""
    d.sec, d.nanosec = seconds_to_duration(t)
    return d


def float64_multi_array_to_vector(
    msg: Any, command_joints: Sequence[str], model_joints: Sequence[str]
) -> Array:
    """Effort command (std_msgs/Float64MultiArray, ``command_joints`` order) in model order.

    This is the convention of ros2_control's forward command controllers
    (JointGroupEffortController): ``data[k]`` is the command of ``joints[k]``. Model joints that
    are not commanded get 0.
    """
    data = as_float_array(msg.data, "Float64MultiArray.data")
    if data.size != len(command_joints):
        raise InputError(
            f"Float64MultiArray.data: expected {len(command_joints)} values ordered as {list(command_joints)}, "
            f"got {data.size}"
        )
    if not np.all(np.isfinite(data)):
        raise InputError("Float64MultiArray.data: contains NaN or infinite values")
    out = np.zeros(len(model_joints))
    for k, name in enumerate(command_joints):
        if name not in model_joints:
            raise UnknownNameError("joint", name, model_joints)
        out[list(model_joints).index(name)] = data[k]
    return out


def joint_state_effort_to_vector(msg: Any, model_joints: Sequence[str]) -> Array:
    """Effort command carried by a sensor_msgs/JointState (joints by name) in model order.

    This is how ``topic_based_ros2_control/TopicBasedSystem`` sends an effort command
    interface's values: ``name`` and ``effort`` filled, ``position``/``velocity`` empty. Every
    model joint must be named; unknown or repeated names, a wrong length or a NaN are refused.
    """
    names = list(msg.name)
    index = match_joints(model_joints, names, allow_extra=False, what="JointState.name")
    return ordered_values(msg.effort, len(names), index, "JointState.effort", empty_is_zero=False)


def fill_float64_multi_array(
    msg: Any, values: Any, model_joints: Sequence[str], command_joints: Sequence[str]
) -> Any:
    """Write model-order ``values`` into ``msg.data`` in ``command_joints`` order; returns ``msg``.

    The layout is left empty (a flat array), as the forward command controllers expect.
    """
    arr = np.asarray(values, dtype=float)
    index = [list(model_joints).index(j) for j in command_joints]
    msg.data = to_list(arr[index])
    return msg


def wrench_to_array(w: Any) -> Array:
    """geometry_msgs/Wrench to [fx, fy, fz, tx, ty, tz]."""
    out = np.array([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z], dtype=float)
    if not np.all(np.isfinite(out)):
        raise InputError("wrench: contains NaN or infinite values")
    return out


@dataclass(frozen=True)
class TrajectoryArrays:
    """A joint trajectory as arrays: times (N,), positions/velocities/accelerations (N, nq)."""

    time: Array
    position: Array
    velocity: Array
    acceleration: Array
    estimated: tuple[str, ...]  # fields that were missing and estimated by finite differences


def _derivative(t: Array, x: Array) -> Array:
    """d x / d t along axis 0 by second-order finite differences (numpy.gradient)."""
    if t.size < 2:
        return np.zeros_like(x)
    return np.gradient(x, t, axis=0, edge_order=2 if t.size > 2 else 1)


def trajectory_to_arrays(msg: Any, model_joints: Sequence[str]) -> TrajectoryArrays:
    """A trajectory_msgs/JointTrajectory to arrays in model order.

    Every point needs positions; velocities and accelerations are taken from the points when
    every point has them, otherwise estimated by finite differences over ``time_from_start``
    (which must then increase strictly).
    """
    names = list(msg.joint_names)
    index = match_joints(model_joints, names, allow_extra=False, what="JointTrajectory.joint_names")
    points = list(msg.points)
    if not points:
        raise InputError("JointTrajectory.points: the trajectory has no points")
    if len(points) > MAX_TRAJECTORY_POINTS:
        raise InputError(f"JointTrajectory.points: {len(points):,} points, more than {MAX_TRAJECTORY_POINTS:,}; "
                         "send the trajectory in parts")
    n = len(names)
    t = np.array([duration_to_seconds(p.time_from_start) for p in points])
    Q = np.array([ordered_values(p.positions, n, index, f"points[{k}].positions", empty_is_zero=False)
                  for k, p in enumerate(points)])
    estimated: list[str] = []
    if np.any(np.diff(t) < 0):
        raise InputError("JointTrajectory.points: time_from_start must not decrease")

    def field(attr: str, fallback: Callable[[], Array]) -> Array:
        lengths = {len(getattr(p, attr)) for p in points}
        if lengths == {0}:
            if len(points) > 1 and np.any(np.diff(t) <= 0):
                raise InputError(f"JointTrajectory.points: {attr} are missing and time_from_start "
                                 "does not increase strictly, so they cannot be estimated")
            estimated.append(attr)
            return fallback()
        return np.array([ordered_values(getattr(p, attr), n, index, f"points[{k}].{attr}", empty_is_zero=False)
                         for k, p in enumerate(points)])

    Qd = field("velocities", lambda: _derivative(t, Q))
    Qdd = field("accelerations", lambda: _derivative(t, Qd))
    return TrajectoryArrays(t, Q, Qd, Qdd, tuple(estimated))


def fill_joint_trajectory(
    msg: Any,
    point_type: Callable[[], Any],
    joint_names: Sequence[str],
    time: Any,
    position: Any,
    velocity: Any | None = None,
    acceleration: Any | None = None,
    effort: Any | None = None,
) -> Any:
    """Write a sampled trajectory (arrays (N, nq), model order) into a JointTrajectory.

    Args:
        msg: the JointTrajectory to fill (its header is left to the caller).
        point_type: the JointTrajectoryPoint class (called without arguments).
        time: times from start [s], (N,).
    """
    t = np.atleast_1d(np.asarray(time, dtype=float))
    Q = np.asarray(position, dtype=float).reshape(t.size, -1)
    fields = {"velocities": velocity, "accelerations": acceleration, "effort": effort}
    arrays = {k: (None if v is None else np.asarray(v, dtype=float).reshape(t.size, -1)) for k, v in fields.items()}
    msg.joint_names = [str(n) for n in joint_names]
    points = []
    for k in range(t.size):
        p = point_type()
        p.positions = to_list(Q[k])
        for attr, arr in arrays.items():
            setattr(p, attr, to_list(arr[k]) if arr is not None else [])
        fill_duration(p.time_from_start, float(t[k]))
        points.append(p)
    msg.points = points
    return msg
