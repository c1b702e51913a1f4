"""control_msgs/action/FollowJointTrajectory served by the trajectory node, without rclpy.

:class:`TrajectoryFollower` is what the trajectory node's ``~/follow_joint_trajectory`` action
server does; the node only moves goal handles and messages. It behaves as ros2_controllers'
joint_trajectory_controller does for the same action:

- **Validation** (nothing running is touched by a refused goal): the trajectory must name every
  joint of the arm, in any order, each once (else ``INVALID_JOINTS``: a subset is refused, the
  arm does not hold the joints a goal leaves out); it needs points, ``positions`` with one value
  per joint, ``velocities``/``accelerations`` empty or one per joint, finite numbers and
  strictly increasing ``time_from_start`` (else ``INVALID_GOAL``). Tolerances naming an unknown
  joint are ``INVALID_JOINTS``; a tolerance below 0 other than -1 or a negative
  ``goal_time_tolerance`` is ``INVALID_GOAL``. A ``header.stamp`` (not zero) is the start time;
  a trajectory that would already be over is ``OLD_HEADER_TIMESTAMP``. The trajectory itself
  then goes through :meth:`TrajectoryStreamer.handle_execute`, the path of the node's
  ``~/execute`` topic (the start within ``start_tolerance`` of the measured position, the
  joint and velocity limits): its refusals are ``INVALID_GOAL`` with its reason.
- **Untimed paths**: a goal whose points all have ``time_from_start`` 0 and positions only (a
  planner's path before its time parameterization) is refused ``INVALID_GOAL``, naming the
  parameter that changes it, unless the follower is built with ``time_untimed`` (the node's
  ``time_untimed_goals``): the path is then timed, time-optimal under the velocity and effort
  limits (:meth:`TrajectoryStreamer.handle_untimed`: it starts at the measured position), and
  executed as a timed goal is. Without it a goal of one point at 0 s keeps its meaning: be
  there now.
- **Tolerances** (control_msgs/JointTolerance): per joint and per quantity, a value > 0 is the
  bound, 0 keeps the node's default, -1 removes any bound. The defaults: no path bound unless
  ``path_position`` is set; at the goal ``goal_position`` and ``goal_velocity`` (the "stopped
  velocity"), no acceleration bound. Errors are ``desired - actual``; an acceleration bound
  compares with the acceleration estimated from successive joint-state velocities (a
  JointState carries none).
- **Execution**: while the trajectory runs (``t <= duration``), a path error beyond its bound
  ends the goal ``PATH_TOLERANCE_VIOLATED`` and the arm holds its measured position. After the
  end, the goal succeeds at the first state within the goal bounds of the last point, or ends
  ``GOAL_TOLERANCE_VIOLATED`` (the arm holding its position) once ``goal_time_tolerance`` (0:
  the default ``goal_time``) has passed; the ``error_string`` names the joint, the quantity,
  the error and the bound.
- **Preemption**: an accepted goal replaces the running one, which ends with ``INVALID_GOAL``
  and "preempted" in its ``error_string`` (joint_trajectory_controller's code and wording; it
  ends aborted because a goal only ends canceled after a cancel request). A motion started by
  another input of the node (``~/goal``, ``~/execute``, ``~/plan``) ends the goal the same way.
  A cancel request holds the measured position and ends the goal canceled.

Times are plain floats in seconds (the node's clock); arrays are in the model's joint order.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError, RobotDynamicsError
from ..trajectory import TabulatedTrajectory, Trajectory
from . import conversion as cv
from .motion import TrajectoryStreamer
from .timing import is_untimed

__all__ = ["ResultCode", "GoalRefused", "Tolerances", "Outcome", "FeedbackState", "TrajectoryFollower",
           "resolve_tolerances", "ERASE"]

Array = NDArray[np.float64]

#: The JointTolerance value that removes a bound.
ERASE = -1.0


class ResultCode(IntEnum):
    """``error_code`` values of control_msgs/action/FollowJointTrajectory's result."""

    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5


