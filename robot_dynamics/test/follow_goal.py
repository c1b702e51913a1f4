"""control_msgs' FollowJointTrajectory goal as small classes with its fields (its joint part), for
the logic tests of test/ros that run without ROS (the action's messages are not in the message
store)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

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


@dataclass
class GoalRun:
    """What :func:`run_goal` saw: the goals ended, the time it stopped [s], the largest feedback
    error of each tick, the efforts commanded and the accepted goal's duration [s]."""

    ended: list
    now: float
    errors: list
    efforts: list
    duration: float


def run_goal(follower, loop, plant, streamer, goal, seconds: float, rate: float = 250.0) -> GoalRun:
    """A FollowJointTrajectory goal (key "puma") accepted at the sixth tick and run through the
    simulated loop (follower, controller loop, plant, streamer of robot_dynamics.ros) until it
    ends or ``seconds`` have passed, at ``rate`` [Hz]."""
    JointState = message_class("sensor_msgs/JointState")
    JointTrajectory = message_class("trajectory_msgs/JointTrajectory")
    Point = message_class("trajectory_msgs/JointTrajectoryPoint")
    Float64MultiArray = message_class("std_msgs/Float64MultiArray")
    dt = 1.0 / rate
    run = GoalRun([], 0.0, [], [], float("nan"))
    for k in range(int(seconds * rate)):
        run.now = now = k * dt
        js = plant.joint_state(JointState())
        assert follower.on_joint_state(js, now)[0] and loop.on_joint_state(js, now)[0]
        if k == 5:
            refused, _ = follower.accept(goal, "puma", now)
            assert refused is None, refused
            run.duration = follower.active.trajectory.duration
        run.ended += follower.update(now)
        if run.ended:
            break
        fb = follower.feedback(now)
        if fb is not None:
            run.errors.append(float(np.max(np.abs(fb.error[0]))))
        ref = JointTrajectory()
        if streamer.fill_reference(ref, Point, now):
            assert loop.on_reference(ref)[0]
        effort, _ = loop.tick(now)
        if effort is not None:
            run.efforts.append(effort)
            assert plant.on_command(Float64MultiArray(data=list(effort)), now)[0]
        assert plant.step(dt, now)[0]
    return run
