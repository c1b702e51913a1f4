"""The trajectory node's time-optimal timing (ros.timing, ros.motion, ros.follow), without rclpy.

The ``~/time_optimal`` service against :func:`robot_dynamics.trajectory.time_optimal` called
directly, its refusals, and untimed FollowJointTrajectory goals: refused without
``time_untimed_goals``, timed and executed with it (the trajectory -> controller -> simulator
objects of the nodes wired by messages, as the nodes are by topics).
"""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from follow_goal import Goal, JointTolerance, run_goal
from robot_dynamics.errors import PathInfeasibleError
from robot_dynamics.ros import conversion as cv
from robot_dynamics.ros.follow import ResultCode, TrajectoryFollower
from robot_dynamics.ros.messages import message_class, service_class
from robot_dynamics.ros.motion import ControlLoop, SimulatedPlant, TrajectoryStreamer, build_controller
from robot_dynamics.ros.params import defaults
from robot_dynamics.ros.timing import PathTimer, is_untimed
from robot_dynamics.trajectory import sample_times, time_optimal

TO = service_class("TimeOptimal")
JointState = message_class("sensor_msgs/JointState")
JointTrajectory = message_class("trajectory_msgs/JointTrajectory")
Point = message_class("trajectory_msgs/JointTrajectoryPoint")

#: A path of the PUMA 560 through three points (model order).
PUMA_PATH = np.array([[0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.3, -0.5, 0.4, 0.2, -0.3, 0.4],
                      [0.8, -0.9, 0.2, 0.6, -0.6, 1.0]])


def path_message(names, positions, times=None):
    """A JointTrajectory of positions only (every time_from_start 0 unless ``times``)."""
    msg = JointTrajectory(joint_names=list(names))
    for k, q in enumerate(positions):
        p = Point(positions=[float(v) for v in q])
        if times is not None:
            cv.fill_duration(p.time_from_start, times[k])
        msg.points.append(p)
    return msg


def request(names, positions, **fields):
    return TO.Request(path=path_message(names, positions), **fields)


def answer(streamer, req):
    return streamer.handle_time_optimal(req, TO.Response(), Point)


# -- the service ----------------------------------------------------------------------------------


def test_the_service_times_the_path_as_time_optimal_does(puma):
    """Joints in reverse order: the answer keeps that order, starts and ends at rest on the path's
    ends, keeps the node's effort limits (0.9 of the model's) at every returned point, its efforts
    are the inverse dynamics of its points, and its duration is time_optimal's."""
    streamer = TrajectoryStreamer(puma, sample_period=0.01)
    names = list(puma.joint_names)[::-1]
    res = answer(streamer, request(names, PUMA_PATH[:, ::-1]))
    assert res.success, res.message
    expected = time_optimal(puma, PUMA_PATH, torque_limit=0.9 * puma.effort_limit, grid_points=1001)
    assert res.duration == pytest.approx(expected.duration, rel=1e-12)
    assert list(res.trajectory.joint_names) == names
    arr = cv.trajectory_to_arrays(res.trajectory, puma.joint_names)  # back to the model's order
    t = sample_times(expected.duration, 100.0)  # the period asked, the last point at the end
    assert arr.estimated == () and t[-1] == expected.duration
    np.testing.assert_allclose(arr.time, t, rtol=0.0, atol=1e-9)  # to the nanoseconds of a Duration
    np.testing.assert_allclose(arr.position[[0, -1]], PUMA_PATH[[0, -1]], atol=1e-9)
    np.testing.assert_allclose(arr.velocity[[0, -1]], 0.0, atol=1e-9)
    q, qd, qdd = expected.sample(t)
    np.testing.assert_allclose(arr.position, q, atol=1e-12)
    np.testing.assert_allclose(arr.velocity, qd, atol=1e-12)
    np.testing.assert_allclose(arr.acceleration, qdd, atol=1e-12)
    effort = np.array([np.asarray(p.effort)[::-1] for p in res.trajectory.points])
    np.testing.assert_allclose(effort, rd.rnea(puma, arr.position, arr.velocity, arr.acceleration), atol=1e-9)
    ratio = np.abs(effort) / (0.9 * puma.effort_limit)
    assert ratio.max() <= 1.0 + 1e-6
    assert res.peak_torque_ratio == pytest.approx(ratio.max(), rel=1e-12)
    assert res.peak_torque_ratio > 0.95  # an effort limit is reached: the efforts, not the speeds alone, time it
    np.testing.assert_allclose(np.abs(arr.velocity).max(axis=0) <= puma.velocity_limit * (1 + 1e-6), True)
    assert res.message.startswith(f"timed {res.duration:.3f} s, {arr.time.size} points; peak effort")


