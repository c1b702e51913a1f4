"""The trajectory node's ~/time_optimal service and untimed FollowJointTrajectory goals, with rclpy
in one process (skipped without ROS 2, naming what is missing).

The service's answer against :func:`robot_dynamics.trajectory.time_optimal` called here, its
refusals (success false and the problem, the node serving on), and an untimed goal executed by
the simulated arm through the trajectory -> controller -> simulator nodes when the node has
``time_untimed_goals``, refused with the reason without it.
"""

from __future__ import annotations


import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")
pytest.importorskip("robot_dynamics_interfaces")

from rclpy.parameter import Parameter  # noqa: E402
from rclpy_nodes import add as _add  # noqa: E402
from rclpy_nodes import call, ros  # noqa: E402,F401
from rclpy_nodes import spin_until as _spin_until  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from robot_dynamics_interfaces.srv import TimeOptimal  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.errors import PathInfeasibleError  # noqa: E402
from robot_dynamics.ros.controller_node import ControllerNode  # noqa: E402
from robot_dynamics.ros.simulator_node import SimulatorNode  # noqa: E402
from robot_dynamics.ros.trajectory_node import TrajectoryNode  # noqa: E402
from robot_dynamics.trajectory import sample_times, time_optimal  # noqa: E402

PUMA_PATH = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.3, -0.5, 0.4, 0.2, -0.3, 0.4],
                      [0.8, -0.9, 0.2, 0.6, -0.6, 1.0]])



def _call(ros, client, request, timeout=30.0):
    return call(ros, client, request, timeout)


def _path(names, positions):
    """A JointTrajectory of positions only, every time_from_start 0."""
    return JointTrajectory(joint_names=list(names),
                           points=[JointTrajectoryPoint(positions=[float(v) for v in q]) for q in positions])


def _seconds(point):
    return point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec


def test_the_service_times_a_path_of_the_puma(ros):
    """Joints in reverse order; the answer in that order, at rest at both ends on the path's ends,
    its efforts within the node's limits (0.9 of the model's) at every point, and time_optimal's
    duration and motion."""
    _add(ros, TrajectoryNode(parameter_overrides=[Parameter("robot", value="puma560")]))
    probe = _add(ros, rclpy.create_node("probe"))
    client = probe.create_client(TimeOptimal, "/trajectory/time_optimal")
    model = rd.load_robot("puma560")
    names = list(model.joint_names)[::-1]
    res = _call(ros, client, TimeOptimal.Request(path=_path(names, PUMA_PATH[:, ::-1]), sample_period=0.01))
    assert res.success, res.message
    expected = time_optimal(model, PUMA_PATH, torque_limit=0.9 * model.effort_limit, grid_points=1001)
    assert res.duration == pytest.approx(expected.duration, rel=1e-12)
    assert list(res.trajectory.joint_names) == names and res.trajectory.header.stamp.sec > 0
    points = res.trajectory.points
    t = sample_times(expected.duration, 100.0)
    np.testing.assert_allclose([_seconds(p) for p in points], t, rtol=0.0, atol=1e-9)
    q, qd, qdd = (np.array([np.asarray(getattr(p, f))[::-1] for p in points])
                  for f in ("positions", "velocities", "accelerations"))
    effort = np.array([np.asarray(p.effort)[::-1] for p in points])
    np.testing.assert_allclose(q[[0, -1]], PUMA_PATH[[0, -1]], atol=1e-9)
    np.testing.assert_allclose(qd[[0, -1]], 0.0, atol=1e-9)
    q_e, qd_e, qdd_e = expected.sample(t)
    np.testing.assert_allclose(q, q_e, atol=1e-12)
    np.testing.assert_allclose(qd, qd_e, atol=1e-12)
    np.testing.assert_allclose(qdd, qdd_e, atol=1e-12)
    np.testing.assert_allclose(effort, rd.rnea(model, q, qd, qdd), atol=1e-9)
    assert np.all(np.abs(effort) <= 0.9 * model.effort_limit * (1 + 1e-6))
    assert res.peak_torque_ratio == pytest.approx(np.max(np.abs(effort) / (0.9 * model.effort_limit)), rel=1e-12)
    assert res.peak_torque_ratio > 0.95