class GoalRefused(RobotDynamicsError):
    """A goal that fails validation: its result code and error string."""

    def __init__(self, code: ResultCode, message: str):
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Tolerances:
    """Bounds on |desired - actual| per joint (model order); ``inf`` = not checked."""

    position: Array
    velocity: Array
    acceleration: Array

    @classmethod
    def uniform(cls, n: int, position: float = 0.0, velocity: float = 0.0, acceleration: float = 0.0) -> Tolerances:
        """The same bounds on every joint; 0 = not checked (a parameter's convention)."""

        def bound(v: float) -> Array:
            return np.full(n, math.inf if v <= 0.0 else float(v))

        return cls(bound(position), bound(velocity), bound(acceleration))

    def violation(self, names: Sequence[str], error: Sequence[Array]) -> str | None:
        """The first bound exceeded by ``error`` = (position, velocity, acceleration errors), or None."""
        for quantity, bounds, err in zip(("position", "velocity", "acceleration"),
                                         (self.position, self.velocity, self.acceleration), error):
            over = np.flatnonzero(np.abs(err) > bounds)
            if over.size:
                i = int(over[np.argmax(np.abs(err[over]) - bounds[over])])
                return (f"{names[i]}: {quantity} error {err[i]:+.6g} exceeds the tolerance {bounds[i]:.6g} "
                        f"by {abs(err[i]) - bounds[i]:.3g}")
        return None


def _tolerance_value(default: float, value: float, what: str) -> float:
    """A JointTolerance value against its default: > 0 the bound, 0 the default, -1 none."""
    if not math.isfinite(value):
        raise GoalRefused(ResultCode.INVALID_GOAL, f"{what}: expected a finite tolerance, got {value}")
    if value > 0.0:
        return float(value)
    if value == 0.0:
        return default
    if value == ERASE:
        return math.inf
    raise GoalRefused(ResultCode.INVALID_GOAL, f"{what}: {value:g} is not a tolerance; expected > 0, 0 (the default) "
                                               "or -1 (no check)")


def resolve_tolerances(entries: Sequence[Any], defaults: Tolerances, names: Sequence[str], what: str) -> Tolerances:
    """The bounds of a goal's ``path_tolerance`` or ``goal_tolerance`` list (JointTolerance entries).

    Raises:
        GoalRefused: INVALID_JOINTS for a name the arm does not have or a repeated one;
            INVALID_GOAL for a value that is not a tolerance.
    """
    out = {q: getattr(defaults, q).copy() for q in ("position", "velocity", "acceleration")}
    seen: set[str] = set()
    for k, entry in enumerate(entries):
        name = str(entry.name)
        if name not in names:
            raise GoalRefused(ResultCode.INVALID_JOINTS, f"{what}[{k}]: unknown joint {name!r}; the arm's joints are "
                                                         f"{list(names)}")
        if name in seen:
            raise GoalRefused(ResultCode.INVALID_JOINTS, f"{what}[{k}]: joint {name!r} appears twice")
        seen.add(name)
        i = list(names).index(name)
        for q in out:
            out[q][i] = _tolerance_value(float(out[q][i]), float(getattr(entry, q)), f"{what}[{k}].{q}")
    return Tolerances(out["position"], out["velocity"], out["acceleration"])


@dataclass(frozen=True)
class Outcome:
    """How a goal ended: the key the node gave it, the result code and string, canceled or not."""

    key: Hashable
    code: ResultCode
    message: str
    canceled: bool = False

    @property
    def succeeded(self) -> bool:
        return self.code == ResultCode.SUCCESSFUL and not self.canceled


@dataclass(frozen=True)
class FeedbackState:
    """The feedback of the running goal (model order): desired, actual and error = desired - actual."""

    key: Hashable
    joint_names: list[str]
    time_from_start: float
    desired: tuple[Array, Array, Array]
    actual: tuple[Array, Array]
    error: tuple[Array, Array]


@dataclass
class _Goal:
    key: Hashable
    trajectory: Trajectory
    start_time: float
    path: Tolerances
    goal: Tolerances
    goal_time: float
    final: tuple[Array, Array, Array] = field(default_factory=tuple)  # type: ignore[assignment]


