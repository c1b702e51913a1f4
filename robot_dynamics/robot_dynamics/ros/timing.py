"""Time-optimal timing of untimed paths for the trajectory node, without rclpy.

The trajectory node's ``~/time_optimal`` service (robot_dynamics_interfaces/TimeOptimal) and
its FollowJointTrajectory server, for an untimed goal when ``time_untimed_goals`` is set, time
a geometric path with :func:`robot_dynamics.trajectory.time_optimal`: the points' positions
joined by a C2 cubic spline on a chord-length parameter, the fastest motion along it that keeps
the joints' velocity, acceleration and effort limits (and the actuators' efforts where given),
starting and ending at rest.

A request's limits override the node's defaults per joint: the model's velocity limits, no
acceleration limit, and the model's effort limits times ``effort_scaling`` (the node's
``time_optimal.effort_scaling``, 0.9: 10 % of every limit kept for the feedback, as ``~/plan``'s
torque scaling keeps). Arrays are in the model's joint order; a message's own joint order is
kept in the answer. Nothing here raises out of a service callback: a bad request (NaN, an
unknown or missing joint, wrong lengths, a path the effort limits cannot hold,
:class:`robot_dynamics.errors.PathInfeasibleError`) is ``success = False`` with a message
naming it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ..model import RobotModel
from ..trajectory import TimeOptimalTrajectory, Trajectory, time_optimal
from . import conversion as cv
from .logic import guarded

__all__ = ["PathTimer", "PathPoints", "path_points", "is_untimed", "check_within_limits", "DEFAULT_GRID_POINTS",
           "MAX_GRID_POINTS"]

Array = NDArray[np.float64]

#: Grid points of the path parameter by default (``time_optimal.grid_points``).
DEFAULT_GRID_POINTS = 1001
#: The most grid points a request may ask for (one small LP each: about a second of solve).
MAX_GRID_POINTS = 100_001


@dataclass(frozen=True)
class PathPoints:
    """A JointTrajectory read as a path.

    Attributes:
        waypoints: the points' positions in the model's joint order, (K, nq) [rad or m].
        names: the message's joint order (the model's when the message names none).
        columns: where each of ``names`` is in the model's order (``q[:, columns]`` is the
            message's order).
    """

    waypoints: Array
    names: list[str]
    columns: list[int]


def path_points(msg: Any, model_joints: Sequence[str], what: str = "path") -> PathPoints:
    """The positions of a trajectory_msgs/JointTrajectory's points, in the model's joint order.

    ``joint_names`` empty means the model's order; otherwise every model joint is named once, in
    any order (as the other services of the package take them). Only positions are read.

    Raises:
        InputError: no points or too many, a missing or repeated joint, a wrong length, NaN.
        UnknownNameError: a name the model does not have (the valid ones listed).
    """
    model_joints = list(model_joints)
    given = list(msg.joint_names)
    if given:
        index = cv.match_joints(model_joints, given, allow_extra=False, what=f"{what}.joint_names")
        names = [str(n) for n in given]
    else:
        index, names = np.arange(len(model_joints)), model_joints
    points = list(msg.points)
    if not points:
        raise InputError(f"{what}.points: the path has no points")
    if len(points) > cv.MAX_TRAJECTORY_POINTS:
        raise InputError(f"{what}.points: {len(points):,} points, more than {cv.MAX_TRAJECTORY_POINTS:,}")
    if not given:  # the model's order: say so where a length is wrong
        for k, p in enumerate(points):
            if len(p.positions) != len(names):
                raise InputError(f"{what}.points[{k}].positions: expected {len(names)} values ordered as {names} "
                                 f"({what}.joint_names is empty), got {len(p.positions)}")
    q = np.array([cv.ordered_values(p.positions, len(names), index, f"{what}.points[{k}].positions",
                                    empty_is_zero=False) for k, p in enumerate(points)])
    return PathPoints(q.reshape(len(points), len(model_joints)), names, [model_joints.index(n) for n in names])


def is_untimed(msg: Any) -> bool:
    """Whether a JointTrajectory is an untimed path: points that all have ``time_from_start`` 0
    and positions only (no velocities, no accelerations), as a planner gives a path before its
    time parameterization."""
    points = list(msg.points)
    return bool(points) and all(
        cv.duration_to_seconds(p.time_from_start) == 0.0 and len(p.velocities) == 0 and len(p.accelerations) == 0
        for p in points)


def _limits(names: Sequence[str], values: Any, model_joints: Sequence[str], what: str, unit: str) -> Array | None:
    """A request's per-joint limits in model order (None when empty): finite and > 0."""
    if len(values) == 0:
        return None
    v = cv.request_vector(list(names), values, model_joints, what, empty_is_zero=False)
    bad = np.flatnonzero(v <= 0.0)
    if bad.size:
        raise InputError(f"{what}: expected limits > 0 [{unit}] (or none, for the defaults), got "
                         f"{v[bad[0]]:g} on joint {model_joints[bad[0]]!r}")
    return v


