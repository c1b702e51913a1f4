"""The probe of the launch tests: an rclpy node in the test process that records /joint_states.

Imported only where rclpy is there (by the launch test modules, after their checks).
"""

from __future__ import annotations

import time
import unittest

import rclpy
from sensor_msgs.msg import JointState


class ProbeTestCase(unittest.TestCase):
    """One rclpy context per test class; per test a node ``probe_name`` whose ``states`` list
    receives every /joint_states message, and ``spin_until``."""

    probe_name = "launch_probe"

    @classmethod
    def setUpClass(cls):
        rclpy.init()

    @classmethod
    def tearDownClass(cls):
        rclpy.try_shutdown()

    def setUp(self):
        self.node = rclpy.create_node(self.probe_name)
        self.states = []
        self.node.create_subscription(JointState, "/joint_states", self.states.append, 100)

    def tearDown(self):
        self.node.destroy_node()

    def spin_until(self, predicate, timeout):
        """Spin the probe until ``predicate()`` holds or ``timeout`` [s] passes; its last value."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            rclpy.spin_once(self.node, timeout_sec=0.02)
        return predicate()
