"""launch_testing test of sim.launch.py on a real ROS 2 (skipped where rclpy and launch are missing).

Run where ROS 2 is sourced and both packages are built (``colcon test`` does it):
    launch_test robot_dynamics/test/ros/test_launch_sim.py
It launches the simulated PUMA 560 with the README's goal and no rviz, with the real
robot_state_publisher where the ROS 2 has it (the C++ stack; a minimal build has no rclcpp: the
launch then runs without it and the /tf test is skipped, naming why; our nodes take the URDF as
a parameter and need nothing from it). The tests check that /joint_states flows, that the arm
reaches the goal with every effort within its limit, that /tf from robot_state_publisher puts
the tool frame where ``rd.frame_pose`` does at the stamped joint state (1e-9), and that each
`ros2 service call` of docs/ros2.md and of the README gets the answer printed there from the
running dynamics and trajectory nodes.
"""

from __future__ import annotations

import os
import re
import sys
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
import yaml  # noqa: E402
from ament_index_python.packages import PackageNotFoundError, get_package_share_directory  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from robot_dynamics_interfaces import srv  # noqa: E402

import robot_dynamics as rd  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]  # test_ros_doc_examples beside it, the test folder's helpers
from test_ros_doc_examples import _calls  # noqa: E402
from robot_dynamics.ros.probe import ProbeTestCase  # noqa: E402
from tf_tree import TfRecord, stamp_key  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

GOAL = [0.5, -0.4, 0.3, 0.2, -0.1, 0.6]  # the README's sim.launch.py goal


def _has_package(name: str) -> bool:
    try:
        get_package_share_directory(name)
        return True
    except PackageNotFoundError:
        return False


HAS_RSP = _has_package("robot_state_publisher")


def _fill(msg, data):
    """Set the fields of a real ROS message from the README's YAML (points as JointTrajectoryPoint)."""
    for key, value in data.items():
        if isinstance(value, dict):
            _fill(getattr(msg, key), value)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            setattr(msg, key, [_fill(JointTrajectoryPoint(), v) for v in value])
        else:
            setattr(msg, key, value)
    return msg


@pytest.mark.launch_test
def generate_test_description():
    share = get_package_share_directory("robot_dynamics")
    sim = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(os.path.join(share, "launch", "sim.launch.py")),
        launch_arguments={
            "robot": "puma560",
            "controller": "computed_torque",
            "goal": ",".join(str(g) for g in GOAL),
            "use_rviz": "false",
            "use_robot_state_publisher": "true" if HAS_RSP else "false",
        }.items(),
    )
    return LaunchDescription([sim, launch_testing.actions.ReadyToTest()])


class TestSimLaunch(ProbeTestCase):
    probe_name = "sim_launch_probe"

    def setUp(self):
        super().setUp()
        self.tf = TfRecord()
        latched = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(TFMessage, "/tf", self.tf.on_tf, 100)
        self.node.create_subscription(TFMessage, "/tf_static", self.tf.on_static, latched)

    def test_1_the_arm_reaches_the_goal_within_its_effort_limits(self):
        model = rd.load_robot("puma560")
        self.assertTrue(self.spin_until(lambda: len(self.states) > 20, 60.0), "no /joint_states")
        self.assertEqual(list(self.states[-1].name), list(model.joint_names))

        def at_goal():
            s = self.states[-1]
            return np.allclose(s.position, GOAL, atol=1e-2) and np.allclose(s.velocity, 0.0, atol=5e-2)

        self.assertTrue(self.spin_until(at_goal, 60.0), f"arm at {list(self.states[-1].position)}")
        efforts = np.array([s.effort for s in self.states])
        self.assertTrue(np.all(np.abs(efforts) <= model.effort_limit + 1e-9))
        # the plan keeps 10 % of every limit for the feedback: at most an instant at a limit
        # (node start-up jitter on a loaded machine), never a move driven in saturation
        at_limit = np.any(np.abs(efforts) >= 0.999 * model.effort_limit, axis=1)
        self.assertLess(float(np.mean(at_limit)), 0.05, f"{int(at_limit.sum())} of {len(at_limit)} states at a limit")

    @unittest.skipUnless(HAS_RSP, "robot_state_publisher is not built in this ROS 2 (no C++ stack)")
    def test_2_robot_state_publisher_tf_equals_frame_pose(self):
        model = rd.load_robot("puma560")
        positions = {}  # joint state stamp -> positions
        done = set()
        pairs = []  # (positions, composed pose), each /tf stamp once

        def on_state(msg):
            positions[stamp_key(msg.header.stamp)] = np.array(msg.position)

        self.node.create_subscription(JointState, "/joint_states", on_state, 100)

        def matched():
            for stamp in list(self.tf.dynamic):
                if stamp in done or stamp not in positions:
                    continue
                pose = self.tf.pose(model.base_link, model.end_effector, stamp)
                if pose is not None:
                    pairs.append((positions[stamp], pose))
                    done.add(stamp)
            return pairs

        goal = self.node.create_publisher(JointState, "/trajectory/goal", 10)
        self.assertTrue(self.spin_until(lambda: goal.get_subscription_count() > 0, 10.0))
        goal.publish(JointState(name=list(model.joint_names), position=[0.0, -0.2, 0.1, 0.0, 0.3, 0.0]))
        self.assertTrue(self.spin_until(lambda: len(matched()) >= 50, 30.0),
                        f"{len(matched())} /tf messages matched a joint state")
        moved = matched()
        for q, pose in moved:
            np.testing.assert_allclose(pose, rd.frame_pose(model, q, model.end_effector), atol=1e-9)
        spread = np.ptp([q for q, _ in moved], axis=0)
        self.assertGreater(float(np.max(spread)), 0.05, "the arm moved while /tf was compared")

    def test_3_the_readme_service_calls_get_the_readme_answers(self):
        checked = 0
        for call in _calls():
            kind = getattr(srv, call["type"])
            client = self.node.create_client(kind, call["service"])
            self.assertTrue(client.wait_for_service(timeout_sec=30.0), call["service"])
            request = _fill(kind.Request(), yaml.safe_load("{" + call["request"].strip()[1:-1] + "}"))
            future = client.call_async(request)
            self.assertTrue(self.spin_until(future.done, 30.0), call["service"])
            response = future.result()
            answer = call["answer"].replace("\n# ", " ")
            for field, numbers in re.findall(r"(\w+)(?: \([^)]*\))?: \[([-\d., ]+)(?:, \.\.\.)?\]", answer):
                expected = [float(x) for x in numbers.split(",") if x.strip() and x.strip() != "..."]
                got = np.asarray(getattr(response, field), dtype=float)[: len(expected)]
                np.testing.assert_allclose(got, expected, atol=6e-4, err_msg=f"{call['service']}: {field}")
                checked += 1
            for field, value in re.findall(r"(success|feasible): (true|false)", answer):
                self.assertIs(getattr(response, field), value == "true", response.message)
                checked += 1
        self.assertGreaterEqual(checked, 8)


@launch_testing.post_shutdown_test()
class TestSimLaunchShutdown(unittest.TestCase):
    def test_nodes_exit_cleanly(self, proc_info):
        # 0 from our nodes' Ctrl-C handling; -2/-15 if a process is ended by its signal.
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])