def test_the_request_limits_grid_and_period_override_the_defaults(planar):
    streamer = TrajectoryStreamer(planar)
    names = ["elbow", "shoulder"]  # the request's order
    path = np.array([[0.0, 0.0], [0.4, -0.3], [0.9, -0.8]])  # model order (shoulder, elbow)
    req = request(names, path[:, ::-1], max_velocities=[2.0, 1.0], max_accelerations=[8.0, 6.0],
                  max_efforts=[20.0, 45.0], grid_points=401, sample_period=0.02)
    res = answer(streamer, req)
    assert res.success, res.message
    expected = time_optimal(planar, path, velocity_limit=[1.0, 2.0], acceleration_limit=[6.0, 8.0],
                            torque_limit=[45.0, 20.0], grid_points=401)
    assert res.duration == pytest.approx(expected.duration, rel=1e-12)
    t = np.array([cv.duration_to_seconds(p.time_from_start) for p in res.trajectory.points])
    np.testing.assert_allclose(t, sample_times(expected.duration, 50.0), rtol=0.0, atol=1e-9)
    effort = np.array([p.effort for p in res.trajectory.points])  # the request's order: elbow, shoulder
    assert np.all(np.abs(effort) <= np.array([20.0, 45.0]) * (1 + 1e-6))
    qd = np.array([p.velocities for p in res.trajectory.points])
    assert np.all(np.abs(qd) <= np.array([2.0, 1.0]) * (1 + 1e-6))
    default = answer(streamer, request(names, path[:, ::-1]))
    assert default.success and default.duration != pytest.approx(res.duration)


def test_actuator_limits_bound_the_motors_of_a_geared_robot():
    """max_actuator_efforts, in the order of InverseDynamics' actuator_efforts (the drive train's
    inputs), limit the motors: the answer's efforts mapped to the actuators stay within them and
    one reaches its limit; the duration is time_optimal's with those motor limits."""
    from robot_dynamics.ros.logic import actuator_efforts

    model = rd.load_robot("three_dof_geared")
    path = np.array([[0.0, 0.0, 0.0], [0.5, -0.4, 0.6], [0.9, -0.2, 1.0]])
    limit = np.array([14.0, 20.0, 6.0])  # about half what the joint limits alone let the motors take
    res = answer(TrajectoryStreamer(model, sample_period=0.002),
                 request(list(model.joint_names), path, max_actuator_efforts=list(limit)))
    assert res.success, res.message
    expected = time_optimal(model, path, torque_limit=0.9 * model.effort_limit, motor_torque_limit=limit)
    assert res.duration == pytest.approx(expected.duration, rel=1e-12)
    assert res.duration > time_optimal(model, path, torque_limit=0.9 * model.effort_limit).duration
    motors = np.array([actuator_efforts(model, np.asarray(p.positions), np.asarray(p.effort))
                       for p in res.trajectory.points])
    ratio = np.abs(motors) / limit
    assert ratio.max() <= 1.0 + 1e-6 and res.peak_torque_ratio == pytest.approx(ratio.max(), rel=1e-9)
    assert res.peak_torque_ratio > 0.99
    assert f"of its limit (actuator {model.drivetrain.inputs[int(np.argmax(ratio.max(axis=0)))]})" in res.message


def test_the_node_defaults_come_from_its_parameters(planar):
    p = defaults("trajectory")
    assert (p["time_optimal.effort_scaling"], p["time_optimal.grid_points"], p["time_untimed_goals"]) == (0.9, 1001,
                                                                                                         False)
    timer = PathTimer(planar, effort_scaling=0.7, grid_points=201)
    np.testing.assert_allclose(timer.effort_limit, 0.7 * planar.effort_limit)
    path = np.array([[0.0, 0.0], [0.9, -0.8]])
    got = timer.time(path)
    assert got.duration == pytest.approx(time_optimal(planar, path, torque_limit=0.7 * planar.effort_limit,
                                                      grid_points=201).duration, rel=1e-12)
    for bad in (0.0, 1.5, float("nan")):
        with pytest.raises(rd.InputError, match="effort_scaling"):
            PathTimer(planar, effort_scaling=bad)


