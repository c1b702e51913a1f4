"""What the trajectory, controller and simulator nodes do, without rclpy.

Each node owns one object of this module and its callbacks are one call each:

- :class:`TrajectoryStreamer` (trajectory node): plans with :func:`robot_dynamics.trajectory.plan`
  on a service request or a goal message, and gives the reference at any time.
- :class:`ControlLoop` (controller node): keeps the latest measured state and reference and
  ticks a controller of :mod:`robot_dynamics.control`, giving effort commands in the order of
  ros2_control's effort forward-command controller.
- :class:`SimulatedPlant` (simulator node): integrates the direct dynamics
  (:func:`robot_dynamics.aba`) under the latest effort command, held between commands.

Times are plain floats in seconds (the node passes its clock); arrays are in the model's
joint order. Nothing here raises once built: every per-message or per-tick method returns a
status, as controller update loops do.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..control import (
    ControllerBase,
    Reference,
    TaskController,
    TaskReference,
    actuator_to_joint,
    build_controller,
    joint_to_actuator,
)
from ..dynamics import gravity_torques
from ..errors import InputError, RobotDynamicsError, UnknownNameError
from ..kinematics import frame_pose, frame_velocity, jacobian_dot_qdot
from ..model import RobotModel
from ..simulation import Plant, PlantOptions
from ..trajectory import PROFILES, TabulatedTrajectory, Trajectory, plan, sample_table, scale_to_torque_limits
from . import conversion as cv
from .logic import guarded
from .timing import PathTimer, check_within_limits, path_points

__all__ = [
    "CONTROLLERS",
    "build_controller",
    "controller_options",
    "task_reference",
    "TrajectoryStreamer",
    "ControlLoop",
    "SimulatedPlant",
    "command_joint_order",
]

Array = NDArray[np.float64]

#: Controllers the controller node can run (``controller`` parameter).
from .params import CONTROLLERS


COMMAND_SPACES = ("joint", "actuator")
#: How the simulator node receives its effort commands (``command_type`` parameter).
COMMAND_TYPES = ("float64_multi_array", "joint_state")


def controller_options(params: Mapping[str, Any]) -> dict[str, Any]:
    """The controller node's parameters that belong to its chosen controller, as
    :func:`build_controller` options.

    computed_torque: ``friction_velocity`` (the other laws compensate no friction); lqr: its
    weights ``lqr.q``/``lqr.r`` (empty: the bandwidth design), ``lqr.relinearize_period`` and
    the node's ``rate`` (the gain is the discrete-time design at the node's period).
    """
    name = str(params["controller"]).replace("-", "_")
    if name == "computed_torque":
        return {"friction_velocity": params["friction_velocity"]}
    if name == "lqr":
        options: dict[str, Any] = {"rate": params["rate"], "relinearize_period": params["lqr.relinearize_period"]}
        for key, option in (("lqr.q", "Q"), ("lqr.r", "R")):
            if params.get(key) is not None and len(params[key]) > 0:
                options[option] = params[key]
        return options
    return {}


def _command_space(value: str) -> str:
    if value not in COMMAND_SPACES:
        raise InputError(f"command_space: expected one of {list(COMMAND_SPACES)}, got {value!r}")
    return value


def command_joint_order(model: RobotModel, joints: Sequence[str] | None) -> list[str]:
    """The command's joint order: ``joints`` (validated) or the model's order when empty.

    Raises:
        UnknownNameError: a name the model does not have. InputError: a repeated name.
    """
    if not joints:
        return list(model.joint_names)
    names = cv.check_names(joints, "joints")
    for j in names:
        model.joint_index(j)
    return names


def task_reference(model: RobotModel, frame: str, reference: Reference) -> TaskReference:
    """The motion of ``frame`` that a joint reference produces (for task-space controllers).

    pose = T(q_d), twist = J qd_d, accel = J qdd_d + Jdot qd_d (Khalil [9.33]), base axes.
    """
    pose = frame_pose(model, reference.q, frame)
    twist = frame_velocity(model, reference.q, reference.qd, frame)
    accel = frame_velocity(model, reference.q, reference.qdd, frame) + jacobian_dot_qdot(
        model, reference.q, reference.qd, frame
    )
    return TaskReference(pose, twist, accel)


def _reference_from_message(msg: Any, model_joints: Sequence[str]) -> Reference:
    """The first point of a JointTrajectory as a joint Reference (model order)."""
    arrays = cv.trajectory_to_arrays(msg, model_joints)
    return Reference(arrays.position[0], arrays.velocity[0], arrays.acceleration[0])


# -- trajectory node ---------------------------------------------------------------------


@dataclass
class _Active:
    trajectory: Trajectory
    start_time: float


class TrajectoryStreamer:
    """Plans point-to-point motions and gives the reference at any time.

    Args:
        model: the robot (its limits are the defaults).
        profile: default time law (one of :data:`robot_dynamics.trajectory.PROFILES`).
        duration: default duration [s]; 0 = minimum time under the limits.
        velocity_scaling: fraction of the model's velocity limits used by default.
        max_acceleration: default acceleration limit of every joint.
        sample_period: default period of the published JointTrajectory [s].
        torque_scaling: slow every plan until its torques keep 10 % of every effort limit.
        timer: times untimed paths (``~/time_optimal``, untimed FollowJointTrajectory goals);
            default: a :class:`PathTimer` with its defaults.
    """

    def __init__(
        self,
        model: RobotModel,
        *,
        profile: str = "quintic",
        duration: float = 0.0,
        velocity_scaling: float = 0.5,
        max_acceleration: float = 5.0,
        sample_period: float = 0.05,
        torque_scaling: bool = True,
        timer: PathTimer | None = None,
    ):
        if profile not in PROFILES:
            raise UnknownNameError("profile", profile, PROFILES)
        self.model = model
        self.names = list(model.joint_names)
        self.profile = profile
        self.duration = float(duration)
        self.velocity_limit = np.where(np.isfinite(model.velocity_limit), model.velocity_limit * velocity_scaling, np.inf)
        self.acceleration_limit = np.full(model.nq, float(max_acceleration))
        self.sample_period = float(sample_period)
        self.torque_scaling = bool(torque_scaling)
        self.timer = timer if timer is not None else PathTimer(model)
        self.current: Array | None = None
        self.active: _Active | None = None
        self.set_initial_goal(None, 0.0)

    # -- inputs --------------------------------------------------------------------------
    def on_joint_state(self, msg: Any) -> tuple[bool, str]:
        """Remember the measured position (start of the next plan)."""
        try:
            self.current = cv.joint_state_to_arrays(msg, self.names).position
            return True, "ok"
        except RobotDynamicsError as exc:
            return False, str(exc)
        except Exception as exc:  # noqa: BLE001 - a callback must never raise
            return False, f"internal error ({type(exc).__name__}): {exc}"

    def plan(
        self,
        start: Array | None,
        goal: Array,
        *,
        profile: str = "",
        duration: float = 0.0,
        max_velocities: Array | None = None,
        max_accelerations: Array | None = None,
    ) -> Trajectory:
        """A trajectory from ``start`` (default: the measured position) to ``goal`` (model order).

        Raises:
            InputError: no start known, limits of the wrong length, or the planner's own errors.
        """
        if start is None:
            if self.current is None:
                raise InputError("start_positions: empty and no joint state received yet; give the start")
            start = self.current
        kv = self.velocity_limit if max_velocities is None or len(max_velocities) == 0 else max_velocities
        ka = self.acceleration_limit if max_accelerations is None or len(max_accelerations) == 0 else max_accelerations
        T = duration if duration > 0 else (self.duration if self.duration > 0 else None)
        traj: Trajectory = plan(profile or self.profile, start, goal, kv, ka, duration=T, model=self.model)
        if self.torque_scaling and np.all(np.isfinite(self.model.effort_limit)):
            # Slow the motion until its inverse-dynamics torques keep 10 % of every effort limit
            # for the feedback (Khalil's remark after [8.3]); kinematic limits alone saturate a
            # heavy arm's shoulder and elbow.
            traj, _ = scale_to_torque_limits(self.model, traj, margin=0.9)
        return traj

    def start(self, trajectory: Trajectory, now: float) -> None:
        """Stream ``trajectory`` from time ``now`` [s] on."""
        self.active = _Active(trajectory, float(now))

    def restart_at(self, now: float) -> None:
        """The active motion begins at ``now`` [s] instead of when its request arrived.

        A node calls it once planning is done: planning (the torque scaling, a first kernel
        call) can take a sizeable fraction of a second, and a motion stamped at its request would
        begin with the reference already that far along it, a jump that saturates the drives.
        """
        if self.active is not None:
            self.active = _Active(self.active.trajectory, float(now))

    def sampled(self, trajectory: Trajectory, period: float = 0.0) -> tuple[Array, Array, Array, Array]:
        """(t, q, qd, qdd) at the sample period (the rows of a JointTrajectory)."""
        period = period if period > 0 else self.sample_period
        most = cv.MAX_TRAJECTORY_POINTS  # the points of one JointTrajectory message
        if not (np.isfinite(period) and trajectory.duration / period < most):
            raise InputError(f"sample_period: {period:g} s over {trajectory.duration:g} s gives more than {most:,} "
                             f"points; expected a finite period > duration / {most:,}")
        return sample_table(trajectory, rate=1.0 / period)

    def handle_plan(self, request: Any, response: Any, point_type: Callable[[], Any], now: float) -> Any:
        """PlanTrajectory service: plan, fill the response, start streaming when ``execute``."""

        def work() -> None:
            names = list(request.joint_names)
            start = (None if len(request.start_positions) == 0 else
                     cv.request_vector(names, request.start_positions, self.names, "start_positions",
                                       empty_is_zero=False))
            goal = cv.request_vector(names, request.goal_positions, self.names, "goal_positions", empty_is_zero=False)
            kv = (None if len(request.max_velocities) == 0 else
                  cv.request_vector(names, request.max_velocities, self.names, "max_velocities", empty_is_zero=False))
            ka = (None if len(request.max_accelerations) == 0 else
                  cv.request_vector(names, request.max_accelerations, self.names, "max_accelerations",
                                    empty_is_zero=False))
            traj = self.plan(start, goal, profile=str(request.profile), duration=float(request.duration),
                             max_velocities=kv, max_accelerations=ka)
            t, q, qd, qdd = self.sampled(traj, float(request.sample_period))
            cv.fill_joint_trajectory(response.trajectory, point_type, self.names, t, q, qd, qdd)
            response.duration = float(traj.duration)
            if request.execute:
                self.start(traj, now)
            response.message = f"planned {traj.duration:.3f} s, {t.size} points" + (
                ", executing" if request.execute else "")

        return guarded(response, work)

    def handle_goal(self, msg: Any, now: float) -> tuple[Trajectory | None, str]:
        """A goal (JointState positions, joints by name): plan from the current position and start."""
        try:
            goal = cv.joint_state_to_arrays(msg, self.names).position
            traj = self.plan(None, goal)
            self.start(traj, now)
            return traj, f"planned {traj.duration:.3f} s to the goal"
        except RobotDynamicsError as exc:
            return None, str(exc)
        except Exception as exc:  # noqa: BLE001 - a callback must never raise
            return None, f"internal error ({type(exc).__name__}): {exc}"

    def handle_execute(self, msg: Any, now: float, *, start_tolerance: float = 0.05) -> tuple[Trajectory | None, str]:
        """Execute a whole JointTrajectory (an excitation from ``robot-dynamics excite``, say).

        The points (joints by name, missing velocities or accelerations estimated) become a C2
        tabulated trajectory; a first point later than t = 0 is reached from the measured
        position at rest. Refused (None, reason): no joint state yet, a start farther than
        ``start_tolerance`` [rad or m] from the measured position, a point outside the
        position limits, or a velocity above the velocity limits.
        """
        try:
            if self.current is None:
                return None, "no joint state received yet: the trajectory must start where the arm is"
            arr = cv.trajectory_to_arrays(msg, self.names)
            t, q, qd, qdd = arr.time, arr.position, arr.velocity, arr.acceleration
            if t[0] > 0.0:
                t = np.r_[0.0, t]
                q = np.vstack([self.current, q])
                qd = np.vstack([np.zeros(len(self.names)), qd])
                qdd = np.vstack([np.zeros(len(self.names)), qdd])
            far = np.abs(q[0] - self.current)
            if np.any(far > start_tolerance):
                bad = [self.names[i] for i in np.flatnonzero(far > start_tolerance)]
                return None, (f"the trajectory starts up to {far.max():.3g} away from the measured position on {bad}; "
                              "move there first (a goal) or add a first point later than 0 s")
            why = self._outside_limits(q, qd)
            if why is not None:
                return None, why
            traj = TabulatedTrajectory(t, q, qd, qdd)
            self.start(traj, now)
            return traj, f"executing {traj.duration:.3f} s, {t.size} points"
        except RobotDynamicsError as exc:
            return None, str(exc)
        except Exception as exc:  # noqa: BLE001 - a callback must never raise
            return None, f"internal error ({type(exc).__name__}): {exc}"

    def _outside_limits(self, q: Array, qd: Array, slack: float = 1e-9) -> str | None:
        """Why positions (N, nq) or velocities leave the joint or velocity limits (relative ``slack``
        on the velocities), or None."""
        lo, hi = self.model.lower, self.model.upper
        out = np.flatnonzero(np.any((q < lo - 1e-9) | (q > hi + 1e-9), axis=0))
        if out.size:
            return f"positions outside the joint limits on {[self.names[i] for i in out]}"
        fast = np.flatnonzero(np.any(np.abs(qd) > self.model.velocity_limit * (1 + slack), axis=0))
        if fast.size:
            return f"velocities above the limits on {[self.names[i] for i in fast]}"
        return None

    def handle_time_optimal(self, request: Any, response: Any, point_type: Callable[[], Any]) -> Any:
        """TimeOptimal service: the time-optimal timing of the request's path (nothing is executed)."""
        return self.timer.handle(request, response, point_type, self.sampled)

    def handle_untimed(self, msg: Any, now: float, *, start_tolerance: float = 0.05) -> tuple[Trajectory | None, str]:
        """Time an untimed path (a JointTrajectory of positions only, joints by name) and execute it.

        The motion starts at the measured position: a path whose first point is farther than
        ``start_tolerance`` from it, or a path of one point, begins there (the measured position
        is put before the points). The path is timed by :attr:`timer` with the node's defaults
        (time-optimal under the velocity and effort limits, at rest at both ends). Refused (None,
        reason): no joint state yet, a point outside the joint limits, a path the limits cannot
        hold (the timing's error), or a timed motion that leaves the joint limits between points.
        """
        try:
            if self.current is None:
                return None, "no joint state received yet: the path must start where the arm is"
            q = path_points(msg, self.names, "trajectory").waypoints
            check_within_limits(self.model, q, "trajectory.points")
            if q.shape[0] == 1 or np.any(np.abs(q[0] - self.current) > start_tolerance):
                q = np.vstack([self.current, q])
            traj = self.timer.time(q)
            _, qs, qds, _ = self.sampled(traj)
            why = self._outside_limits(qs, qds, slack=1e-6)  # the timing's own tolerance between grid points
            if why is not None:
                return None, f"the timed path: {why} (the spline through the points overshoots; add points)"
            self.start(traj, now)
            return traj, f"timed the path (time-optimal, {q.shape[0]} points): executing {traj.duration:.3f} s"
        except RobotDynamicsError as exc:
            return None, str(exc)
        except Exception as exc:  # noqa: BLE001 - a callback must never raise
            return None, f"internal error ({type(exc).__name__}): {exc}"

    def set_initial_goal(self, goal: Sequence[float] | None, delay: float) -> None:
        """Move to ``goal`` (model order) once, ``delay`` seconds after the first joint state.

        Raises:
            InputError: wrong length or NaN (a configuration error).
        """
        self._initial: Array | None = None
        if goal:
            self._initial = cv.request_vector([], list(goal), self.names, "initial_goal", empty_is_zero=False)
        self._initial_delay = float(delay)
        self._first_state_time: float | None = None

    def initial_goal_due(self, now: float, consumer: bool = True) -> tuple[Trajectory | None, str]:
        """Start the initial goal when it is due; (trajectory or None, status).

        ``consumer`` says whether anything listens to the reference (the controller): the delay
        counts from the first joint state received while one does, so that nothing is sent
        before its subscriber exists.
        """
        goal = self._initial
        if goal is None or self.current is None:
            return None, "no initial goal pending"
        if not consumer:
            self._first_state_time = None
            return None, "initial goal waiting for a subscriber of the reference"
        if self._first_state_time is None:
            self._first_state_time = now
        if now - self._first_state_time < self._initial_delay:
            return None, "initial goal waiting"
        self._initial = None
        try:
            traj = self.plan(None, goal)
        except RobotDynamicsError as exc:
            return None, f"initial goal rejected: {exc}"
        self.start(traj, now)
        return traj, f"planned {traj.duration:.3f} s to the initial goal"

    def reference(self, now: float) -> Reference | None:
        """Reference at time ``now``: the active trajectory (holding its goal after the end)."""
        if self.active is None:
            return None
        q, qd, qdd = self.active.trajectory.sample(max(0.0, now - self.active.start_time))
        return Reference(q.reshape(-1), qd.reshape(-1), qdd.reshape(-1))

    def fill_reference(self, msg: Any, point_type: Callable[[], Any], now: float) -> bool:
        """Write the reference at ``now`` as a one-point JointTrajectory; False when idle."""
        ref = self.reference(now)
        if ref is None or self.active is None:
            return False
        t = now - self.active.start_time
        cv.fill_joint_trajectory(msg, point_type, self.names, [max(0.0, t)], ref.q, ref.qd, ref.qdd)
        return True


