"""launch_testing test of /trajectory/follow_joint_trajectory on sim.launch.py (skipped without control_msgs).

Run where ROS 2 with control_msgs is sourced and both packages are built (``colcon test`` does it):
    launch_test robot_dynamics/test/test_launch_follow_joint_trajectory.py
The test itself is in ``follow_joint_trajectory_launch.py`` (its docstring says what it checks).
Where a package it needs is missing, this module holds one test that is skipped naming it. The
skip is not raised while the module is imported: launch_testing's pytest plugin imports every
module of the folder to look for launch tests, and under pytest 8 (Jazzy) a skip raised there
skips the whole folder.
"""

from __future__ import annotations

import os
import sys

from ros_presence import missing_ros

MISSING = missing_ros(modules=("rclpy", "launch_testing", "launch_ros", "robot_dynamics_interfaces", "control_msgs"))

if MISSING:

    def test_follow_joint_trajectory_launch_needs_ros_and_control_msgs():
        import pytest

        pytest.skip(f"{MISSING}: the launch test of /trajectory/follow_joint_trajectory "
                    "(control_msgs/action/FollowJointTrajectory) needs it")

else:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from follow_joint_trajectory_launch import (  # noqa: F401 - launch_testing looks them up here
        TestFollowJointTrajectory,
        TestFollowJointTrajectoryShutdown,
        generate_test_description,
    )
