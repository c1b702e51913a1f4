"""launch_testing test of arm.launch.py with the collision monitor (monitor:=<file>): the iiwa14's
dynamics in controller_manager's cycle (SimulatedSystem), joint_trajectory_controller ->
computed-torque controller -> collision monitor -> the hardware, and a push simulated through the
hardware's simulation-only input (its hardware parameter simulated_external_torque_topic).

Run where ROS 2 with its C++ stack is sourced and the packages are built (``colcon test``):
    launch_test robot_dynamics_bringup/test/test_arm_collision.py

The test checks that the chain is active, that the monitor raises no alarm while the arm rests
under the computed-torque controller, then pushes joint 4 with 15 N m: the collision event names
iiwa_joint_4, ~/external_torque approximates the push (and nothing on the other joints), the arm
holds where the push left it (its velocities go to zero and its positions stay, the push ended),
the reset resumes the computed-torque controller (the arm returns to its pose without a new
alarm), and every process ends with exit code 0.
"""

from __future__ import annotations

import os
import sys
import time
import unittest

import launch_testing
import launch_testing.asserts
import numpy as np
import pytest

from robot_dynamics.ros.probe import included_launch, ros_message

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arm_probe import ArmProbe, arm_launch_file  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
POSE = [0.3, 0.5, -0.2, -1.2, 0.3, 0.8, 0.1]  # the iiwa14 at start [rad]
PUSH_TOPIC = "/simulated_external_torque"
MONITOR = "/collision_monitor_controller"
PUSHED, PUSH = "iiwa_joint_4", 15.0  # [N m]: 8.5 % of its effort limit, its threshold about 4 N m
CHAIN = ("collision_monitor_controller", "computed_torque_controller", "joint_trajectory_controller")


@pytest.mark.launch_test
def generate_test_description():
    return included_launch(arm_launch_file(), {
        "robot": "iiwa14", "use_rviz": "false", "initial_positions": ",".join(map(str, POSE)),
        "monitor": os.path.join(HERE, "collision_monitor_iiwa14.yaml"),
        "hardware_params": f"simulated_external_torque_topic={PUSH_TOPIC}"})