# -- controller node ---------------------------------------------------------------------


class ControlLoop:
    """Latest state + latest reference -> one controller tick -> effort command.

    Args:
        model: the controller's model.
        controller: built by :func:`build_controller`.
        command_joints: joint order of the command (the forward-command controller's ``joints``).
        state_timeout: a state older than this [s] stops the law: the command becomes the
            gravity torque of the last measured position (hold), as the controllers' fault path.
        hold_on_start: before any reference, regulate to the first measured position.
        command_space: ``"joint"`` (default): joint efforts in ``command_joints`` order, what
            ros2_control's JointGroupEffortController takes; ``"actuator"``: the efforts at the
            motors of a geared robot (its drive train's inputs order, ``command_joints`` unused).
    """

    def __init__(
        self,
        model: RobotModel,
        controller: ControllerBase,
        command_joints: Sequence[str],
        *,
        state_timeout: float = 0.5,
        hold_on_start: bool = True,
        command_space: str = "joint",
    ):
        self.model = model
        self.controller = controller
        self.names = list(model.joint_names)
        self.command_space = _command_space(command_space)
        self.command_joints = command_joint_order(model, command_joints)
        self.state_timeout = float(state_timeout)
        self.hold_on_start = hold_on_start
        self.task_frame: str | None = getattr(controller, "frame", None) if isinstance(controller, TaskController) else None
        self.q: Array | None = None
        self.qd: Array | None = None
        self.state_time = -np.inf
        self.ref: Reference | None = None
        self.hold: Reference | None = None
        self.velocity_estimated = False

    def on_joint_state(self, msg: Any, now: float) -> tuple[bool, str]:
        try:
            s = cv.joint_state_to_arrays(msg, self.names)
        except RobotDynamicsError as exc:
            return False, str(exc)
        except Exception as exc:  # noqa: BLE001
            return False, f"internal error ({type(exc).__name__}): {exc}"
        qd = s.velocity
        self.velocity_estimated = not s.has_velocity
        if not s.has_velocity:
            # Position-only hardware (NaN or empty velocities): a backward difference of the
            # measured positions, zero on the first state.
            dt = float(now) - self.state_time
            qd = (s.position - self.q) / dt if self.q is not None and 0.0 < dt <= self.state_timeout else np.zeros(self.model.nq)
        self.q, self.qd, self.state_time = s.position, qd, float(now)
        if self.hold is None:
            self.hold = Reference(s.position.copy(), np.zeros(self.model.nq), np.zeros(self.model.nq))
        return True, "ok"

    def on_reference(self, msg: Any) -> tuple[bool, str]:
        try:
            self.ref = _reference_from_message(msg, self.names)
            return True, "ok"
        except RobotDynamicsError as exc:
            return False, str(exc)
        except Exception as exc:  # noqa: BLE001
            return False, f"internal error ({type(exc).__name__}): {exc}"

    def tick(self, now: float) -> tuple[Array | None, str]:
        """One control period: (effort command in ``command_joints`` order or None, status).

        None means nothing to command yet (no joint state received).
        """
        try:
            if self.q is None or self.qd is None:
                return None, "waiting for joint states"
            if now - self.state_time > self.state_timeout:
                tau = np.clip(gravity_torques(self.model, self.q), -self.model.effort_limit, self.model.effort_limit)
                return self._command(tau), f"joint states older than {self.state_timeout} s: holding gravity"
            ref = self.ref if self.ref is not None else (self.hold if self.hold_on_start else None)
            if ref is None:
                return None, "waiting for a reference"
            target: Any = ref if self.task_frame is None else task_reference(self.model, self.task_frame, ref)
            out = self.controller.update(now, self.q, self.qd, target)
            status = out.message or out.status.name or "ok"
            if self.velocity_estimated:
                status += "; velocities estimated from positions (the joint states carry none)"
            return self._command(out.tau), status
        except Exception as exc:  # noqa: BLE001 - a tick must never raise
            return None, f"internal error ({type(exc).__name__}): {exc}"

    def _command(self, tau: Array) -> Array:
        """Joint efforts in command order, or the actuator efforts (drive train) that produce them."""
        if self.command_space == "actuator":
            if self.q is None:
                raise InputError("no joint state received yet")
            return np.asarray(joint_to_actuator(self.model, self.q, tau), dtype=np.float64)
        return np.asarray(tau, dtype=float)[[self.names.index(j) for j in self.command_joints]]


