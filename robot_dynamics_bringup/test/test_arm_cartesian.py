"""launch_testing test of arm.launch.py with the Cartesian impedance controller
(controller:=cartesian_impedance): the iiwa14's dynamics in controller_manager's cycle
(SimulatedSystem), the tool held compliant, pushed through the hardware's simulation-only wrench
input (its hardware parameters simulated_external_wrench_topic and simulated_external_wrench_frame).

Run where ROS 2 with its C++ stack is sourced and the packages are built (``colcon test``):
    launch_test robot_dynamics_bringup/test/test_arm_cartesian.py

The test checks that the controller is active and holds the tool where it was; a constant 10 N push
along x at the tool (the bringup's config: a translational stiffness of 1000 N/m) moves the tool by
10 mm within 5 %, the other axes by less than 10 % of that, with the joints at rest (the null space
held); released, the tool returns; a target on ~/target_pose 2 cm higher is reached and shown on
~/current_target; and every process ends with exit code 0.
"""

from __future__ import annotations

import os
import sys
import unittest

import launch_testing
import launch_testing.asserts
import numpy as np
import pytest

from robot_dynamics.ros.probe import included_launch, ros_message

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arm_probe import ArmProbe, arm_launch_file  # noqa: E402

POSE = [0.3, 0.5, -0.2, -1.2, 0.3, 0.8, 0.1]  # the iiwa14 at start [rad]
WRENCH_TOPIC = "/simulated_external_wrench"
TOOL = "iiwa_link_ee"
CONTROLLER = "/cartesian_impedance_controller"
PUSH, STIFFNESS = 10.0, 1000.0  # [N], [N/m]: config/controllers.yaml


@pytest.mark.launch_test
def generate_test_description():
    return included_launch(arm_launch_file(), {
        "robot": "iiwa14", "use_rviz": "false", "controller": "cartesian_impedance",
        "initial_positions": ",".join(map(str, POSE)),
        "hardware_params": f"simulated_external_wrench_topic={WRENCH_TOPIC},simulated_external_wrench_frame={TOOL}"})


class TestArmCartesian(ArmProbe):
    probe_name = "arm_cartesian_probe"

    def setUp(self):
        import robot_dynamics as rd

        super().setUp()
        self.model = rd.load_robot("iiwa14")
        self.targets, self.controller_states = [], []
        pose = ros_message("geometry_msgs/msg/PoseStamped")
        self.node.create_subscription(pose, f"{CONTROLLER}/current_target", self.targets.append, 100)
        self.node.create_subscription(ros_message("robot_dynamics_interfaces/msg/ControllerState"),
                                      f"{CONTROLLER}/controller_state", self.controller_states.append, 100)
        self.wrench_publisher = self.node.create_publisher(ros_message("geometry_msgs/msg/WrenchStamped"),
                                                           WRENCH_TOPIC, 10)
        self.target_publisher = self.node.create_publisher(pose, f"{CONTROLLER}/target_pose", 10)

    def tool(self):
        """The tool's pose (4 x 4) at the last measured joint positions."""
        import robot_dynamics as rd

        return rd.frame_pose(self.model, self.model_order(self.states[-1]), TOOL)

    def push(self, force_x):
        msg = ros_message("geometry_msgs/msg/WrenchStamped")()
        msg.wrench.force.x = float(force_x)
        self.wrench_publisher.publish(msg)

    def settled(self, seconds):
        """Spins `seconds`, then until the joints rest (|qd| < 1e-3 rad/s, at most 10 s more)."""
        self.spin_for(seconds)
        return self.spin_until(
            lambda: np.all(np.abs(self.model_order(self.states[-1], "velocity")) < 1e-3), 10.0)

    def test_a_push_moves_the_tool_by_force_over_stiffness_and_a_target_is_reached(self):
        self.wait_for_controllers({CONTROLLER.strip("/"): "active"})
        self.assertTrue(self.spin_until(lambda: "trajectory" in self.node.get_node_names(), 60.0),
                        "no trajectory node")
        self.assertTrue(self.spin_until(lambda: self.wrench_publisher.get_subscription_count() > 0, 30.0),
                        "the hardware does not subscribe to the simulated wrench")
        self.at_rest()
        self.assertTrue(self.settled(0.5), "the held arm does not rest")
        # the state topic of every controller of the package: the joints, no fault
        self.assertTrue(self.spin_until(lambda: self.controller_states, 10.0), f"nothing on {CONTROLLER}/controller_state")
        self.assertEqual(list(self.controller_states[-1].joint_names), list(self.model.joint_names))
        self.assertEqual(len(self.controller_states[-1].effort), self.model.nq)
        self.assertFalse(self.controller_states[-1].fault, self.controller_states[-1].fault_reason)
        rest = self.tool()

        self.push(PUSH)
        self.assertTrue(self.settled(2.0), "the pushed arm does not come to rest: the null space is not held")
        pushed = self.tool()
        dx, dy, dz = pushed[:3, 3] - rest[:3, 3]
        expected = PUSH / STIFFNESS
        print(f"pushed with {PUSH} N along x: the tool moved {dx * 1e3:.4f}, {dy * 1e3:.4f}, {dz * 1e3:.4f} mm")
        self.assertAlmostEqual(dx, expected, delta=0.05 * expected, msg=f"F / K = 10 mm, moved {dx * 1e3:.3f} mm")
        self.assertLess(abs(dy), 0.1 * expected)
        self.assertLess(abs(dz), 0.1 * expected)

        self.push(0.0)
        self.assertTrue(self.settled(2.0), "the released arm does not come to rest")
        back = self.tool()
        self.assertLess(float(np.linalg.norm(back[:3, 3] - rest[:3, 3])), 0.05 * expected, "the tool did not return")

        # a target 2 cm higher, same orientation, in the base's axes
        from scipy.spatial.transform import Rotation

        target = ros_message("geometry_msgs/msg/PoseStamped")()
        target.pose.position.x, target.pose.position.y, target.pose.position.z = map(float, rest[:3, 3])
        target.pose.position.z += 0.02
        x, y, z, w = Rotation.from_matrix(rest[:3, :3]).as_quat()
        target.pose.orientation.x, target.pose.orientation.y = float(x), float(y)
        target.pose.orientation.z, target.pose.orientation.w = float(z), float(w)
        self.target_publisher.publish(target)
        self.assertTrue(self.settled(2.0), "the arm does not rest at the target")
        reached = self.tool()
        self.assertLess(float(np.linalg.norm(reached[:3, 3] - rest[:3, 3] - [0.0, 0.0, 0.02])), 5e-4)
        self.assertTrue(self.spin_until(lambda: self.targets and abs(self.targets[-1].pose.position.z
                                                                       - target.pose.position.z) < 1e-9, 5.0),
                        f"{CONTROLLER}/current_target does not show the target")


class TestArmCartesianShutdown(unittest.TestCase):
    def test_every_process_exits_cleanly(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0])


TestArmCartesianShutdown = launch_testing.post_shutdown_test()(TestArmCartesianShutdown)
