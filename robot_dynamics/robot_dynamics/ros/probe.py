"""A probe for launch tests: an rclpy node in the test process that records /joint_states.

:class:`ProbeTestCase` is a ``unittest.TestCase`` with one rclpy context per test class and, per
test, a node ``probe_name`` whose ``states`` list receives every /joint_states message
(sensor_msgs/JointState), and :meth:`~ProbeTestCase.spin_until`. The package's launch tests
(sim.launch.py) and robot_dynamics_bringup's (arm.launch.py) derive theirs from it.

Importable without ROS 2 (rclpy is imported when a test class starts), so that a launch test
module can define its test classes, skipped, where a component it needs is missing.
"""

from __future__ import annotations

import importlib
import time
import unittest
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["ProbeTestCase", "action_client", "included_launch", "package_share", "ros_message"]


def ros_message(type_name: str) -> Any:
    """The rclpy message class of ``type_name`` ("geometry_msgs/msg/PoseStamped"), imported when
    asked (a launch test outside this package needs no ROS import of its own)."""
    package, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def action_client(node: Any, type_name: str, name: str) -> Any:
    """An rclpy action client of ``node`` for the action ``type_name``
    ("control_msgs/action/FollowJointTrajectory") at ``name``, rclpy.action imported when asked."""
    from rclpy.action import ActionClient

    return ActionClient(node, ros_message(type_name), name)


def package_share(name: str) -> str | None:
    """The share folder of the ROS package ``name``, or None where it is not built (ament_index_python
    imported when asked)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        return str(get_package_share_directory(name))
    except PackageNotFoundError:
        return None


def included_launch(path: str, arguments: Mapping[str, str]) -> Any:
    """A launch test's description: the launch file ``path`` with ``arguments``, then
    launch_testing's ReadyToTest."""
    from launch import LaunchDescription
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource

    ready = importlib.import_module("launch_testing.actions").ReadyToTest  # a test-only package
    arm = IncludeLaunchDescription(PythonLaunchDescriptionSource(path), launch_arguments=dict(arguments).items())
    return LaunchDescription([arm, ready()])


class ProbeTestCase(unittest.TestCase):
    """One rclpy context per test class; per test a node ``probe_name`` whose ``states`` list
    receives every /joint_states message, and ``spin_until``."""

    probe_name = "launch_probe"
    node: Any
    states: list[Any]

    @classmethod
    def setUpClass(cls) -> None:
        import rclpy

        rclpy.init()

    @classmethod
    def tearDownClass(cls) -> None:
        import rclpy

        rclpy.try_shutdown()

    def setUp(self) -> None:
        import rclpy
        from sensor_msgs.msg import JointState

        self.node = rclpy.create_node(self.probe_name)
        self.states = []
        self.node.create_subscription(JointState, "/joint_states", self.states.append, 100)

    def tearDown(self) -> None:
        self.node.destroy_node()

    def spin_until(self, predicate: Callable[[], Any], timeout: float) -> Any:
        """Spin the probe until ``predicate()`` holds or ``timeout`` [s] passes; its last value."""
        import rclpy

        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            rclpy.spin_once(self.node, timeout_sec=0.02)
        return predicate()