def _bad_requests(model):
    names = list(model.joint_names)
    path = [[0.0, 0.0], [0.5, -0.4]]
    return [
        (request(names, [[0.0, 0.0], [0.5, float("nan")]]), "path.points[1].positions: contains NaN"),
        (request(["shoulder", "wrist"], path), "wrist"),
        (request(["shoulder"], [[0.0], [0.5]]), "missing joints ['elbow']"),
        (request(names, [[0.0, 0.0], [0.5]]), "path.points[1].positions: expected 2 values"),
        (request([], [[0.0, 0.0, 0.0], [0.5, 0.1, 0.0]]),
         "path.points[0].positions: expected 2 values ordered as ['shoulder', 'elbow'] (path.joint_names is empty)"),
        (request(names, [[0.5, -0.4]]), "a path needs at least 2"),
        (TO.Request(), "the path has no points"),
        (request(names, path, max_velocities=[1.0]), "max_velocities: expected 2 values"),
        (request(names, path, max_efforts=[10.0, -1.0]), "max_efforts: expected limits > 0"),
        (request(names, path, max_accelerations=[1.0, float("inf")]), "max_accelerations: contains NaN or infinite"),
        (request(names, path, max_actuator_efforts=[1.0]), "max_actuator_efforts: expected 2 values"),
        (request(names, path, grid_points=1), "grid_points: expected 2 to 100,001"),
        (request(names, path, grid_points=200_000), "grid_points: expected 2 to 100,001"),
        (request(names, path, sample_period=1e-9), "sample_period"),
        (request(names, [[0.0, 0.0], [0.5, 3.5]]), "path.points[1]: joint 'elbow' at 3.5, outside its limits"),
    ]


def test_bad_requests_are_answered_with_the_problem(planar):
    streamer = TrajectoryStreamer(planar)
    for req, words in _bad_requests(planar):
        res = answer(streamer, req)
        assert res.success is False and words in res.message, (words, res.message)
        assert res.trajectory.points == []


def test_an_infeasible_path_is_answered_with_the_timings_error(planar):
    """Effort limits below the static torque on the path: time_optimal's PathInfeasibleError,
    its message (the path parameter, the joint, the torque) as the answer's."""
    streamer = TrajectoryStreamer(planar)
    path = np.array([[0.0, 0.0], [0.8, -0.5]])
    with pytest.raises(PathInfeasibleError) as raised:
        time_optimal(planar, path, torque_limit=[5.0, 5.0], grid_points=1001)
    res = answer(streamer, request(list(planar.joint_names), path, max_efforts=[5.0, 5.0]))
    assert res.success is False and res.message == str(raised.value)
    assert raised.value.joint in res.message


# -- untimed FollowJointTrajectory goals ----------------------------------------------------------


def follower(model, q0=None, **options):
    f = TrajectoryFollower(TrajectoryStreamer(model), **options)
    q0 = np.zeros(model.nq) if q0 is None else np.asarray(q0, float)
    assert f.on_joint_state(JointState(name=list(model.joint_names), position=list(q0), velocity=[0.0] * model.nq),
                            0.0) == (True, "ok")
    return f


def test_what_is_an_untimed_path():
    names = ["shoulder", "elbow"]
    assert is_untimed(path_message(names, [[0.0, 0.0], [0.3, 0.2]]))
    assert is_untimed(path_message(names, [[0.3, 0.2]]))
    assert not is_untimed(path_message(names, []))
    assert not is_untimed(path_message(names, [[0.0, 0.0], [0.3, 0.2]], times=[0.0, 1.0]))
    with_velocities = path_message(names, [[0.0, 0.0], [0.3, 0.2]])
    for p in with_velocities.points:
        p.velocities = [0.0, 0.0]
    assert not is_untimed(with_velocities)


def test_an_untimed_goal_is_refused_unless_the_node_times_them(planar):
    names = list(planar.joint_names)
    f = follower(planar)
    refused, _ = f.accept(Goal(path_message(names, [[0.0, 0.0], [0.3, -0.2]])), "k", 0.0)
    assert refused.code == ResultCode.INVALID_GOAL and "untimed path" in refused.message
    assert "time_untimed_goals" in refused.message and f.active is None and f.streamer.active is None
    # one point at 0 s keeps its meaning without the parameter: be there now (within start_tolerance)
    refused, _ = f.accept(Goal(path_message(names, [[0.01, 0.0]])), "one", 0.0)
    assert refused is None and f.active.trajectory.duration == 0.0


def test_an_untimed_goal_is_timed_from_the_measured_position(planar):
    names = ["elbow", "shoulder"]
    q0 = np.array([0.1, -0.05])
    f = follower(planar, q0, time_untimed=True)
    timer = f.streamer.timer
    # its first point at the arm (within start_tolerance): the path as given
    path = np.array([[0.1, -0.05], [0.5, -0.3], [0.9, -0.6]])
    assert f.accept(Goal(path_message(names, path[:, ::-1])), "a", 2.0) == (None, [])
    assert f.active.start_time == 2.0 and f.active.trajectory is f.streamer.active.trajectory
    assert f.active.trajectory.duration == pytest.approx(timer.time(path).duration, rel=1e-12)
    np.testing.assert_allclose(f.active.final[0], path[-1])
    np.testing.assert_allclose(f.active.final[1], 0.0)
    # a first point away from the arm, and a single point: the motion starts where the arm is
    for k, points in enumerate((path[1:], path[-1:])):
        refused, ended = f.accept(Goal(path_message(names, points[:, ::-1])), f"b{k}", 3.0)
        assert refused is None and [(o.key, o.code) for o in ended] == [("a" if k == 0 else "b0",
                                                                        ResultCode.INVALID_GOAL)]
        expected = timer.time(np.vstack([q0, points]))
        assert f.active.trajectory.duration == pytest.approx(expected.duration, rel=1e-12)
        q, qd, _ = f.active.trajectory.sample([0.0, f.active.trajectory.duration])
        np.testing.assert_allclose(q, [q0, path[-1]], atol=1e-9)
        np.testing.assert_allclose(qd, 0.0, atol=1e-9)


