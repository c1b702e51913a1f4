"""The probe of the launch tests: an rclpy node in the test process that records /joint_states.

Importable without ROS 2 (rclpy is imported when a test class starts), so that a launch test
module can define its test classes, skipped, where a component it needs is missing.
"""

from __future__ import annotations

import time
import unittest


class ProbeTestCase(unittest.TestCase):
    """One rclpy context per test class; per test a node ``probe_name`` whose ``states`` list
    receives every /joint_states message, and ``spin_until``."""

    probe_name = "launch_probe"

    @classmethod
    def setUpClass(cls):
        import rclpy

        rclpy.init()

    @classmethod
    def tearDownClass(cls):
        import rclpy

        rclpy.try_shutdown()

    def setUp(self):
        import rclpy
        from sensor_msgs.msg import JointState

        self.node = rclpy.create_node(self.probe_name)
        self.states = []
        self.node.create_subscription(JointState, "/joint_states", self.states.append, 100)

    def tearDown(self):
        self.node.destroy_node()

    def spin_until(self, predicate, timeout):
        """Spin the probe until ``predicate()`` holds or ``timeout`` [s] passes; its last value."""
        import rclpy

        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            rclpy.spin_once(self.node, timeout_sec=0.02)
        return predicate()
