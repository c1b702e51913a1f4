"""launch_testing test of what protects a real arm, on arm.launch.py's defaults (control:=in_loop
hardware:=sim, the PUMA 560, no goal): robot_dynamics_control's controllers as docs/real_arm.md
describes them.

Run where ROS 2 with its C++ stack is sourced and the packages are built (``colcon test``):
    launch_test robot_dynamics_bringup/test/test_arm_safety.py

- the computed-torque controller publishes its state on ~/controller_state
  (robot_dynamics_interfaces/msg/ControllerState), 50 times a second by default;
- a NaN gain is refused by the parameter server (`ros2 param set ... "[.nan]"` fails and the gain
  keeps its value);
- a trajectory sent to joint_trajectory_controller 3 rad beyond joint1's upper limit leaves joint1
  within its limits (the computed-torque controller clamps its chained reference);
- deactivating the controller that commands the arm leaves every joint within 0.05 rad of where
  it was 3 s later (the stop behaviour, hold by default), for each of the three controllers.
"""

from __future__ import annotations

import os
import sys
import unittest

import launch_testing
import launch_testing.asserts
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arm_probe import ArmProbe, arm_launch_file  # noqa: E402

from robot_dynamics.ros.probe import included_launch, ros_message  # noqa: E402

#: the chains of the three controllers, in their activation order
CHAINS = {
    "computed_torque": ["computed_torque_controller", "joint_trajectory_controller"],
    "pd_gravity": ["pd_gravity_controller"],
    "gravity_compensation": ["gravity_compensation_controller"],
}
#: how far a joint may move in the 3 s after its controller is deactivated [rad]
HOLD_TOLERANCE = 0.05
#: how far beyond a limit joint1 may be seen [rad]: a tracking error, not an overshoot (a reference
#: that reaches the limit at speed and stops there leaves the arm to stop beyond it: about v / (e
#: omega), 0.03 rad at 1.7 rad/s with omega = 20 rad/s; it must slow down before the limit)
LIMIT_TOLERANCE = 0.01


@pytest.mark.launch_test
def generate_test_description():
    return included_launch(arm_launch_file(), {"robot": "puma560", "use_rviz": "false"})


class TestArmSafety(ArmProbe):
    probe_name = "arm_safety_probe"

    def setUp(self):
        super().setUp()
        self.wait_for_controllers({"joint_state_broadcaster": "active", "computed_torque_controller": "active",
                                   "joint_trajectory_controller": "active", "pd_gravity_controller": "inactive",
                                   "gravity_compensation_controller": "inactive"})

    def test_1_the_state_topic_publishes(self):
        ControllerState = ros_message("robot_dynamics_interfaces/msg/ControllerState")
        got = []
        self.node.create_subscription(ControllerState, "/computed_torque_controller/controller_state", got.append, 100)
        self.assertTrue(self.spin_until(lambda: len(got) > 0, 20.0),
                        "nothing on /computed_torque_controller/controller_state")
        got.clear()
        self.spin_for(2.0)
        self.assertGreater(len(got), 50, f"{len(got)} states in 2 s (state_publish_rate 50 Hz)")
        last = got[-1]
        self.assertEqual(list(last.joint_names), list(self.model.joint_names))
        for field in ("reference_positions", "feedback_positions", "error_positions", "effort"):
            self.assertEqual(len(getattr(last, field)), self.model.nq, field)
        self.assertFalse(last.fault, last.fault_reason)

    def test_2_a_nan_gain_is_refused(self):
        before = self.ros2("param", "get", "/computed_torque_controller", "omega")
        self.assertEqual(before.returncode, 0, before.stdout + before.stderr)
        value = self.parameter("/computed_torque_controller", "omega")
        try:
            done = self.ros2("param", "set", "/computed_torque_controller", "omega", "[.nan]")
            self.assertIn("Setting parameter failed", done.stdout + done.stderr)
            after = self.ros2("param", "get", "/computed_torque_controller", "omega")
            self.assertEqual(after.stdout, before.stdout)
            self.assertNotIn("nan", after.stdout.lower())
        finally:  # should the NaN be taken, the next tests find the gain as it was
            self.restore_parameter("/computed_torque_controller", "omega", value)

    def test_3_a_trajectory_beyond_joint1s_limit_leaves_joint1_within_it(self):
        q0 = self.at_rest()
        lower, upper = float(self.model.lower[0]), float(self.model.upper[0])
        target = q0.copy()
        target[0] = upper + 3.0
        JointTrajectory = ros_message("trajectory_msgs/msg/JointTrajectory")
        JointTrajectoryPoint = ros_message("trajectory_msgs/msg/JointTrajectoryPoint")
        Duration = ros_message("builtin_interfaces/msg/Duration")
        msg = JointTrajectory()
        msg.joint_names = list(self.model.joint_names)
        msg.points = [JointTrajectoryPoint(positions=[float(x) for x in target], velocities=[0.0] * self.model.nq,
                                           time_from_start=Duration(sec=5))]
        publisher = self.node.create_publisher(JointTrajectory, "/joint_trajectory_controller/joint_trajectory", 10)
        self.assertTrue(self.spin_until(lambda: publisher.get_subscription_count() > 0, 10.0))
        self.states.clear()
        publisher.publish(msg)
        self.spin_for(8.0)
        joint1 = np.array([self.model_order(s)[0] for s in self.states])
        self.assertGreater(len(joint1), 100)
        self.assertGreater(float(joint1.max()), q0[0] + 0.5, "joint1 did not move towards its limit")
        self.assertLessEqual(float(joint1.max()), upper + LIMIT_TOLERANCE, f"joint1 above its upper limit {upper}")
        self.assertGreaterEqual(float(joint1.min()), lower - LIMIT_TOLERANCE, f"joint1 below its lower limit {lower}")

    def test_4_deactivating_every_controller_leaves_the_arm_where_it_was(self):
        active = CHAINS["computed_torque"]
        for name in ("computed_torque", "pd_gravity", "gravity_compensation"):
            with self.subTest(controller=name):
                if active != CHAINS[name]:
                    self.assertTrue(self.switch(activate=CHAINS[name]), f"{name} not activated")
                    self.spin_for(1.0)
                    active = CHAINS[name]
                before = self.at_rest()
                self.assertTrue(self.switch(deactivate=list(reversed(active))), f"{name} not deactivated")
                active = []
                self.states.clear()
                self.spin_for(3.0)
                self.assertGreater(len(self.states), 50)
                moved = np.abs(self.model_order(self.states[-1]) - before)
                self.assertLess(float(moved.max()), HOLD_TOLERANCE,
                                f"3 s after {name} was deactivated, joint {self.model.joint_names[int(moved.argmax())]} "
                                f"had moved {moved.max():.3f} rad")


class TestArmSafetyShutdown(unittest.TestCase):
    def test_every_process_exits_cleanly(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0])


TestArmSafetyShutdown = launch_testing.post_shutdown_test()(TestArmSafetyShutdown)
