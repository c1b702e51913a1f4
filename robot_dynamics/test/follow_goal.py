"""control_msgs' FollowJointTrajectory goal as small classes with its fields (its joint part), for
the logic tests of test/ros that run without ROS (the action's messages are not in the message
store)."""

from __future__ import annotations

from dataclasses import dataclass, field

from robot_dynamics.ros.messages import message_class

Duration = message_class("builtin_interfaces/Duration")


@dataclass
class JointTolerance:
    """control_msgs/msg/JointTolerance's fields."""

    name: str
    position: float = 0.0
    velocity: float = 0.0
    acceleration: float = 0.0


@dataclass
class Goal:
    """control_msgs/action/FollowJointTrajectory's goal fields (joint part)."""

    trajectory: object
    path_tolerance: list = field(default_factory=list)
    goal_tolerance: list = field(default_factory=list)
    goal_time_tolerance: object = field(default_factory=Duration)
