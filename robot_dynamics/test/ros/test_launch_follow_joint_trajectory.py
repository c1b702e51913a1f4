"""launch_testing test of /trajectory/follow_joint_trajectory on sim.launch.py.

Run where ROS 2 with control_msgs is sourced and both packages are built (``colcon test`` does it):
    launch_test robot_dynamics/test/ros/test_launch_follow_joint_trajectory.py

It launches the simulated PUMA 560 (no rviz, no robot_state_publisher: nothing here reads /tf)
and drives it through control_msgs/action/FollowJointTrajectory as MoveIt does: a three-point
goal that succeeds within its goal tolerance with feedback on the way, a goal with an impossible
path tolerance (PATH_TOLERANCE_VIOLATED, the arm stops), a goal replaced by a second one (the
first ends aborted with INVALID_GOAL "preempted", the second succeeds), a canceled goal (the
arm holds) and a goal naming a joint the arm does not have (INVALID_JOINTS) sent while another
runs, which still succeeds.

Where a package it needs is missing, the test classes are skipped naming it and there is no
launch description. Nothing is skipped while the module is imported: launch_testing's pytest
plugin imports every module of the folder to look for launch tests, and under pytest 8 (Jazzy)
a skip raised there skips the whole folder.
"""

from __future__ import annotations

import os
import sys
import unittest

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the test folder's helpers
from robot_dynamics.ros.probe import ProbeTestCase  # noqa: E402
from ros_presence import missing_ros  # noqa: E402

MISSING = missing_ros(modules=("rclpy", "launch_testing", "launch_ros", "robot_dynamics_interfaces", "control_msgs"))
SKIP = (f"{MISSING}: the launch test of /trajectory/follow_joint_trajectory "
        "(control_msgs/action/FollowJointTrajectory) needs it") if MISSING else ""
if not MISSING:
    import launch_testing
    import launch_testing.actions
    import launch_testing.asserts
    from action_msgs.msg import GoalStatus
    from ament_index_python.packages import get_package_share_directory
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance
    from launch import LaunchDescription
    from launch.actions import IncludeLaunchDescription
    from launch.launch_description_sources import PythonLaunchDescriptionSource
    from rclpy.action import ActionClient
    from robot_dynamics_interfaces.srv import PlanTrajectory
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectoryPoint

    Result = FollowJointTrajectory.Result

JOINTS = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]
# the goal tolerance of the goals that must succeed [rad]: the arm ends 0.0015 rad off on a lightly
# loaded machine and was seen up to 0.0145 rad off with two cores loaded by other jobs (load
# average 9-11; the cause under load was not isolated)
GOAL_TOLERANCE = 0.02


if not MISSING:

    @pytest.mark.launch_test
    def generate_test_description():
        share = get_package_share_directory("robot_dynamics")
        sim = IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(share, "launch", "sim.launch.py")),
            launch_arguments={"robot": "puma560", "controller": "computed_torque", "use_rviz": "false",
                              "use_robot_state_publisher": "false"}.items(),
        )
        return LaunchDescription([sim, launch_testing.actions.ReadyToTest()])


def _duration(t):
    return Duration(sec=int(t), nanosec=int(round((t - int(t)) * 1e9)))


def _goal(times, positions, names=JOINTS, path=None, goal=None, goal_time=0.0):
    g = FollowJointTrajectory.Goal()
    g.trajectory.joint_names = list(names)
    g.trajectory.points = [JointTrajectoryPoint(positions=[float(v) for v in q], time_from_start=_duration(t))
                           for t, q in zip(times, positions)]
    g.path_tolerance = [JointTolerance(name=j, position=float(path)) for j in names] if path else []
    g.goal_tolerance = [JointTolerance(name=j, position=float(goal)) for j in names] if goal else []
    g.goal_time_tolerance = _duration(goal_time)
    return g


