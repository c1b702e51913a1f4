"""launch_testing test of sim.launch.py (needs ROS 2 and a colcon install; skipped without).

Run where ROS 2 is sourced and both packages are built:
    launch_test robot_dynamics/test/test_launch_sim.py      (or colcon test)
It launches the simulated planar arm with a goal, checks that /joint_states flows, that
/dynamics/inverse_dynamics answers with the core's numbers, and that the arm reaches the goal.
"""

from __future__ import annotations

import os
import time
import unittest

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
launch_testing = pytest.importorskip("launch_testing")
pytest.importorskip("launch_ros")
pytest.importorskip("robot_dynamics_interfaces")

import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
from ament_index_python.packages import get_package_share_directory  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from robot_dynamics_interfaces.srv import InverseDynamics  # noqa: E402

import robot_dynamics as rd  # noqa: E402

GOAL = [0.6, -0.4]


@pytest.mark.launch_test
def generate_test_description():
    sim = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(
            os.path.join(get_package_share_directory("robot_dynamics"), "launch", "sim.launch.py")
        ),
        launch_arguments={
            "robot": "planar2",
            "controller": "computed_torque",
            "goal": ",".join(str(g) for g in GOAL),
            "use_rviz": "false",
        }.items(),
    )
    return LaunchDescription([sim, launch_testing.actions.ReadyToTest()])


class TestSimLaunch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rclpy.init()

    @classmethod
    def tearDownClass(cls):
        rclpy.shutdown()

    def setUp(self):
        self.node = rclpy.create_node("sim_launch_probe")
        self.states = []
        self.node.create_subscription(JointState, "/joint_states", self.states.append, 10)

    def tearDown(self):
        self.node.destroy_node()

    def spin_until(self, predicate, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            rclpy.spin_once(self.node, timeout_sec=0.05)
        return predicate()

    def test_joint_states_flow_and_the_arm_reaches_the_goal(self):
        self.assertTrue(self.spin_until(lambda: len(self.states) > 20, 30.0), "no /joint_states")
        self.assertEqual(list(self.states[-1].name), ["shoulder", "elbow"])

        def at_goal():
            s = self.states[-1]
            return np.allclose(s.position, GOAL, atol=1e-2) and np.allclose(s.velocity, 0.0, atol=5e-2)

        self.assertTrue(self.spin_until(at_goal, 60.0), f"arm at {list(self.states[-1].position)}")

    def test_inverse_dynamics_returns_the_core_numbers(self):
        client = self.node.create_client(InverseDynamics, "/dynamics/inverse_dynamics")
        self.assertTrue(client.wait_for_service(timeout_sec=30.0))
        q, qd, qdd = [0.3, -0.2], [0.1, 0.4], [1.0, -2.0]
        future = client.call_async(InverseDynamics.Request(joint_names=["shoulder", "elbow"], positions=q,
                                                           velocities=qd, accelerations=qdd))
        self.assertTrue(self.spin_until(future.done, 30.0))
        res = future.result()
        self.assertTrue(res.success, res.message)
        expected = rd.rnea(rd.load_robot("planar2"), q, qd, qdd)
        np.testing.assert_allclose(np.asarray(res.efforts), expected, rtol=1e-12, atol=1e-12)


@launch_testing.post_shutdown_test()
class TestSimLaunchShutdown(unittest.TestCase):
    def test_nodes_exit_cleanly(self, proc_info):
        # 0 from our nodes' Ctrl-C handling; -2/-15 if a process is ended by its signal.
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
