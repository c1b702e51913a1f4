"""The ``trajectory`` node: plans point-to-point motions and streams the reference.

- service ``~/plan`` (robot_dynamics_interfaces/PlanTrajectory);
- service ``~/time_optimal`` (robot_dynamics_interfaces/TimeOptimal): the time-optimal timing of
  a path of positions under the velocity, acceleration and effort limits (nothing is executed);
- subscribes ``goal_topic`` (sensor_msgs/JointState: goal positions, joints by name) and
  ``joint_states_topic`` (the start of the next motion);
- publishes every plan on ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory) and, at
  ``publish_rate``, the current reference on ``~/reference`` (a one-point JointTrajectory:
  positions, velocities, accelerations; time_from_start = time since the motion started);
- serves ``~/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory, what MoveIt
  and rqt_joint_trajectory_controller send) where control_msgs is installed; without it the
  node logs once that the action is not served and does everything else. With
  ``time_untimed_goals`` a goal of positions only, every point at 0 s, is timed as
  ``~/time_optimal`` times a path and executed.

Every callback is one call into :class:`robot_dynamics.ros.motion.TrajectoryStreamer` or
:class:`robot_dynamics.ros.follow.TrajectoryFollower`.
"""

from __future__ import annotations

import importlib
from collections.abc import Hashable
from typing import Any

from rclpy.node import Node
from rclpy.task import Future
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics_interfaces.srv import PlanTrajectory, TimeOptimal

from . import conversion as cv
from .follow import FeedbackState, Outcome, TrajectoryFollower
from .logic import load_model_from_parameters
from .motion import TrajectoryStreamer
from .node_common import declare_parameters, run, seconds, service_qos
from .timing import PathTimer

__all__ = ["TrajectoryNode", "main"]