class TrajectoryFollower:
    """The FollowJointTrajectory action over a :class:`TrajectoryStreamer` (one goal at a time).

    Args:
        streamer: the trajectory node's streamer (executes and holds through it).
        goal_time: default time after the end to reach the goal bounds [s] (goal_time_tolerance 0).
        goal_position: default goal position bound of every joint; 0 = none.
        goal_velocity: default goal velocity bound ("stopped velocity"); 0 = none.
        path_position: default path position bound of every joint; 0 = none.
        start_tolerance: how far the first point (at t = 0) may be from the measured position.
        time_untimed: time an untimed goal (every point at 0 s, positions only) with the
            streamer's :meth:`TrajectoryStreamer.handle_untimed` instead of refusing it.
    """

    def __init__(
        self,
        streamer: TrajectoryStreamer,
        *,
        goal_time: float = 1.0,
        goal_position: float = 0.01,
        goal_velocity: float = 0.05,
        path_position: float = 0.0,
        start_tolerance: float = 0.05,
        time_untimed: bool = False,
    ):
        self.streamer = streamer
        self.names = list(streamer.names)
        n = len(self.names)
        if not (math.isfinite(goal_time) and goal_time >= 0.0):
            raise InputError(f"goal_time: expected a time >= 0 s, got {goal_time}")
        self.goal_time = float(goal_time)
        self.default_goal = Tolerances.uniform(n, goal_position, goal_velocity)
        self.default_path = Tolerances.uniform(n, path_position)
        self.start_tolerance = float(start_tolerance)
        self.time_untimed = bool(time_untimed)
        self.active: _Goal | None = None
        self.qd = np.zeros(n)
        self.qdd = np.zeros(n)
        self.has_velocity = False
        self._state_time: float | None = None

    # -- inputs --------------------------------------------------------------------------
    def on_joint_state(self, msg: Any, now: float) -> tuple[bool, str]:
        """Remember the measured state (the streamer's start of motion too); velocities missing
        are estimated from positions, accelerations always from velocities."""
        try:
            s = cv.joint_state_to_arrays(msg, self.names)
        except RobotDynamicsError as exc:
            return False, str(exc)
        except Exception as exc:  # noqa: BLE001 - a callback must never raise
            return False, f"internal error ({type(exc).__name__}): {exc}"
        previous, dt = self.streamer.current, (None if self._state_time is None else float(now) - self._state_time)
        qd = s.velocity
        if not s.has_velocity:
            qd = (s.position - previous) / dt if previous is not None and dt and dt > 0 else np.zeros(len(self.names))
        self.qdd = (qd - self.qd) / dt if dt and dt > 0 and self._state_time is not None else np.zeros(len(self.names))
        self.streamer.current, self.qd, self.has_velocity, self._state_time = s.position, qd, s.has_velocity, float(now)
        return True, "ok"

    def validate(self, goal: Any, now: float) -> tuple[Tolerances, Tolerances, float, float]:
        """Check a FollowJointTrajectory goal: (path bounds, goal bounds, goal time, start time).

        Raises:
            GoalRefused: with the result code and the reason.
        """
        traj = goal.trajectory
        names = [str(n) for n in traj.joint_names]
        if not names:
            raise GoalRefused(ResultCode.INVALID_JOINTS, "trajectory.joint_names is empty; expected the arm's joints "
                                                         f"{self.names}")
        unknown = [n for n in names if n not in self.names]
        if unknown:
            raise GoalRefused(ResultCode.INVALID_JOINTS, f"trajectory.joint_names: unknown joints {unknown}; the "
                                                         f"arm's joints are {self.names}")
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise GoalRefused(ResultCode.INVALID_JOINTS, f"trajectory.joint_names: {repeated} appear more than once")
        missing = [n for n in self.names if n not in names]
        if missing:
            raise GoalRefused(ResultCode.INVALID_JOINTS, f"trajectory.joint_names: missing joints {missing}; a goal "
                                                         "moves every joint of the arm (none is held for it)")
        multi = getattr(goal, "multi_dof_trajectory", None)
        if multi is not None and len(multi.points) > 0:
            raise GoalRefused(ResultCode.INVALID_GOAL, "multi_dof_trajectory: not supported; send joint positions")
        points = list(traj.points)
        if not points:
            raise GoalRefused(ResultCode.INVALID_GOAL, "trajectory.points: the trajectory is empty")
        n = len(names)
        times = []
        for k, p in enumerate(points):
            for attr, may_be_empty in (("positions", False), ("velocities", True), ("accelerations", True)):
                values = list(getattr(p, attr))
                if len(values) != n and not (may_be_empty and not values):
                    expected = f"{n} (or none)" if may_be_empty else f"{n}"
                    raise GoalRefused(ResultCode.INVALID_GOAL, f"trajectory.points[{k}].{attr}: {len(values)} values, "
                                                               f"expected {expected}, one per joint name")
                if not all(math.isfinite(float(v)) for v in values):
                    raise GoalRefused(ResultCode.INVALID_GOAL, f"trajectory.points[{k}].{attr}: NaN or infinite values")
            times.append(cv.duration_to_seconds(p.time_from_start))
        for attr in ("velocities", "accelerations"):
            given = [k for k, p in enumerate(points) if len(getattr(p, attr))]
            if given and len(given) < len(points):
                k = next(k for k in range(len(points)) if k not in given)
                raise GoalRefused(ResultCode.INVALID_GOAL, f"trajectory.points[{k}].{attr}: empty while other points "
                                                           f"give {attr}; give them on every point or on none")
        untimed = is_untimed(traj)
        if untimed and len(points) > 1 and not self.time_untimed:
            raise GoalRefused(ResultCode.INVALID_GOAL, "trajectory.points: every time_from_start is 0 and the points "
                                                       "carry positions only, an untimed path: give the points "
                                                       "increasing times, or set the trajectory node's parameter "
                                                       "time_untimed_goals to have such a path timed (time-optimal "
                                                       "under the effort limits)")
        if not (untimed and self.time_untimed) and (times[0] < 0.0 or any(b <= a for a, b in zip(times, times[1:]))):
            raise GoalRefused(ResultCode.INVALID_GOAL, f"trajectory.points: time_from_start must be >= 0 and increase "
                                                       f"strictly, got {[round(t, 6) for t in times]} s")
        path = resolve_tolerances(list(goal.path_tolerance), self.default_path, self.names, "path_tolerance")
        goal_bounds = resolve_tolerances(list(goal.goal_tolerance), self.default_goal, self.names, "goal_tolerance")
        goal_time = cv.duration_to_seconds(goal.goal_time_tolerance)
        if not (math.isfinite(goal_time) and goal_time >= 0.0):
            raise GoalRefused(ResultCode.INVALID_GOAL, f"goal_time_tolerance: expected >= 0 s, got {goal_time:g} s")
        goal_time = goal_time if goal_time > 0.0 else self.goal_time
        stamp = float(traj.header.stamp.sec) + 1e-9 * float(traj.header.stamp.nanosec)
        start = float(now)
        if stamp > 0.0:
            if stamp + times[-1] < now and not (untimed and self.time_untimed):  # an untimed path has no end yet
                raise GoalRefused(ResultCode.OLD_HEADER_TIMESTAMP,
                                  f"trajectory.header.stamp: the trajectory ended {now - stamp - times[-1]:.3f} s ago; "
                                  "stamp 0 starts it on arrival")
            start = max(stamp, start)
        return path, goal_bounds, goal_time, start

    def accept(self, goal: Any, key: Hashable, now: float) -> tuple[Outcome | None, list[Outcome]]:
        """Validate and start a goal: (its refusal or None, the goals it ended).

        A refused goal leaves the running one untouched; an accepted one ends it (preempted).
        """
        try:
            path, bounds, goal_time, start = self.validate(goal, now)
        except GoalRefused as exc:
            return Outcome(key, exc.code, str(exc)), []
        except Exception as exc:  # noqa: BLE001 - a callback must never raise
            return Outcome(key, ResultCode.INVALID_GOAL, f"internal error ({type(exc).__name__}): {exc}"), []
        # the path of ~/execute (an untimed path timed first); it starts only what it accepts (a
        # refusal leaves the motion as it is)
        run = (self.streamer.handle_untimed if self.time_untimed and is_untimed(goal.trajectory) else
               self.streamer.handle_execute)
        traj, status = run(goal.trajectory, start, start_tolerance=self.start_tolerance)
        if traj is None:
            return Outcome(key, ResultCode.INVALID_GOAL, status), []
        ended = self._end_active(ResultCode.INVALID_GOAL, "preempted by a new goal")
        self.active = _Goal(key, traj, start, path, bounds, goal_time, self._last_point(goal.trajectory))
        return None, ended

    def restart_at(self, now: float) -> None:
        """The running goal begins no earlier than ``now`` [s].

        A node calls it once a goal is accepted: timing an untimed path can take a sizeable
        fraction of a second (the first one of a process, which imports scipy), and a goal
        stamped at its arrival would begin with the reference already that far along it
        (:meth:`TrajectoryStreamer.restart_at`). A goal whose stamp lies later keeps it.
        """
        g = self.active
        if g is None or not now > g.start_time:
            return
        g.start_time = float(now)
        if self.streamer.active is not None and self.streamer.active.trajectory is g.trajectory:
            self.streamer.restart_at(now)

    def _last_point(self, traj: Any) -> tuple[Array, Array, Array]:
        """The goal's last point in model order; velocities and accelerations not given are 0
        (the arm at rest there), not the finite-difference estimates the streamer interpolates."""
        where = [str(n) for n in traj.joint_names]
        order = [where.index(j) for j in self.names]
        last = traj.points[-1]

        def values(attr: str) -> Array:
            v = np.asarray(list(getattr(last, attr)), dtype=float)
            return v[order] if v.size else np.zeros(len(self.names))

        return values("positions"), values("velocities"), values("accelerations")

    def cancel(self, key: Hashable, now: float) -> list[Outcome]:
        """A cancel request: the arm holds its measured position and the goal ends canceled."""
        if self.active is None or self.active.key != key:
            return []
        self.active = None
        self.hold(now)
        return [Outcome(key, ResultCode.SUCCESSFUL, "canceled: holding the measured position", canceled=True)]

    def hold(self, now: float) -> None:
        """Stream the measured position (stop the arm where it is)."""
        q = self.streamer.current
        if q is None:
            self.streamer.active = None
            return
        zero = np.zeros((1, len(self.names)))
        self.streamer.start(TabulatedTrajectory([0.0], q.reshape(1, -1), zero, zero), now)

    def _end_active(self, code: ResultCode, message: str) -> list[Outcome]:
        if self.active is None:
            return []
        key, self.active = self.active.key, None
        return [Outcome(key, code, message)]

    # -- the check on every state ------------------------------------------------------------
    def _errors(self, now: float) -> tuple[float, tuple[Array, Array, Array], tuple[Array, Array, Array]]:
        """(t, desired, desired - actual) at the time of the latest joint state (not later than ``now``):
        the desired motion where the arm was measured, not where it should be by the time of the check."""
        g = self.active
        assert g is not None and self.streamer.current is not None
        at = now if self._state_time is None else min(self._state_time, now)
        t = max(0.0, at - g.start_time)
        q, qd, qdd = g.trajectory.sample(t)
        desired = (q.reshape(-1), qd.reshape(-1), qdd.reshape(-1))
        actual = (self.streamer.current, self.qd, self.qdd)
        return t, desired, tuple(d - a for d, a in zip(desired, actual))  # type: ignore[return-value]

    def update(self, now: float) -> list[Outcome]:
        """Check the running goal against the latest state: the goals that ended by ``now``."""
        g = self.active
        if g is None:
            return []
        if self.streamer.active is None or self.streamer.active.trajectory is not g.trajectory:
            return self._end_active(ResultCode.INVALID_GOAL, "preempted by another motion of the trajectory node")
        if self.streamer.current is None:
            return []
        t, desired, error = self._errors(now)
        duration = g.trajectory.duration
        late = now - g.start_time - duration  # time since the end, on the node's clock
        if t <= duration:
            why = g.path.violation(self.names, error)
            if why is not None:
                self.active = None
                self.hold(now)
                return [Outcome(g.key, ResultCode.PATH_TOLERANCE_VIOLATED,
                                f"path tolerance violated at t = {t:.3f} s: {why}; holding the measured position")]
            why = "no joint state since the trajectory's end"
        else:
            final_error = tuple(f - a for f, a in zip(g.final, (self.streamer.current, self.qd, self.qdd)))
            why = g.goal.violation(self.names, final_error)
            if why is None:
                worst = float(np.max(np.abs(final_error[0])))
                return self._end_active(ResultCode.SUCCESSFUL, f"reached the goal {t - duration:.3f} s after the "
                                                               f"trajectory's end, largest position error {worst:.3g}")
        if late > g.goal_time:
            self.active = None
            self.hold(now)
            return [Outcome(g.key, ResultCode.GOAL_TOLERANCE_VIOLATED,
                            f"goal tolerance violated {late:.3f} s after the trajectory's end (goal time "
                            f"tolerance {g.goal_time:g} s): {why}; holding the measured position")]
        return []

    def feedback(self, now: float) -> FeedbackState | None:
        """The running goal's feedback at ``now`` (None when idle or before any joint state)."""
        if self.active is None or self.streamer.current is None:
            return None
        t, desired, error = self._errors(now)
        return FeedbackState(self.active.key, list(self.names), t, desired, (self.streamer.current.copy(),
                                                                             self.qd.copy()), (error[0], error[1]))