def _actuator_limits(values: Any, n: int) -> Array | None:
    """The actuators' effort limits (drive-train inputs order; None when empty): n finite values > 0."""
    if len(values) == 0:
        return None
    v = cv.as_float_array(values, "max_actuator_efforts")
    if v.size != n:
        raise InputError(f"max_actuator_efforts: expected {n} values, one per actuator in the order of "
                         f"InverseDynamics' actuator_efforts, got {v.size}")
    if not np.all(np.isfinite(v)) or np.any(v <= 0.0):
        raise InputError(f"max_actuator_efforts: expected finite limits > 0 [N m or N], got {cv.to_list(v)}")
    return v


def check_within_limits(model: RobotModel, q: Array, what: str) -> None:
    """Refuse positions (K, nq) outside the model's joint limits, naming the first point and joint."""
    outside = (q < model.lower - 1e-9) | (q > model.upper + 1e-9)
    if np.any(outside):
        k, j = (int(x) for x in np.argwhere(outside)[0])
        raise InputError(f"{what}[{k}]: joint {model.joint_names[j]!r} at {q[k, j]:.6g}, outside its limits "
                         f"[{model.lower[j]:.6g}, {model.upper[j]:.6g}]")


def _ratio(effort: Array, limit: Array) -> Array:
    """|effort| / limit per sample and joint, 0 where the limit is infinite."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.abs(effort) / limit
    return np.where(np.isfinite(limit), r, 0.0)


class PathTimer:
    """Times paths for the trajectory node: :func:`robot_dynamics.trajectory.time_optimal` with
    the node's defaults.

    Args:
        model: the robot (its velocity and effort limits are the defaults).
        effort_scaling: fraction of the model's effort limits used when a request gives none.
        grid_points: grid points of the path parameter when a request gives 0.
    """

    def __init__(self, model: RobotModel, *, effort_scaling: float = 0.9, grid_points: int = DEFAULT_GRID_POINTS):
        if not (math.isfinite(effort_scaling) and 0.0 < effort_scaling <= 1.0):
            raise InputError(f"effort_scaling: expected a fraction in (0, 1], got {effort_scaling!r}")
        self.model = model
        self.names = list(model.joint_names)
        self.effort_scaling = float(effort_scaling)
        self.grid_points = self._grid(int(grid_points), "grid_points")
        limit = np.asarray(model.effort_limit, dtype=float)
        #: The effort limits used by default [N m or N], model order (inf: unlimited).
        self.effort_limit = np.where(np.isfinite(limit), limit * self.effort_scaling, np.inf)

    @staticmethod
    def _grid(n: int, what: str) -> int:
        if not 2 <= n <= MAX_GRID_POINTS:
            raise InputError(f"{what}: expected 2 to {MAX_GRID_POINTS:,} grid points, got {n}")
        return n

    def time(
        self,
        waypoints: Array,
        *,
        velocity: Array | None = None,
        acceleration: Array | None = None,
        effort: Array | None = None,
        actuator_effort: Array | None = None,
        grid_points: int = 0,
    ) -> TimeOptimalTrajectory:
        """The time-optimal motion through ``waypoints`` (K >= 2, nq), model order.

        Limits left None take the defaults (the model's velocity limits, no acceleration limit,
        :attr:`effort_limit`, no actuator limit).

        Raises:
            InputError: fewer than 2 points, a grid out of range, and the timing's own errors
                (PathInfeasibleError where the efforts cannot hold the arm on the path).
        """
        if waypoints.shape[0] < 2:
            raise InputError(f"path.points: {waypoints.shape[0]} point; a path needs at least 2 (its first point is "
                             "where the motion starts)")
        grid = self._grid(int(grid_points), "grid_points") if grid_points else self.grid_points
        return time_optimal(self.model, waypoints, velocity_limit=velocity, acceleration_limit=acceleration,
                            torque_limit=self.effort_limit if effort is None else effort,
                            motor_torque_limit=actuator_effort, grid_points=grid)

    def peak(self, traj: TimeOptimalTrajectory, t: Array, effort: Array) -> tuple[float, str]:
        """(largest |effort| / limit at the times ``t``, the joint or actuator where), over the
        joint limits the timing used and the actuator limits where it had some."""
        joint_limit, motor_limit = traj.torque_limit, traj.motor_torque_limit  # the limits the timing used
        r = _ratio(effort, np.asarray(joint_limit, dtype=np.float64)).reshape(-1, self.model.nq)
        peak, where = float(r.max()), self.names[int(np.argmax(r.max(axis=0)))]
        if motor_limit is not None:
            rm = _ratio(np.asarray(traj.motor_torques(t)), np.asarray(motor_limit, dtype=np.float64))
            if rm.size and float(rm.max()) > peak:
                k = int(np.argmax(rm.max(axis=0)))
                inputs = getattr(self.model.drivetrain, "inputs", None) or self.names
                peak, where = float(rm.max()), f"actuator {inputs[k]}"
        return peak, where

    def handle(self, request: Any, response: Any, point_type: Callable[[], Any],
               sampled: Callable[[Trajectory, float], tuple[Array, Array, Array, Array]]) -> Any:
        """TimeOptimal service: time the request's path and fill the response.

        Args:
            point_type: the JointTrajectoryPoint class (the response's points are built with it).
            sampled: ``(trajectory, period) -> (t, q, qd, qdd)``, the node's sampling (period 0:
                its sample_period).
        """

        def work() -> None:
            path = path_points(request.path, self.names)
            check_within_limits(self.model, path.waypoints, "path.points")
            names = list(request.path.joint_names)
            traj = self.time(
                path.waypoints,
                velocity=_limits(names, request.max_velocities, self.names, "max_velocities", "rad/s or m/s"),
                acceleration=_limits(names, request.max_accelerations, self.names, "max_accelerations",
                                     "rad/s^2 or m/s^2"),
                effort=_limits(names, request.max_efforts, self.names, "max_efforts", "N m or N"),
                actuator_effort=_actuator_limits(request.max_actuator_efforts, self.model.nq),
                grid_points=int(request.grid_points),
            )
            t, q, qd, qdd = sampled(traj, float(request.sample_period))
            tau = np.asarray(traj.torques(t), dtype=float).reshape(t.size, -1)
            c = path.columns
            cv.fill_joint_trajectory(response.trajectory, point_type, path.names, t, q[:, c], qd[:, c], qdd[:, c],
                                     tau[:, c])
            response.duration = float(traj.duration)
            response.peak_torque_ratio, where = self.peak(traj, t, tau)
            response.message = (f"timed {traj.duration:.3f} s, {t.size} points; peak effort "
                                f"{100.0 * response.peak_torque_ratio:.1f} % of its limit ({where}); solved in "
                                f"{1e3 * traj.compute_time:.1f} ms")

        return guarded(response, work)