def test_a_goal_begins_once_it_is_timed(planar):
    """The node restarts an accepted goal at the time its timing ended (the first timing of a
    process takes a sizeable fraction of a second): the reference then begins at the path's start,
    not that far along it. A goal stamped later keeps its stamp."""
    names = list(planar.joint_names)
    f = follower(planar, time_untimed=True)
    assert f.accept(Goal(path_message(names, [[0.0, 0.0], [0.6, -0.4]])), "a", 2.0) == (None, [])
    f.restart_at(2.6)
    assert f.active.start_time == 2.6 and f.streamer.active.start_time == 2.6
    np.testing.assert_allclose(f.streamer.reference(2.6).q, [0.0, 0.0], atol=1e-12)
    f.restart_at(2.3)  # never earlier
    assert f.active.start_time == 2.6 and f.streamer.active.start_time == 2.6
    later = path_message(names, [[0.0, 0.0], [0.6, -0.4]])
    later.header.stamp.sec = 5
    assert f.accept(Goal(later), "b", 3.0)[0] is None and f.active.start_time == 5.0
    f.restart_at(3.1)
    assert f.active.start_time == 5.0 and f.streamer.active.start_time == 5.0


def test_an_untimed_goal_that_cannot_be_timed_leaves_the_running_one(planar):
    names = list(planar.joint_names)
    f = follower(planar, time_untimed=True)
    assert f.accept(Goal(path_message(names, [[0.0, 0.0], [0.2, 0.1]])), "running", 0.0) == (None, [])
    running = f.streamer.active.trajectory
    for points, words in (([[0.0, 0.0], [0.4, 3.5]], "trajectory.points[1]: joint 'elbow' at 3.5, outside its limits"),
                          ([[0.0, 0.0], [0.4, float("nan")]], "NaN")):
        refused, ended = f.accept(Goal(path_message(names, points)), "bad", 0.1)
        assert refused.code == ResultCode.INVALID_GOAL and words in refused.message and ended == []
        assert f.active.key == "running" and f.streamer.active.trajectory is running
    weak = follower(planar, time_untimed=True)
    weak.streamer.timer = PathTimer(planar, effort_scaling=0.05)  # cannot hold the arm up on this path
    refused, _ = weak.accept(Goal(path_message(names, [[0.0, 0.0], [0.8, -0.5]])), "weak", 0.0)
    assert refused.code == ResultCode.INVALID_GOAL and weak.active is None
    with pytest.raises(PathInfeasibleError) as raised:
        weak.streamer.timer.time(np.array([[0.0, 0.0], [0.8, -0.5]]))
    assert refused.message == str(raised.value)


def test_the_simulated_puma_executes_an_untimed_goal(puma):
    """Trajectory node (follower, time_untimed_goals) -> controller (computed torque) -> simulator,
    wired by messages: the timed path is followed within 0.02 rad to the goal and succeeds, every
    effort commanded within the model's limits (the timing keeps 10 % of them for the feedback)."""
    names = list(puma.joint_names)
    streamer = TrajectoryStreamer(puma)
    f = TrajectoryFollower(streamer, goal_position=0.01, goal_velocity=0.05, time_untimed=True)
    loop = ControlLoop(puma, build_controller(puma, "computed_torque"), names)
    plant = SimulatedPlant(puma, command_joints=names)
    goal = Goal(path_message(names[::-1], PUMA_PATH[:, ::-1]),
                path_tolerance=[JointTolerance(j, position=0.02) for j in names],
                goal_tolerance=[JointTolerance(j, position=0.005) for j in names])
    run = run_goal(f, loop, plant, streamer, goal, 6.0)
    ended, now, errors, efforts, duration, rate = run.ended, run.now, run.errors, run.efforts, run.duration, 250.0
    assert [(o.key, o.code) for o in ended] == [("puma", ResultCode.SUCCESSFUL)], ended
    assert 0.02 + duration <= now <= 0.02 + duration + 1.0
    np.testing.assert_allclose(plant.q, PUMA_PATH[-1], atol=0.005)
    assert len(errors) > duration * rate and max(errors) < 0.02, max(errors)
    assert np.all(np.abs(np.array(efforts)) <= puma.effort_limit * (1 + 1e-9))