class TrajectoryNode(Node):
    """Thin rclpy shell over :class:`TrajectoryStreamer`."""

    def __init__(self, **kwargs: Any) -> None:
        """Build the node; ``kwargs`` go to rclpy's Node (parameter_overrides, context...)."""
        super().__init__("trajectory", **kwargs)
        p = declare_parameters(self, "trajectory")
        model = load_model_from_parameters(p)
        self.streamer = TrajectoryStreamer(
            model,
            profile=p["profile"],
            duration=p["duration"],
            velocity_scaling=p["velocity_scaling"],
            max_acceleration=p["max_acceleration"],
            sample_period=p["sample_period"],
            torque_scaling=p["torque_scaling"],
            timer=PathTimer(model, effort_scaling=p["time_optimal.effort_scaling"],
                            grid_points=p["time_optimal.grid_points"]),
        )
        self.streamer.set_initial_goal(p["initial_goal"], p["initial_goal_delay"])
        self.start_tolerance = p["start_tolerance"]
        self.follower = TrajectoryFollower(
            self.streamer, goal_time=p["constraints.goal_time"], goal_position=p["constraints.goal_position"],
            goal_velocity=p["constraints.stopped_velocity"], path_position=p["constraints.path_position"],
            start_tolerance=p["start_tolerance"], time_untimed=p["time_untimed_goals"],
        )
        self._goals: dict[Hashable, tuple[Any, Future]] = {}  # goal id -> (goal handle, its outcome)
        self.action_server = self._serve_follow_joint_trajectory(p["action_monitor_rate"])
        self.trajectory_pub = self.create_publisher(JointTrajectory, "~/joint_trajectory", 10)
        self.reference_pub = self.create_publisher(JointTrajectory, "~/reference", 10)
        self.create_subscription(JointState, p["joint_states_topic"], self._on_joint_state, 10)
        self.create_subscription(JointState, p["goal_topic"], self._on_goal, 10)
        self.create_subscription(JointTrajectory, "~/execute", self._on_execute, 10)
        self.create_service(PlanTrajectory, "~/plan", self._plan, qos_profile=service_qos(p["service_queue_depth"]))
        self.create_service(TimeOptimal, "~/time_optimal", self._time_optimal,
                            qos_profile=service_qos(p["service_queue_depth"]))
        self.create_timer(1.0 / p["publish_rate"], self._publish_reference)
        self.get_logger().info(f"planning for {model.name!r} with the {p['profile']} profile")

    def _on_joint_state(self, msg: JointState) -> None:
        ok, status = self.follower.on_joint_state(msg, seconds(self))
        if not ok:
            self.get_logger().warning(f"joint state ignored: {status}", throttle_duration_sec=2.0)
            return
        self._finish(self.follower.update(seconds(self)))
        # the reference's consumer: a controller node on ~/reference, or a trajectory-following
        # controller (joint_trajectory_controller in ros2_control's loop) on ~/joint_trajectory
        consumer = self.reference_pub.get_subscription_count() > 0 or self.trajectory_pub.get_subscription_count() > 0
        traj, status = self.streamer.initial_goal_due(seconds(self), consumer)
        if traj is not None:
            self.get_logger().info(status)
            self._publish_plan()
            self.streamer.restart_at(seconds(self))
        elif status.startswith("initial goal rejected"):
            self.get_logger().error(status)

    def _publish_plan(self) -> None:
        active = self.streamer.active
        if active is None:
            return
        times, q, qd, qdd = self.streamer.sampled(active.trajectory)
        msg = JointTrajectory()
        msg.header.stamp = self.get_clock().now().to_msg()
        cv.fill_joint_trajectory(msg, JointTrajectoryPoint, self.streamer.names, times, q, qd, qdd)
        self.trajectory_pub.publish(msg)

    def _on_goal(self, msg: JointState) -> None:
        now = seconds(self)
        traj, status = self.streamer.handle_goal(msg, now)
        if traj is None:
            self.get_logger().warning(f"goal rejected: {status}")
            return
        self.get_logger().info(status)
        self._publish_plan()
        self.streamer.restart_at(seconds(self))

    def _on_execute(self, msg: JointTrajectory) -> None:
        traj, status = self.streamer.handle_execute(msg, seconds(self), start_tolerance=self.start_tolerance)
        if traj is None:
            self.get_logger().warning(f"trajectory rejected: {status}")
            return
        self.get_logger().info(status)
        self._publish_plan()
        self.streamer.restart_at(seconds(self))

    def _plan(self, request: PlanTrajectory.Request, response: PlanTrajectory.Response) -> PlanTrajectory.Response:
        now = seconds(self)
        self.streamer.handle_plan(request, response, JointTrajectoryPoint, now)
        if response.success:
            response.trajectory.header.stamp = self.get_clock().now().to_msg()
            if request.execute:
                self.trajectory_pub.publish(response.trajectory)
                self.streamer.restart_at(seconds(self))
        return response

    def _time_optimal(self, request: TimeOptimal.Request, response: TimeOptimal.Response) -> TimeOptimal.Response:
        self.streamer.handle_time_optimal(request, response, JointTrajectoryPoint)
        if response.success:
            response.trajectory.header.stamp = self.get_clock().now().to_msg()
        return response

    def _publish_reference(self) -> None:
        msg = JointTrajectory()
        if self.streamer.fill_reference(msg, JointTrajectoryPoint, seconds(self)):
            msg.header.stamp = self.get_clock().now().to_msg()
            self.reference_pub.publish(msg)


    # -- control_msgs/action/FollowJointTrajectory ------------------------------------------
    def _serve_follow_joint_trajectory(self, rate: float) -> Any:
        """The action server, or None where control_msgs is not installed (logged once)."""
        from rclpy.action import ActionServer, CancelResponse, GoalResponse

        try:
            # imported by name: control_msgs is optional (absent from a minimal ROS 2 install)
            FollowJointTrajectory = importlib.import_module("control_msgs.action").FollowJointTrajectory
        except ImportError as exc:
            self.get_logger().info(f"~/follow_joint_trajectory not served: control_msgs is not installed ({exc})")
            return None
        self._action = FollowJointTrajectory
        server = ActionServer(
            self, FollowJointTrajectory, "~/follow_joint_trajectory", execute_callback=self._execute_goal,
            goal_callback=lambda _goal: GoalResponse.ACCEPT, cancel_callback=lambda _handle: CancelResponse.ACCEPT,
        )
        self.create_timer(1.0 / rate, self._monitor_goals)
        return server

    async def _execute_goal(self, handle: Any) -> Any:
        """Validate and run one goal; the result when it ends (success, violation, preemption, cancel)."""
        now = seconds(self)
        key = bytes(handle.goal_id.uuid)  # a goal handle is not hashable
        refused, ended = self.follower.accept(handle.request, key, now)
        self._finish(ended)
        if refused is not None:
            self.get_logger().warning(f"FollowJointTrajectory goal refused ({refused.code.name}): {refused.message}")
            handle.abort()
            return self._result(refused)
        self.follower.restart_at(seconds(self))  # after the goal's checks and timing
        self.get_logger().info(f"FollowJointTrajectory goal: executing "
                               f"{self.follower.active.trajectory.duration:.3f} s")  # type: ignore[union-attr]
        self._publish_plan()
        done = Future()
        self._goals[key] = (handle, done)
        outcome: Outcome = await done
        if outcome.canceled and handle.is_cancel_requested:
            handle.canceled()
        elif outcome.succeeded:
            handle.succeed()
        else:
            handle.abort()
        line = f"FollowJointTrajectory goal ended ({'CANCELED' if outcome.canceled else outcome.code.name}): " \
               f"{outcome.message}"
        # one call site per severity: rclpy refuses a severity change at one call site
        if outcome.succeeded or outcome.canceled:
            self.get_logger().info(line)
        else:
            self.get_logger().warning(line)
        return self._result(outcome)

    def _result(self, outcome: Outcome) -> Any:
        return self._action.Result(error_code=int(outcome.code), error_string=outcome.message)

    def _finish(self, outcomes: list[Outcome]) -> None:
        for outcome in outcomes:
            entry = self._goals.pop(outcome.key, None)
            if entry is not None:
                entry[1].set_result(outcome)

    def _monitor_goals(self) -> None:
        """Cancel requests and feedback of the running goal, at action_monitor_rate."""
        now = seconds(self)
        for key, (handle, _) in list(self._goals.items()):
            if handle.is_cancel_requested:
                self._finish(self.follower.cancel(key, now))
        self._finish(self.follower.update(now))
        state = self.follower.feedback(now)
        if state is not None and state.key in self._goals:
            try:
                self._goals[state.key][0].publish_feedback(self._feedback(state))
            except Exception as exc:  # noqa: BLE001 - e.g. the goal ended between the check and the publish
                self.get_logger().warning(f"feedback not published: {exc}", throttle_duration_sec=2.0)

    def _feedback(self, state: FeedbackState) -> Any:
        fb = self._action.Feedback()
        fb.header.stamp = self.get_clock().now().to_msg()
        fb.joint_names = state.joint_names
        stamp = cv.seconds_to_duration(state.time_from_start)
        for point, values in ((fb.desired, state.desired), (fb.actual, state.actual), (fb.error, state.error)):
            point.positions = [float(v) for v in values[0]]
            point.velocities = [float(v) for v in values[1]]
            if len(values) > 2:
                point.accelerations = [float(v) for v in values[2]]
            point.time_from_start.sec, point.time_from_start.nanosec = stamp
        return fb


def main(args: list[str] | None = None) -> None:
    """Console script ``trajectory`` (``ros2 run robot_dynamics trajectory``)."""
    raise SystemExit(run(TrajectoryNode, args, exit_after=True))


if __name__ == "__main__":
    main()