def test_bad_requests_get_success_false_and_the_node_serves_on(ros):
    _add(ros, TrajectoryNode(parameter_overrides=[Parameter("robot", value="planar2")]))
    probe = _add(ros, rclpy.create_node("probe"))
    client = probe.create_client(TimeOptimal, "/trajectory/time_optimal")
    names = ["shoulder", "elbow"]
    with pytest.raises(PathInfeasibleError) as raised:  # effort limits below the static torque
        time_optimal(rd.load_robot("planar2"), np.array([[0.0, 0.0], [0.8, -0.5]]), torque_limit=[5.0, 5.0])
    for request, words in [
        (TimeOptimal.Request(path=_path(names, [[0.0, 0.0], [0.5, float("nan")]])),
         "path.points[1].positions: contains NaN"),
        (TimeOptimal.Request(path=_path(["shoulder", "wrist"], [[0.0, 0.0], [0.5, 0.1]])), "'wrist'"),
        (TimeOptimal.Request(path=_path(names, [[0.0, 0.0], [0.5]])), "path.points[1].positions: expected 2 values"),
        (TimeOptimal.Request(path=_path(names, [[0.0, 0.0], [0.5, 0.1]]), max_velocities=[1.0]),
         "max_velocities: expected 2 values"),
        (TimeOptimal.Request(path=_path(names, [[0.0, 0.0], [0.8, -0.5]]), max_efforts=[5.0, 5.0]),
         str(raised.value)),
    ]:
        res = _call(ros, client, request)
        assert res.success is False and words in res.message, (words, res.message)
    good = _call(ros, client, TimeOptimal.Request(path=_path(names, [[0.0, 0.0], [0.8, -0.5]])))
    assert good.success and good.duration > 0.0, good.message


def _untimed_goal(FollowJointTrajectory, names, positions):
    goal = FollowJointTrajectory.Goal()
    goal.trajectory = _path(names, positions)
    return goal


def _follow_joint_trajectory():
    try:
        from control_msgs.action import FollowJointTrajectory
    except ImportError:
        pytest.skip("control_msgs is not built in this ROS 2 (no C++ stack): no control_msgs/action/"
                    "FollowJointTrajectory to send")
    return FollowJointTrajectory


@pytest.mark.parametrize("timed", [True, False], ids=["time_untimed_goals", "default"])
def test_an_untimed_follow_joint_trajectory_goal(ros, timed):
    """With time_untimed_goals the simulated planar arm executes a path of positions only to its
    end (SUCCEEDED, the arm there); without it the goal is refused (ABORTED, INVALID_GOAL), naming
    the parameter."""
    FollowJointTrajectory = _follow_joint_trajectory()
    from action_msgs.msg import GoalStatus
    from rclpy.action import ActionClient

    executor, _ = ros
    common = [Parameter("robot", value="planar2")]
    _add(ros, SimulatorNode(parameter_overrides=common))
    _add(ros, ControllerNode(parameter_overrides=common))
    _add(ros, TrajectoryNode(parameter_overrides=common + [Parameter("time_untimed_goals", value=timed)]))
    probe = _add(ros, rclpy.create_node("probe"))
    states = []
    probe.create_subscription(JointState, "/joint_states", states.append, 10)
    client = ActionClient(probe, FollowJointTrajectory, "/trajectory/follow_joint_trajectory")
    assert client.wait_for_server(timeout_sec=10.0)
    assert _spin_until(executor, lambda: len(states) > 10, 10.0), "no /joint_states from the simulator"
    path = [[0.0, 0.0], [0.3, -0.2], [0.6, -0.5]]  # from where the simulated arm starts
    sent = client.send_goal_async(_untimed_goal(FollowJointTrajectory, ["elbow", "shoulder"],
                                                [q[::-1] for q in path]))
    assert _spin_until(executor, sent.done, 10.0) and sent.result().accepted
    result = sent.result().get_result_async()
    assert _spin_until(executor, result.done, 30.0)
    status, res = result.result().status, result.result().result
    if not timed:
        assert (status, res.error_code) == (GoalStatus.STATUS_ABORTED, FollowJointTrajectory.Result.INVALID_GOAL)
        assert "untimed path" in res.error_string and "time_untimed_goals" in res.error_string
        return
    assert (status, res.error_code) == (GoalStatus.STATUS_SUCCEEDED, FollowJointTrajectory.Result.SUCCESSFUL), \
        res.error_string
    np.testing.assert_allclose(states[-1].position, path[-1], atol=0.01)
