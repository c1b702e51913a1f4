"""launch_testing test of arm.launch.py control:=node hardware:=topic: the simulated PUMA 560 brought
up through ros2_control, our controller and simulator nodes beside it.

Run where ROS 2 with its C++ stack is sourced and the packages are built (``colcon test``):
    launch_test robot_dynamics_bringup/test/test_arm_node_topic.py

Real components only: controller_manager's ros2_control_node with the URDF's generated
``<ros2_control>`` block, topic_based_ros2_control/TopicBasedSystem as the hardware, the
spawner, joint_state_broadcaster, effort_controllers/JointGroupEffortController and
robot_state_publisher, beside our simulator, controller, trajectory and dynamics nodes. The
tests check that both controllers are active, that the topic graph is the one a real arm runs
(our controller reads joint_state_broadcaster's /joint_states and commands the effort
controller; only TopicBasedSystem talks to the simulator), that the arm reaches the README's
goal with the plan and every effort within its limit, and that every process ends with exit code 0.

topic_based_ros2_control is released for Humble, not for Jazzy (built from source there), and is
no dependency of this package: without it the test classes are skipped naming it and there is
no launch description. Nothing is skipped while the module is imported: launch_testing's pytest
plugin imports every module of the folder to look for launch tests, and under pytest 8 (Jazzy) a
skip raised there skips the whole folder.
"""

from __future__ import annotations

import os
import sys
import unittest

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from arm_probe import ArmProbe, arm_launch_file  # noqa: E402

from robot_dynamics.ros.conversion import stamp_nanoseconds  # noqa: E402
from robot_dynamics.ros.probe import included_launch, package_share  # noqa: E402


MISSING = ("" if package_share("topic_based_ros2_control") is not None else
           "topic_based_ros2_control is not built in this ROS 2 (hardware:=topic needs it)")
if not MISSING:
    import launch_testing
    import launch_testing.asserts

GOAL = [0.5, -0.4, 0.3, 0.2, -0.1, 0.6]  # the README's arm.launch.py goal


if not MISSING:

    @pytest.mark.launch_test
    def generate_test_description():
        return included_launch(arm_launch_file(), {"robot": "puma560", "control": "node", "hardware": "topic",
                                                   "goal": ",".join(str(g) for g in GOAL), "use_rviz": "false"})


@unittest.skipIf(bool(MISSING), MISSING)
class TestArmLaunch(ArmProbe):
    probe_name = "arm_launch_probe"

    def endpoints(self, topic, kind):
        infos = (self.node.get_publishers_info_by_topic if kind == "pub" else self.node.get_subscriptions_info_by_topic)(topic)
        return {i.node_name for i in infos}

    def test_1_both_controllers_are_active(self):
        self.wait_for_controllers({"joint_state_broadcaster": "active", "effort_controller": "active"}, 60.0)
        states = self.controllers()
        self.assertEqual(states["effort_controller"][1], "effort_controllers/JointGroupEffortController")
        self.assertEqual(states["joint_state_broadcaster"][1], "joint_state_broadcaster/JointStateBroadcaster")

    def test_2_the_topic_graph_is_a_real_arms(self):
        bridge = {"topic_based_ros2_control_puma560"}
        expected = [
            # /joint_states comes from joint_state_broadcaster only; our nodes read it
            ("/joint_states", "pub", {"joint_state_broadcaster"}),
            ("/joint_states", "sub", {"controller", "trajectory", "dynamics", "robot_state_publisher"}),
            # our controller commands the effort controller, never the simulator directly
            ("/effort_controller/commands", "pub", {"controller"}),
            ("/effort_controller/commands", "sub", {"effort_controller"}),
            # only the hardware plugin talks to the simulator
            ("/robot_dynamics/joint_commands", "pub", bridge),
            ("/robot_dynamics/joint_commands", "sub", {"simulator"}),
            ("/robot_dynamics/joint_states", "pub", {"simulator"}),
            ("/robot_dynamics/joint_states", "sub", bridge),
        ]

        def graph():
            return [(topic, kind, self.endpoints(topic, kind) - {"arm_launch_probe"}) for topic, kind, _ in expected]

        # every node up (a loaded machine starts them over several seconds), then exactly this graph
        self.spin_until(lambda: graph() == expected, 60.0)
        self.assertEqual(graph(), expected)

    def test_3_the_arm_reaches_the_goal_within_its_effort_limits(self):
        model = self.model
        self.assertTrue(self.spin_until(lambda: len(self.states) > 20, 60.0), "no /joint_states")
        # joint_state_broadcaster orders the joints its own way: by name, as our nodes read them
        self.assertEqual(sorted(self.states[-1].name), sorted(model.joint_names))

        def at_goal():
            s = self.states[-1]
            return (np.allclose(self.model_order(s, "position"), GOAL, atol=1e-2)
                    and np.allclose(self.model_order(s, "velocity"), 0.0, atol=5e-2))

        self.assertTrue(self.spin_until(at_goal, 90.0), f"arm at {self.model_order(self.states[-1])}")
        # ... with the plan (1.3 s), not seconds behind it: the simulated arm keeps to the clock
        # that the reference runs on, and the loop acts on the newest state (behind by a queue,
        # the arm crept up on the goal and stopped short of it by its Coulomb friction)
        stamps = 1e-9 * np.array([stamp_nanoseconds(s.header.stamp) for s in self.states])
        positions = np.array([self.model_order(s) for s in self.states])
        moved = int(np.argmax(np.max(np.abs(positions - positions[0]), axis=1) > 1e-3))
        arrived = int(np.argmax(np.all(np.abs(positions - GOAL) <= 1e-2, axis=1)))
        self.assertLess(stamps[arrived] - stamps[moved], 3.0, "from the first motion to the goal [s]")
        efforts = np.array([self.model_order(s, "effort") for s in self.states])
        efforts = efforts[np.all(np.isfinite(efforts), axis=1)]  # NaN: no command yet (brakes on)
        self.assertGreater(len(efforts), 20)
        self.assertGreater(float(np.max(np.abs(efforts))), 1.0, "the efforts came through ros2_control")
        self.assertTrue(np.all(np.abs(efforts) <= model.effort_limit + 1e-9))
        at_limit = np.any(np.abs(efforts) >= 0.999 * model.effort_limit, axis=1)
        self.assertLess(float(np.mean(at_limit)), 0.05, f"{int(at_limit.sum())} of {len(at_limit)} states at a limit")


@unittest.skipIf(bool(MISSING), MISSING)
class TestArmLaunchShutdown(unittest.TestCase):
    def test_every_process_exits_cleanly(self, proc_info):
        # our nodes stop cleanly on launch's SIGINT, controller_manager and robot_state_publisher too,
        # and the spawners exit once their controllers are active
        launch_testing.asserts.assertExitCodes(proc_info, allowable_exit_codes=[0])


if not MISSING:
    TestArmLaunchShutdown = launch_testing.post_shutdown_test()(TestArmLaunchShutdown)