# -- simulator node ----------------------------------------------------------------------


#: Longest RK4 substep the simulated plant takes [s].
MAX_SUBSTEP = 0.02
#: The longest stretch of the node's clock [s] one :meth:`SimulatedPlant.step_to` integrates: a
#: node not scheduled for longer than this (a stalled process) drops the rest.
MAX_CATCH_UP = 0.1


class SimulatedPlant:
    """The robot's direct dynamics integrated under a zero-order-hold effort command.

    Args:
        model: the simulated robot.
        q0: initial positions (model order); default zeros clipped into the joint limits.
        command_joints: joint order of the incoming Float64MultiArray commands.
        command_timeout: a command older than this [s] is dropped (zero effort). Before the
            first command, and while the command is NaN on every joint (ros2_control's "no
            command", ``command_type: joint_state``), the arm is held where it is (brakes on).
        friction: simulate joint friction.
        effort_saturation: clip commands to the model's effort limits.
        command_space: ``"joint"`` (joint efforts in ``command_joints`` order, as
            JointGroupEffortController takes them) or ``"actuator"`` (motor efforts of a geared
            robot, drive-train inputs order, mapped through the structure matrix).
        command_type: ``"float64_multi_array"`` (std_msgs/Float64MultiArray in
            ``command_joints`` order, the effort controller's topic) or ``"joint_state"``
            (sensor_msgs/JointState, efforts by joint name in the effort field: what
            ros2_control's TopicBasedSystem sends).
    """

    def __init__(
        self,
        model: RobotModel,
        q0: Sequence[float] | None = None,
        command_joints: Sequence[str] | None = None,
        *,
        command_timeout: float = 0.5,
        friction: bool = True,
        effort_saturation: bool = True,
        command_space: str = "joint",
        command_type: str = "float64_multi_array",
    ):
        self.model = model
        self.command_space = _command_space(command_space)
        if command_type not in COMMAND_TYPES:
            raise InputError(f"command_type: expected one of {list(COMMAND_TYPES)}, got {command_type!r}")
        self.command_type = command_type
        self.names = list(model.joint_names)
        self.command_joints = command_joint_order(model, command_joints)
        if q0 is None or len(q0) == 0:
            lo = np.where(np.isfinite(model.lower), model.lower, -np.inf)
            hi = np.where(np.isfinite(model.upper), model.upper, np.inf)
            self.q = np.clip(np.zeros(model.nq), lo, hi)
        else:
            self.q = cv.request_vector([], list(q0), self.names, "initial_positions", empty_is_zero=False)
        self.qd = np.zeros(model.nq)
        self.effort = np.zeros(model.nq)  # latest effort command (model or actuator order)
        self.applied = np.zeros(model.nq)  # joint efforts applied during the last step
        self.command_time = -np.inf
        self.commanded = False  # a command has come (the brakes were released once)
        self.command_timeout = float(command_timeout)
        self.friction = friction
        # the simulation package's rigid plant (a ROS arm is driven through its joints here)
        self._plant = Plant(model, PlantOptions(friction=friction, elastic_joints=False))
        self.effort_saturation = effort_saturation
        self.time = 0.0
        self.synced: float | None = None  # the node's clock [s] the state belongs to (step_to)
        self.status = "waiting for the first step"

    def on_command(self, msg: Any, now: float) -> tuple[bool, str]:
        """Take an effort command (Float64MultiArray in ``command_joints`` order, or a
        JointState with efforts by name: ``command_type``)."""
        try:
            if self.command_type == "joint_state":
                raw = cv.as_float_array(msg.effort, "JointState.effort")
                if raw.size and np.all(np.isnan(raw)):
                    # ros2_control's "no command": NaN in every command interface (before any
                    # controller wrote one, after one released the joints): the plant's brakes
                    # hold the arm until the next command, as SimulatedSystem's do
                    self.effort, self.command_time = np.full(self.model.nq, np.nan), float(now)
                    return True, "no command yet (NaN efforts)"
                effort = cv.joint_state_effort_to_vector(msg, self.names)
            else:
                order = self.command_joints if self.command_space == "joint" else self.names
                effort = cv.float64_multi_array_to_vector(msg, order, self.names)
        except RobotDynamicsError as exc:
            return False, str(exc)
        except Exception as exc:  # noqa: BLE001
            return False, f"internal error ({type(exc).__name__}): {exc}"
        if self.effort_saturation:
            effort = np.clip(effort, -self.model.effort_limit, self.model.effort_limit)
        self.effort, self.command_time, self.commanded = effort, float(now), True
        return True, "ok"

    def step(self, dt: float, now: float, substeps: int = 1) -> tuple[bool, str]:
        """Advance the state by ``dt`` [s] (classical RK4, ``substeps`` steps, effort held): one
        period of the engine's plant (:meth:`robot_dynamics.simulation.Plant.period`, the step of
        the simulation and of ros2_control's SimulatedSystem too).

        Brakes on until the first command, as a real arm waits for its controller (a simulated
        arm must not fall while the nodes start), and while the command is NaN efforts. A step
        longer than :data:`MAX_SUBSTEP` per substep is refused (RK4 on an arm's dynamics is not
        stable there: it would return "ok" and diverge).
        """
        try:
            n = self.model.nq
            tau, stale = None, False  # no command (none yet, or NaN efforts): the plant's brakes
            if np.isfinite(self.command_time) and not np.isnan(self.effort).all():
                stale = now - self.command_time > self.command_timeout
                effort = np.zeros(n) if stale else self.effort
                # joint efforts as commanded, or the motors' efforts through the plant's drive train
                tau = effort if self.command_space == "joint" else actuator_to_joint(self.model, self.q, effort)
            r = self._plant.period(np.concatenate([self.q, self.qd]), tau, float(dt), int(substeps), MAX_SUBSTEP)
            if r.refused:
                return False, (f"step of {dt!r} s in {substeps} substeps refused: each RK4 substep must be "
                               f"in (0, {MAX_SUBSTEP}] s (raise the rate or the substeps)")
            if r.braked:
                self.qd, self.applied = r.x[n:], r.applied
                waiting = "no command" if self.commanded else "waiting for the first command"
                return True, f"{waiting} (brakes on)"
            if r.diverged:
                self.qd = np.zeros(n)
                return False, "the integration diverged; velocities reset to zero"
            r.check(self.model)
            self.q, self.qd, self.time, self.applied = r.x[:n], r.x[n:], self.time + dt, r.applied
            return True, "no recent command: zero effort" if stale else "ok"
        except Exception as exc:  # noqa: BLE001 - a tick must never raise
            return False, f"internal error ({type(exc).__name__}): {exc}"

    def step_to(self, now: float, period: float, substeps: int = 1) -> tuple[bool, str]:
        """Advance the state to the node's clock ``now`` [s] in whole periods of ``period`` [s]
        (``substeps`` RK4 steps each): the simulated arm keeps to the clock that the controller
        and the trajectory run on, however late the node's timer fires.

        A timer callback costs far more than the step itself (rclpy's executor, the publication):
        a node asked for 1 kHz gets a few hundred calls a second on a loaded machine, and one
        period a call would run the arm in slow motion, seconds behind its reference. Here a late
        call integrates every period due since the last (rounded to the nearest), an early one
        none; a stall of over :data:`MAX_CATCH_UP` drops the rest and says so in the status.
        """
        if self.synced is None:
            self.synced = float(now) - period
        lag = float(now) - self.synced
        periods = min(int(round(lag / period)), max(1, int(MAX_CATCH_UP / period)))
        if periods <= 0:
            return True, self.status
        dropped = lag - periods * period
        stalled = dropped > period
        self.synced = float(now) if stalled else self.synced + periods * period
        ok, self.status = self.step(periods * period, now, periods * substeps)
        if ok and stalled:
            self.status = f"{self.status}; {dropped:.3f} s of the clock dropped (the node was not scheduled)"
        return ok, self.status

    def joint_state(self, msg: Any) -> Any:
        """Fill a JointState with the simulated state (efforts: the joint efforts applied)."""
        return cv.fill_joint_state(msg, self.names, self.q, self.qd, self.applied)
