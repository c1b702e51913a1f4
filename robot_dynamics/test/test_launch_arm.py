"""launch_testing test of arm.launch.py: the simulated PUMA 560 brought up through ros2_control.

Run where ROS 2 with its C++ stack is sourced and both packages are built (``colcon test``):
    launch_test robot_dynamics/test/test_launch_arm.py
The test itself is in ``arm_launch.py`` (its docstring says what it checks). Where a package it
needs is missing (a minimal ROS 2 has no rclcpp, hence no ros2_control), this module holds one
test that is skipped naming it. The skip is not raised while the module is imported:
launch_testing's pytest plugin imports every module of the folder to look for launch tests,
and under pytest 8 (Jazzy) a skip raised there skips the whole folder.
"""

from __future__ import annotations

import os
import sys

from ros_presence import missing_ros

MISSING = missing_ros(modules=("rclpy", "launch_testing", "launch_ros", "controller_manager_msgs"),
                      packages=("controller_manager", "joint_state_broadcaster", "effort_controllers",
                                "topic_based_ros2_control", "robot_state_publisher"))

if MISSING:

    def test_arm_launch_needs_ros2_control():
        import pytest

        pytest.skip(MISSING)

else:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from arm_launch import (  # noqa: F401 - launch_testing looks them up here
        TestArmLaunch,
        TestArmLaunchShutdown,
        generate_test_description,
    )
