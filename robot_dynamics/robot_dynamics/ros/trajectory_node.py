"""The ``trajectory`` node: plans point-to-point motions and streams the reference.

- service ``~/plan`` (robot_dynamics_interfaces/PlanTrajectory);
- subscribes ``goal_topic`` (sensor_msgs/JointState: goal positions, joints by name) and
  ``joint_states_topic`` (the start of the next motion);
- publishes every plan on ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory) and, at
  ``publish_rate``, the current reference on ``~/reference`` (a one-point JointTrajectory:
  positions, velocities, accelerations; time_from_start = time since the motion started).

Every callback is one call into :class:`robot_dynamics.ros.motion.TrajectoryStreamer`.
"""

from __future__ import annotations

from typing import Any

from rclpy.node import Node
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_dynamics_interfaces.srv import PlanTrajectory

from . import conversion as cv
from .logic import load_model_from_parameters
from .motion import TrajectoryStreamer
from .node_common import declare_parameters, run, seconds, service_qos

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
        )
        self.streamer.set_initial_goal(p["initial_goal"], p["initial_goal_delay"])
        self.trajectory_pub = self.create_publisher(JointTrajectory, "~/joint_trajectory", 10)
        self.reference_pub = self.create_publisher(JointTrajectory, "~/reference", 10)
        self.create_subscription(JointState, p["joint_states_topic"], self._on_joint_state, 10)
        self.create_subscription(JointState, p["goal_topic"], self._on_goal, 10)
        self.create_subscription(JointTrajectory, "~/execute", self._on_execute, 10)
        self.create_service(PlanTrajectory, "~/plan", self._plan, qos_profile=service_qos(p["service_queue_depth"]))
        self.create_timer(1.0 / p["publish_rate"], self._publish_reference)
        self.get_logger().info(f"planning for {model.name!r} with the {p['profile']} profile")

    def _on_joint_state(self, msg: JointState) -> None:
        ok, status = self.streamer.on_joint_state(msg)
        if not ok:
            self.get_logger().warning(f"joint state ignored: {status}", throttle_duration_sec=2.0)
            return
        consumer = self.reference_pub.get_subscription_count() > 0
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
        traj, status = self.streamer.handle_execute(msg, seconds(self))
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

    def _publish_reference(self) -> None:
        msg = JointTrajectory()
        if self.streamer.fill_reference(msg, JointTrajectoryPoint, seconds(self)):
            msg.header.stamp = self.get_clock().now().to_msg()
            self.reference_pub.publish(msg)


def main(args: list[str] | None = None) -> None:
    """Console script ``trajectory`` (``ros2 run robot_dynamics trajectory``)."""
    raise SystemExit(run(TrajectoryNode, args))


if __name__ == "__main__":
    main()