@unittest.skipIf(bool(MISSING), SKIP)
class TestFollowJointTrajectory(ProbeTestCase):
    probe_name = "follow_joint_trajectory_probe"

    def setUp(self):
        super().setUp()
        self.client = ActionClient(self.node, FollowJointTrajectory, "/trajectory/follow_joint_trajectory")
        self.assertTrue(self.client.wait_for_server(timeout_sec=60.0), "no /trajectory/follow_joint_trajectory")
        self.assertTrue(self.spin_until(lambda: len(self.states) > 5, 60.0), "no /joint_states")
        # the controller is up once its effort commands flow (a loaded machine starts it last)
        commands = []
        self.node.create_subscription(Float64MultiArray, "/effort_controller/commands", commands.append, 10)
        self.assertTrue(self.spin_until(lambda: len(commands) > 5, 60.0), "no /effort_controller/commands")
        self.wait_for_the_servers_joint_state()

    def wait_for_the_servers_joint_state(self, timeout=30.0):
        """Until the trajectory node has a joint state of its own: its subscription can match after
        this probe's under load, and it refuses a goal until then ("no joint state received yet").
        Its ~/plan from the measured position (empty start, 0.01 rad, not executed) says so too."""
        plan = self.node.create_client(PlanTrajectory, "/trajectory/plan")
        self.assertTrue(plan.wait_for_service(timeout_sec=timeout), "no /trajectory/plan")
        request = PlanTrajectory.Request(joint_names=JOINTS, goal_positions=[float(v) + 0.01 for v in self.position()],
                                         duration=1.0, execute=False)
        for _ in range(int(timeout / 0.5)):
            future = plan.call_async(request)
            self.assertTrue(self.spin_until(future.done, 10.0), "no answer from /trajectory/plan")
            if "no joint state received yet" not in future.result().message:
                break
            self.wait(0.5)
        self.node.destroy_client(plan)
        self.assertTrue(future.result().success, future.result().message)

    def tearDown(self):
        self.client.destroy()
        super().tearDown()

    def wait(self, seconds):
        self.spin_until(lambda: False, seconds)

    def position(self):
        return np.array(self.states[-1].position)

    def settle(self, timeout=15.0):
        """Wait until the arm is at rest (the previous test may have stopped it in mid-motion,
        braking in saturation and coming back to where it was held)."""
        def still():
            return len(self.states) > 20 and max(np.abs(s.velocity).max() for s in self.states[-20:]) < 1e-2

        self.states.clear()
        self.assertTrue(self.spin_until(still, timeout), "the arm does not come to rest")

    def send(self, goal, feedback=None):
        """Send a goal; (goal handle, result future) once the server accepted it.

        A request sent right after wait_for_server can be lost while discovery completes (the
        server never logged it, seen once under load): sent again after 10 s without an answer.
        """
        for _ in range(3):
            sent = self.client.send_goal_async(goal, feedback_callback=feedback)
            if self.spin_until(sent.done, 10.0):
                break
        self.assertTrue(sent.done(), "no goal response")
        handle = sent.result()
        self.assertTrue(handle.accepted)
        return handle, handle.get_result_async()

    def result(self, future, timeout=30.0):
        self.assertTrue(self.spin_until(future.done, timeout), "no result")
        response = future.result()
        return response.status, response.result

    # Goals that must succeed get 3 s after their end to settle within GOAL_TOLERANCE (on an idle
    # machine they are within it 0.02-0.07 s after the end).
    def test_1_a_three_point_goal_succeeds_within_its_goal_tolerance(self):
        start = self.position()
        mid, end = start + [0.15, -0.1, 0.1, 0.1, -0.05, 0.2], start + [0.3, -0.2, 0.2, 0.2, -0.1, 0.4]
        feedback = []
        _, future = self.send(_goal([1.5, 3.0], [mid, end], goal=GOAL_TOLERANCE, goal_time=3.0),
                              lambda msg: feedback.append(msg.feedback))
        status, result = self.result(future)
        self.assertEqual((status, result.error_code), (GoalStatus.STATUS_SUCCEEDED, Result.SUCCESSFUL),
                         result.error_string)
        self.assertIn("reached the goal", result.error_string)
        self.wait(0.5)  # at success within the tolerance and nearly at rest; holding the goal since
        final_error = np.abs(self.position() - end)
        self.assertLess(final_error.max(), GOAL_TOLERANCE, f"final error {final_error}")
        # feedback at about 20 Hz over the 3 s, in the arm's order, error = desired - actual
        self.assertGreater(len(feedback), 30)
        fb = feedback[len(feedback) // 2]
        self.assertEqual(list(fb.joint_names), JOINTS)
        np.testing.assert_allclose(np.array(fb.error.positions),
                                   np.array(fb.desired.positions) - np.array(fb.actual.positions), atol=1e-12)
        # how well the arm tracks depends on how loaded the machine is (no path tolerance here):
        # reported, not asserted
        tracking = max(np.abs(f.error.positions).max() for f in feedback)
        print(f"[follow] 3-point goal: {len(feedback)} feedback messages, largest path error {tracking:.4f} rad, "
              f"final error {final_error.max():.5f} rad; {result.error_string}")

    def test_2_an_impossible_path_tolerance_stops_the_arm(self):
        self.settle()
        start = self.position()
        end = start + [0.4, 0.0, 0.0, 0.0, 0.0, 0.0]
        _, future = self.send(_goal([1.0, 2.0], [start + [0.2, 0, 0, 0, 0, 0], end], path=1e-6))
        status, result = self.result(future)
        self.assertEqual((status, result.error_code),
                         (GoalStatus.STATUS_ABORTED, Result.PATH_TOLERANCE_VIOLATED), result.error_string)
        self.assertIn("path tolerance violated", result.error_string)
        self.assertIn("exceeds the tolerance 1e-06", result.error_string)
        self.wait(1.5)  # holding where it stopped: at rest, far from the goal's end
        self.assertLess(np.abs(self.states[-1].velocity).max(), 0.02)
        self.assertGreater(abs(self.position()[0] - end[0]), 0.3)

    def test_3_a_new_goal_preempts_the_running_one(self):
        self.settle()
        start = self.position()
        _, first = self.send(_goal([4.0], [start + [0.5, 0, 0, 0, 0, 0]]))
        self.wait(1.0)
        here = self.position()
        end = here + [0.0, -0.1, 0.0, 0.0, 0.0, 0.0]
        _, second = self.send(_goal([1.5], [end], goal=GOAL_TOLERANCE, goal_time=3.0))
        status, result = self.result(first)
        self.assertEqual((status, result.error_code), (GoalStatus.STATUS_ABORTED, Result.INVALID_GOAL))
        self.assertIn("preempted", result.error_string)
        status, result = self.result(second)
        self.assertEqual((status, result.error_code), (GoalStatus.STATUS_SUCCEEDED, Result.SUCCESSFUL),
                         result.error_string)
        self.assertLess(np.abs(self.position() - end).max(), GOAL_TOLERANCE)

    def test_4_cancel_holds_the_arm(self):
        self.settle()
        start = self.position()
        handle, future = self.send(_goal([3.0], [start + [-0.5, 0, 0, 0, 0, 0]]))
        self.wait(1.0)
        canceling = handle.cancel_goal_async()
        self.assertTrue(self.spin_until(canceling.done, 10.0))
        self.assertEqual(len(canceling.result().goals_canceling), 1)
        status, result = self.result(future)
        self.assertEqual(status, GoalStatus.STATUS_CANCELED, result.error_string)
        self.wait(1.5)
        self.assertLess(np.abs(self.states[-1].velocity).max(), 0.02)
        self.assertGreater(abs(self.position()[0] - (start[0] - 0.5)), 0.1)  # stopped before the goal

    def test_5_an_unknown_joint_is_refused_and_the_running_goal_goes_on(self):
        self.settle()
        start = self.position()
        end = start + [0.0, 0.0, 0.2, 0.0, 0.0, 0.0]
        _, running = self.send(_goal([2.0], [end], goal=GOAL_TOLERANCE, goal_time=3.0))
        self.wait(0.5)
        names = JOINTS[:5] + ["elbow"]
        _, bad = self.send(_goal([1.0], [start], names=names))
        status, result = self.result(bad)
        self.assertEqual((status, result.error_code), (GoalStatus.STATUS_ABORTED, Result.INVALID_JOINTS))
        self.assertIn("unknown joints ['elbow']", result.error_string)
        status, result = self.result(running)
        self.assertEqual((status, result.error_code), (GoalStatus.STATUS_SUCCEEDED, Result.SUCCESSFUL),
                         result.error_string)
        self.assertLess(np.abs(self.position() - end).max(), GOAL_TOLERANCE)


@unittest.skipIf(bool(MISSING), SKIP)
class TestFollowJointTrajectoryShutdown(unittest.TestCase):
    def test_nodes_exit_cleanly(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0, -2, -15])


if not MISSING:
    TestFollowJointTrajectoryShutdown = launch_testing.post_shutdown_test()(TestFollowJointTrajectoryShutdown)
