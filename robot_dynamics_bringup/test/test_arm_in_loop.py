"""launch_testing test of arm.launch.py's defaults (control:=in_loop hardware:=sim): the PUMA 560's
dynamics and its computed-torque controller both inside controller_manager's cycle, the other two
controllers loaded inactive, and the documented switch to gravity compensation.

Run where ROS 2 with its C++ stack is sourced and the packages are built (``colcon test``):
    launch_test robot_dynamics_bringup/test/test_arm_in_loop.py

Real components only: controller_manager's ros2_control_node with robot_dynamics_control's
SimulatedSystem as the hardware (no simulator process, no topic in the loop), joint_state_broadcaster,
robot_dynamics_control's ComputedTorqueController and joint_trajectory_controller chained in
front of it (its commands are the computed-torque controller's reference interfaces),
GravityCompensationController, PdGravityController and the two task-space controllers inactive,
robot_state_publisher, our trajectory node (its plan to the launch's goal goes to
joint_trajectory_controller) and dynamics node. The tests check the controllers and their states, that nothing but joint_state_broadcaster
publishes /joint_states and no controller or simulator node runs, that the arm reaches the
launch's goal at rest within its effort limits, that a FollowJointTrajectory goal sent to
joint_trajectory_controller succeeds with the arm at its last point, that the command of
docs/real_arm.md switches to gravity compensation (the arm then stays where it was) and back, and
that every process ends with exit code 0.
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
from arm_probe import ArmProbe, arm_launch_file, documented_command  # noqa: E402

from robot_dynamics.ros.probe import action_client, included_launch, ros_message  # noqa: E402

GOAL = [0.5, -0.4, 0.3, 0.2, -0.1, 0.6]  # the README's arm.launch.py goal
# a FollowJointTrajectory goal through a via point, as MoveIt sends them
VIA, LAST = [0.3, -0.2, 0.5, 0.0, 0.2, 0.3], [0.1, -0.6, 0.4, -0.2, 0.3, -0.2]
CONTROLLERS = {  # name: (state at start, type)
    "joint_state_broadcaster": ("active", "joint_state_broadcaster/JointStateBroadcaster"),
    "computed_torque_controller": ("active", "robot_dynamics_control/ComputedTorqueController"),
    "joint_trajectory_controller": ("active", "joint_trajectory_controller/JointTrajectoryController"),
    "gravity_compensation_controller": ("inactive", "robot_dynamics_control/GravityCompensationController"),
    "pd_gravity_controller": ("inactive", "robot_dynamics_control/PdGravityController"),
    "cartesian_impedance_controller": ("inactive", "robot_dynamics_control/CartesianImpedanceController"),
    "operational_space_controller": ("inactive", "robot_dynamics_control/OperationalSpaceController"),
}


@pytest.mark.launch_test
def generate_test_description():
    return included_launch(arm_launch_file(), {"robot": "puma560", "control": "in_loop", "hardware": "sim",
                                               "goal": ",".join(str(g) for g in GOAL), "use_rviz": "false"})


def _duration(t):
    return ros_message("builtin_interfaces/msg/Duration")(sec=int(t), nanosec=int(round((t - int(t)) * 1e9)))


class TestArmInLoop(ArmProbe):
    probe_name = "arm_in_loop_probe"

    def at(self, target, tol=1e-2):
        def check():
            if not self.states:
                return False
            s = self.states[-1]
            return (np.allclose(self.model_order(s, "position"), target, atol=tol)
                    and np.allclose(self.model_order(s, "velocity"), 0.0, atol=5e-2))
        return check

    def check_efforts(self):
        efforts = np.array([self.model_order(s, "effort") for s in self.states])
        self.assertGreater(len(efforts), 20)
        self.assertTrue(np.all(np.isfinite(efforts)))
        self.assertGreater(float(np.max(np.abs(efforts))), 1.0, "the efforts came from the controller")
        self.assertTrue(np.all(np.abs(efforts) <= self.model.effort_limit + 1e-9))
        at_limit = np.any(np.abs(efforts) >= 0.999 * self.model.effort_limit, axis=1)
        self.assertLess(float(np.mean(at_limit)), 0.05, f"{int(at_limit.sum())} of {len(at_limit)} states at a limit")

    def test_1_the_chain_is_active_and_the_other_controllers_inactive(self):
        self.wait_for_controllers({name: state for name, (state, _) in CONTROLLERS.items()})
        self.assertEqual(self.controllers(), CONTROLLERS)

    def test_2_no_topic_in_the_loop(self):
        def endpoints(topic, kind):
            infos = (self.node.get_publishers_info_by_topic if kind == "pub"
                     else self.node.get_subscriptions_info_by_topic)(topic)
            return {i.node_name for i in infos} - {self.probe_name}

        expected = [
            ("/joint_states", "pub", {"joint_state_broadcaster"}),
            ("/joint_trajectory_controller/joint_trajectory", "pub", {"trajectory"}),
            ("/joint_trajectory_controller/joint_trajectory", "sub", {"joint_trajectory_controller"}),
        ]

        def graph():
            return [(topic, kind, endpoints(topic, kind)) for topic, kind, _ in expected]

        self.spin_until(lambda: graph() == expected, 60.0)
        self.assertEqual(graph(), expected)
        names = set(self.node.get_node_names())
        self.assertFalse({"simulator", "controller"} & names, names)  # the loop has no node of ours

    def test_3_the_arm_reaches_the_goal_within_its_effort_limits(self):
        self.assertTrue(self.spin_until(lambda: len(self.states) > 20, 60.0), "no /joint_states")
        self.assertEqual(sorted(self.states[-1].name), sorted(self.model.joint_names))
        self.assertTrue(self.spin_until(self.at(GOAL), 90.0),
                        f"arm at {self.model_order(self.states[-1], 'position')}")
        self.check_efforts()

    def test_4_a_follow_joint_trajectory_goal_succeeds(self):
        FollowJointTrajectory = ros_message("control_msgs/action/FollowJointTrajectory")
        JointTrajectoryPoint = ros_message("trajectory_msgs/msg/JointTrajectoryPoint")
        GoalStatus = ros_message("action_msgs/msg/GoalStatus")
        client = action_client(self.node, "control_msgs/action/FollowJointTrajectory",
                               "/joint_trajectory_controller/follow_joint_trajectory")
        try:
            self.assertTrue(client.wait_for_server(timeout_sec=60.0), "no follow_joint_trajectory server")
            self.assertTrue(self.spin_until(self.at(GOAL, 2e-2), 90.0), "the arm is not at rest at the launch's goal")
            goal = FollowJointTrajectory.Goal()
            goal.trajectory.joint_names = list(self.model.joint_names)
            goal.trajectory.points = [JointTrajectoryPoint(positions=VIA, time_from_start=_duration(1.5)),
                                      JointTrajectoryPoint(positions=LAST, velocities=[0.0] * 6,
                                                           time_from_start=_duration(3.0))]
            sent = client.send_goal_async(goal)
            self.assertTrue(self.spin_until(sent.done, 20.0), "no goal response")
            handle = sent.result()
            self.assertTrue(handle.accepted)
            self.states.clear()
            result = handle.get_result_async()
            self.assertTrue(self.spin_until(result.done, 30.0), "no result")
            self.assertEqual(result.result().status, GoalStatus.STATUS_SUCCEEDED)
            self.assertEqual(result.result().result.error_code, FollowJointTrajectory.Result.SUCCESSFUL)
            self.assertTrue(self.spin_until(self.at(LAST), 10.0),
                            f"arm at {self.model_order(self.states[-1], 'position')}")
            # it went through the via point on the way
            passed = min(float(np.max(np.abs(self.model_order(s, "position") - VIA))) for s in self.states)
            self.assertLess(passed, 0.05)
            self.check_efforts()
        finally:
            client.destroy()


    def test_5_one_documented_command_switches_to_gravity_compensation_and_back(self):
        self.wait_for_controllers({name: state for name, (state, _) in CONTROLLERS.items()})
        before = self.at_rest()
        to_gravity = documented_command("real_arm.md", "ros2 control switch_controllers")
        self.assertIn("gravity_compensation_controller", to_gravity[to_gravity.index("--activate"):])
        done = self.ros2(*to_gravity[1:])
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.wait_for_controllers({"gravity_compensation_controller": "active", "computed_torque_controller": "inactive",
                                   "joint_trajectory_controller": "inactive", "pd_gravity_controller": "inactive"}, 10.0)
        # the arm floats where it was: gravity compensated by the same model the simulated arm has
        self.states.clear()
        self.spin_for(2.0)
        drift = max(float(np.max(np.abs(self.model_order(s) - before))) for s in self.states)
        self.assertLess(drift, 0.05, "the arm moved under gravity compensation")
        back = documented_command("real_arm.md", "ros2 control switch_controllers --deactivate gravity")
        done = self.ros2(*back[1:])
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.wait_for_controllers({name: state for name, (state, _) in CONTROLLERS.items()}, 10.0)


class TestArmInLoopShutdown(unittest.TestCase):
    def test_every_process_exits_cleanly(self, proc_info):
        # our nodes stop cleanly on launch's SIGINT, controller_manager and robot_state_publisher too,
        # and the spawners exit once their controllers are active
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0])


TestArmInLoopShutdown = launch_testing.post_shutdown_test()(TestArmInLoopShutdown)