class TestArmCollision(ArmProbe):
    probe_name = "arm_collision_probe"

    def setUp(self):
        import robot_dynamics as rd

        ControllerState = ros_message("robot_dynamics_interfaces/msg/ControllerState")
        CollisionEvent = ros_message("robot_dynamics_interfaces/msg/CollisionEvent")
        JointState = ros_message("sensor_msgs/msg/JointState")
        super().setUp()
        self.model = rd.load_robot("iiwa14")
        self.events, self.torques, self.monitor_states = [], [], []
        self.node.create_subscription(ControllerState, f"{MONITOR}/controller_state", self.monitor_states.append,
                                      100)
        self.node.create_subscription(CollisionEvent, f"{MONITOR}/collision", self.events.append, 10)
        self.node.create_subscription(JointState, f"{MONITOR}/external_torque", self.torques.append, 100)
        self.push_publisher = self.node.create_publisher(JointState, PUSH_TOPIC, 10)

    def push(self, torque):
        JointState = ros_message("sensor_msgs/msg/JointState")
        self.push_publisher.publish(JointState(name=[PUSHED], effort=[float(torque)]))

    def reset(self):
        ResetCollision = ros_message("robot_dynamics_interfaces/srv/ResetCollision")
        client = self.node.create_client(ResetCollision, f"{MONITOR}/reset")
        try:
            self.assertTrue(client.wait_for_service(timeout_sec=30.0), "no ~/reset service")
            future = client.call_async(ResetCollision.Request())
            self.assertTrue(self.spin_until(future.done, 10.0), "no answer from ~/reset")
            return future.result()
        finally:
            self.node.destroy_client(client)

    def residual(self, message, joint):
        return message.effort[list(message.name).index(joint)]

    def test_a_push_is_detected_held_and_released_by_the_reset(self):
        self.wait_for_controllers({name: "active" for name in CHAIN})
        # the trajectory node starts once the spawners are done: up before the launch may stop it
        # (a Python node stopped while it still imports ends with a traceback, not exit code 0)
        self.assertTrue(self.spin_until(lambda: "trajectory" in self.node.get_node_names(), 60.0),
                        "no trajectory node")
        self.assertTrue(self.spin_until(lambda: self.push_publisher.get_subscription_count() > 0, 30.0),
                        "the hardware does not subscribe to the simulated push")
        rest = self.at_rest()
        self.spin_for(1.0)
        self.assertEqual(self.events, [], "an alarm before the push")
        # the monitor publishes its state as every controller of the package does
        self.assertTrue(self.spin_until(lambda: len(self.monitor_states) > 0, 10.0),
                        f"nothing on {MONITOR}/controller_state")
        self.assertEqual(list(self.monitor_states[-1].joint_names), list(self.model.joint_names))
        self.assertEqual(len(self.monitor_states[-1].effort), self.model.nq)
        self.assertFalse(self.monitor_states[-1].fault, self.monitor_states[-1].fault_reason)
        self.assertGreater(len(self.torques), 10, "no ~/external_torque")
        quiet = max(abs(e) for m in self.torques[-20:] for e in m.effort)
        self.assertLess(quiet, 0.5, "the residual at rest under the computed-torque controller [N m]")

        # the push: until the event arrives and the estimate has settled (at most 0.3 s)
        self.torques.clear()
        self.push(PUSH)
        started = time.monotonic()
        self.assertTrue(self.spin_until(lambda: self.events, 10.0), "no collision event")
        self.spin_until(lambda: self.torques and self.residual(self.torques[-1], PUSHED) > 0.97 * PUSH
                        or time.monotonic() - started > 0.3, 5.0)
        estimate = [self.residual(m, PUSHED) for m in self.torques]
        others = max(abs(e) for m in self.torques for j, e in zip(m.name, m.effort) if j != PUSHED)
        self.push(0.0)
        at_detection = self.model_order(self.states[-1])

        event = self.events[0]
        self.assertEqual(event.joint, PUSHED, "the isolated joint")
        self.assertEqual(event.reaction, "hold")
        self.assertEqual(list(event.joint_names), list(self.model.joint_names))
        k = list(event.joint_names).index(PUSHED)
        self.assertGreater(event.external_torque[k], event.threshold[k])
        self.assertGreater(event.threshold[k], 0.0)
        self.assertAlmostEqual(max(estimate), PUSH, delta=0.1 * PUSH, msg="~/external_torque against the push")
        self.assertLess(others, 0.05 * PUSH, "the push is on one joint only")

        # the hold: the arm stops where the push left it and stays there
        self.spin_for(1.0)
        self.states.clear()
        self.spin_for(2.0)
        held = np.array([self.model_order(s) for s in self.states])
        self.assertGreater(len(held), 20)
        self.assertLess(float(np.max(np.abs(held - held[0]))), 0.01, "the arm moved while held")
        self.assertTrue(np.all(np.abs(self.model_order(self.states[-1], "velocity")) < 0.01))
        self.assertLess(float(np.max(np.abs(held[-1] - at_detection))), 0.25, "far from the pose at detection")
        self.assertGreater(abs(held[-1][3] - rest[3]), 0.005, "the push moved joint 4")
        self.assertEqual(len(self.events), 1, "one event per detection")

        # the reset: the computed-torque controller brings the arm back to its pose, no new alarm
        answer = self.reset()
        self.assertTrue(answer.success, answer.message)
        self.assertIn("released", answer.message)
        back = self.spin_until(lambda: np.allclose(self.model_order(self.states[-1]), rest, atol=0.01), 30.0)
        self.assertTrue(back, f"arm at {self.model_order(self.states[-1])}, its pose {rest}")
        self.assertEqual(len(self.events), 1, "an alarm on the way back")
        again = self.reset()
        self.assertTrue(again.success)
        self.assertEqual(again.message, "no collision reaction latched")


class TestArmCollisionShutdown(unittest.TestCase):
    def test_every_process_exits_cleanly(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0])


TestArmCollisionShutdown = launch_testing.post_shutdown_test()(TestArmCollisionShutdown)
