"""launch_testing test of arm.launch.py control:=in_loop hardware:=sim: the PUMA 560's dynamics and
its computed-torque controller both inside controller_manager's cycle.

Run where ROS 2 with its C++ stack is sourced and the packages are built (``colcon test``):
    launch_test robot_dynamics/test/test_launch_arm_in_loop.py

Real components only: controller_manager's ros2_control_node with robot_dynamics_control's
SimulatedSystem as the hardware (no simulator process, no topic in the loop), joint_state_broadcaster,
robot_dynamics_control's ComputedTorqueController and joint_trajectory_controller chained in
front of it (its commands are the computed-torque controller's reference interfaces),
robot_state_publisher, our trajectory node (its plan to the launch's goal goes to
joint_trajectory_controller) and dynamics node. The tests check the three controllers are
active, that nothing but joint_state_broadcaster publishes /joint_states and no controller or
simulator node runs, that the arm reaches the launch's goal at rest within its effort limits,
that a FollowJointTrajectory goal sent to joint_trajectory_controller succeeds with the arm at its
last point, and that every process ends cleanly.

Where a package it needs is missing, the test classes are skipped naming it and there is no
launch description (see test_launch_arm.py for why nothing is skipped at import).
"""

from __future__ import annotations

import os
import sys
import unittest

import numpy as np
import pytest

import robot_dynamics as rd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from launch_probe import ProbeTestCase  # noqa: E402
from ros_presence import missing_ros  # noqa: E402

MISSING = missing_ros(modules=("rclpy", "launch_testing", "launch_ros", "controller_manager_msgs", "control_msgs"),
                      packages=("controller_manager", "joint_state_broadcaster", "joint_trajectory_controller",
                                "robot_dynamics_control", "robot_state_publisher"))
if not MISSING:
    import launch_testing
    import launch_testing.actions
    import launch_testing.asserts
    from action_msgs.msg import GoalStatus
    from ament_index_python.packages import get_package_share_directory
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from controller_manager_msgs.srv import ListControllers
    from launch import LaunchDescription
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from rclpy.action import ActionClient
    from trajectory_msgs.msg import JointTrajectoryPoint

GOAL = [0.5, -0.4, 0.3, 0.2, -0.1, 0.6]  # the README's arm.launch.py goal
# a FollowJointTrajectory goal through a via point, as MoveIt sends them
VIA, LAST = [0.3, -0.2, 0.5, 0.0, 0.2, 0.3], [0.1, -0.6, 0.4, -0.2, 0.3, -0.2]
CONTROLLERS = {
    "joint_state_broadcaster": "joint_state_broadcaster/JointStateBroadcaster",
    "computed_torque_controller": "robot_dynamics_control/ComputedTorqueController",
    "joint_trajectory_controller": "joint_trajectory_controller/JointTrajectoryController",
}


if not MISSING:

    @pytest.mark.launch_test
    def generate_test_description():
        share = get_package_share_directory("robot_dynamics")
        arm = IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(share, "launch", "arm.launch.py")),
            launch_arguments={"robot": "puma560", "control": "in_loop", "hardware": "sim",
                              "goal": ",".join(str(g) for g in GOAL), "use_rviz": "false"}.items(),
        )
        return LaunchDescription([arm, launch_testing.actions.ReadyToTest()])


def _duration(t):
    return Duration(sec=int(t), nanosec=int(round((t - int(t)) * 1e9)))


@unittest.skipIf(bool(MISSING), MISSING)
class TestArmInLoop(ProbeTestCase):
    probe_name = "arm_in_loop_probe"

    def model_order(self, s, field):
        where = {n: i for i, n in enumerate(s.name)}
        return np.array([getattr(s, field)[where[n]] for n in self.model.joint_names])

    def setUp(self):
        super().setUp()
        self.model = rd.load_robot("puma560")

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

    def test_1_the_three_controllers_are_active(self):
        client = self.node.create_client(ListControllers, "/controller_manager/list_controllers")
        self.assertTrue(client.wait_for_service(timeout_sec=60.0), "no controller_manager")

        def states():
            future = client.call_async(ListControllers.Request())
            self.spin_until(future.done, 10.0)
            return {c.name: (c.state, c.type) for c in future.result().controller} if future.done() else {}

        self.assertTrue(self.spin_until(lambda: all(states().get(n, ("",))[0] == "active" for n in CONTROLLERS), 90.0),
                        f"controllers: {states()}")
        self.assertEqual({n: t for n, (_, t) in states().items()}, CONTROLLERS)

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
        client = ActionClient(self.node, FollowJointTrajectory, "/joint_trajectory_controller/follow_joint_trajectory")
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


@unittest.skipIf(bool(MISSING), MISSING)
class TestArmInLoopShutdown(unittest.TestCase):
    def test_every_process_exits_cleanly(self, proc_info):
        # 0: our nodes' Ctrl-C handling and the spawners, which exit once their controllers are active;
        # -2/-15 where a process is ended by its signal.
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])


if not MISSING:
    TestArmInLoopShutdown = launch_testing.post_shutdown_test()(TestArmInLoopShutdown)
