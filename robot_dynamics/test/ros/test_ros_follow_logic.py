"""The FollowJointTrajectory action's logic (ros.follow), without rclpy.

Goals are objects with the fields of control_msgs/action/FollowJointTrajectory's goal (the
trajectory and durations are messages of the real layout; control_msgs is not in the type
store, so JointTolerance and the goal are small classes with its fields). The arm is either a
synthetic one (the desired motion plus a chosen offset, so the errors are known numbers) or the
trajectory -> controller -> simulator objects of the nodes wired in a loop.
"""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from follow_goal import Goal, JointTolerance, run_goal
from robot_dynamics.ros.follow import ResultCode, Tolerances, TrajectoryFollower, resolve_tolerances
from robot_dynamics.ros.messages import message_class
from robot_dynamics.ros.motion import ControlLoop, SimulatedPlant, TrajectoryStreamer, build_controller

JointState = message_class("sensor_msgs/JointState")
JointTrajectory = message_class("trajectory_msgs/JointTrajectory")
Point = message_class("trajectory_msgs/JointTrajectoryPoint")
Duration = message_class("builtin_interfaces/Duration")


def duration(t):
    sec = int(np.floor(t))
    return Duration(sec=sec, nanosec=int(round((t - sec) * 1e9)))


def trajectory(names, times, positions, velocities=None, accelerations=None, stamp=0.0):
    msg = JointTrajectory(joint_names=list(names))
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(stamp), int(round((stamp - int(stamp)) * 1e9))
    msg.points = [
        Point(positions=list(map(float, q)), velocities=[] if velocities is None else list(map(float, velocities[k])),
              accelerations=[] if accelerations is None else list(map(float, accelerations[k])),
              time_from_start=duration(t))
        for k, (t, q) in enumerate(zip(times, positions))
    ]
    return msg


def follower(model, q0=None, **options):
    streamer = TrajectoryStreamer(model)
    f = TrajectoryFollower(streamer, **options)
    q0 = np.zeros(model.nq) if q0 is None else np.asarray(q0, float)
    assert f.on_joint_state(JointState(name=list(model.joint_names), position=list(q0), velocity=[0.0] * model.nq),
                            0.0) == (True, "ok")
    return f


def two_point_goal(model, **fields):
    """From rest at 0 to 0.3 (shoulder) and -0.2 (elbow) in 1 s, through a mid point at 0.5 s."""
    names = list(model.joint_names)
    traj = trajectory(names, [0.0, 0.5, 1.0], [[0.0, 0.0], [0.15, -0.1], [0.3, -0.2]],
                      velocities=[[0.0, 0.0], [0.45, -0.3], [0.0, 0.0]])
    return Goal(traj, **fields)


def drive(f, model, until, offset=lambda t: (0.0, 0.0), rate=1000.0, start=0.0, key="a"):
    """Feed joint states: the desired motion of the running goal plus offset(t) = (dq, dqd) per joint.

    Returns (time, outcomes) of the first state that ended a goal, or (until, []) at the end.
    """
    n = model.nq
    for k in range(1, int(round((until - start) * rate)) + 1):
        now = start + k / rate
        g = f.active
        traj = g.trajectory if g is not None else f.streamer.active.trajectory
        t0 = g.start_time if g is not None else f.streamer.active.start_time
        q, qd, _ = traj.sample(max(0.0, now - t0))
        dq, dqd = (np.broadcast_to(np.asarray(v, float), (n,)) for v in offset(now))
        ok, status = f.on_joint_state(JointState(name=list(model.joint_names), position=list(q.reshape(-1) + dq),
                                                 velocity=list(qd.reshape(-1) + dqd)), now)
        assert ok, status
        ended = f.update(now)
        if ended:
            return now, ended
    return until, []


# -- tolerances -------------------------------------------------------------------------------


def test_tolerance_values_zero_keeps_the_default_minus_one_erases_positive_sets():
    names = ["a", "b", "c"]
    defaults = Tolerances.uniform(3, position=0.01, velocity=0.05)
    np.testing.assert_array_equal(defaults.position, [0.01, 0.01, 0.01])
    np.testing.assert_array_equal(defaults.acceleration, [np.inf] * 3)  # 0 as a default = not checked
    t = resolve_tolerances([JointTolerance("c", position=0.2, velocity=-1.0, acceleration=0.0),
                            JointTolerance("a", position=0.0, velocity=0.3, acceleration=4.0)], defaults, names, "x")
    np.testing.assert_array_equal(t.position, [0.01, 0.01, 0.2])
    np.testing.assert_array_equal(t.velocity, [0.3, 0.05, np.inf])
    np.testing.assert_array_equal(t.acceleration, [4.0, np.inf, np.inf])
    # -1 on a bound that had no default stays unchecked; the defaults object is not changed
    t = resolve_tolerances([JointTolerance("b", acceleration=-1.0)], defaults, names, "x")
    assert t.acceleration[1] == np.inf and defaults.velocity[2] == 0.05


@pytest.mark.parametrize(
    "entry, code, words",
    [
        (JointTolerance("d", position=0.1), ResultCode.INVALID_JOINTS, "unknown joint 'd'"),
        (JointTolerance("a", position=-0.5), ResultCode.INVALID_GOAL, "-0.5 is not a tolerance"),
        (JointTolerance("a", velocity=-2.0), ResultCode.INVALID_GOAL, "x[0].velocity: -2"),
        (JointTolerance("a", acceleration=float("nan")), ResultCode.INVALID_GOAL, "finite"),
        (JointTolerance("a", position=float("inf")), ResultCode.INVALID_GOAL, "finite"),
    ],
)
def test_tolerance_values_that_are_refused(entry, code, words):
    from robot_dynamics.ros.follow import GoalRefused

    with pytest.raises(GoalRefused) as err:
        resolve_tolerances([entry], Tolerances.uniform(3, 0.01), ["a", "b", "c"], "x")
    assert err.value.code == code and words in str(err.value)
    with pytest.raises(GoalRefused) as err:
        resolve_tolerances([JointTolerance("a", 0.1), JointTolerance("a", 0.2)], Tolerances.uniform(3), ["a", "b"], "x")
    assert err.value.code == ResultCode.INVALID_JOINTS and "twice" in str(err.value)


def test_violation_names_the_joint_the_quantity_and_the_excess():
    t = Tolerances(np.array([0.01, 0.02]), np.array([np.inf, 0.1]), np.array([np.inf, np.inf]))
    assert t.violation(["s", "e"], (np.array([0.01, -0.02]), np.zeros(2), np.zeros(2))) is None  # bounds inclusive
    why = t.violation(["s", "e"], (np.array([0.015, -0.03]), np.zeros(2), np.zeros(2)))
    assert why == "e: position error -0.03 exceeds the tolerance 0.02 by 0.01"  # the larger excess first
    why = t.violation(["s", "e"], (np.zeros(2), np.array([5.0, 0.25]), np.zeros(2)))
    assert why == "e: velocity error +0.25 exceeds the tolerance 0.1 by 0.15"  # s has no velocity bound


# -- validation: codes, and nothing running is disturbed ----------------------------------------


def _invalid_goals(model):
    names = list(model.joint_names)
    ok = two_point_goal(model).trajectory
    pts = [list(p.positions) for p in ok.points]
    return [
        (Goal(trajectory([], [0.0], [[]])), ResultCode.INVALID_JOINTS, "joint_names is empty"),
        (Goal(trajectory(["shoulder", "wrist"], [0.0, 1.0], pts[::2])), ResultCode.INVALID_JOINTS,
         "unknown joints ['wrist']"),
        (Goal(trajectory(["elbow"], [0.0, 1.0], [[0.0], [0.1]])), ResultCode.INVALID_JOINTS,
         "missing joints ['shoulder']"),
        (Goal(trajectory(["elbow", "elbow"], [0.0, 1.0], pts[::2])), ResultCode.INVALID_JOINTS, "more than once"),
        (Goal(JointTrajectory(joint_names=names)), ResultCode.INVALID_GOAL, "trajectory is empty"),
        (Goal(trajectory(names, [0.0, 1.0], [[0.0, 0.0], [0.1, 0.2, 0.3]])), ResultCode.INVALID_GOAL,
         "points[1].positions: 3 values, expected 2"),
        (Goal(trajectory(names, [0.0, 1.0], pts[::2], velocities=[[0.0, 0.0], [0.0]])), ResultCode.INVALID_GOAL,
         "points[1].velocities: 1 values, expected 2 (or none)"),
        (Goal(trajectory(names, [0.0, 1.0], pts[::2], accelerations=[[0.0, 0.0], [0.0] * 3])),
         ResultCode.INVALID_GOAL, "points[1].accelerations: 3 values, expected 2 (or none)"),
        (Goal(JointTrajectory(joint_names=names, points=[Point(positions=[0.0, 0.0], velocities=[0.0, 0.0]),
                                                         Point(positions=[0.1, 0.1], time_from_start=duration(1.0))])),
         ResultCode.INVALID_GOAL, "points[1].velocities: empty while other points give velocities"),
        (Goal(trajectory(names, [0.0, 1.0], [[0.0, 0.0], [0.1, float("nan")]])), ResultCode.INVALID_GOAL,
         "NaN or infinite"),
        (Goal(trajectory(names, [0.0, 1.0, 1.0], pts)), ResultCode.INVALID_GOAL,
         "increase strictly, got [0.0, 1.0, 1.0]"),
        (Goal(trajectory(names, [0.0, 1.0, 0.5], pts)), ResultCode.INVALID_GOAL, "increase strictly"),
        (Goal(ok, goal_time_tolerance=Duration(sec=-1)), ResultCode.INVALID_GOAL, "goal_time_tolerance: expected >= 0"),
        (Goal(ok, path_tolerance=[JointTolerance("tail", 0.1)]), ResultCode.INVALID_JOINTS, "unknown joint 'tail'"),
        (Goal(ok, goal_tolerance=[JointTolerance("elbow", -3.0)]), ResultCode.INVALID_GOAL, "-3 is not a tolerance"),
        # refused by ~/execute's own checks (handle_execute), with its reasons
        (Goal(trajectory(names, [0.0, 1.0], [[0.2, 0.0], [0.3, 0.0]])), ResultCode.INVALID_GOAL,
         "away from the measured position on ['shoulder']"),
        (Goal(trajectory(names, [0.5, 1.0], [[0.2, 0.0], [0.3, 3.0]])), ResultCode.INVALID_GOAL,
         "outside the joint limits on ['elbow']"),
        (Goal(trajectory(names, [0.5, 1.0], [[0.2, 0.0], [0.3, 0.0]], velocities=[[0, 0], [9.0, 0]])),
         ResultCode.INVALID_GOAL, "velocities above the limits on ['shoulder']"),
        (Goal(trajectory(names, [0.5, 1.0], pts[1:], stamp=2.0)), ResultCode.OLD_HEADER_TIMESTAMP,
         "ended 1.000 s ago"),
    ]


def test_invalid_goals_get_their_codes_and_leave_the_running_goal_alone(planar):
    f = follower(planar)
    assert f.accept(two_point_goal(planar), "running", 0.0) == (None, [])
    running = f.streamer.active.trajectory
    drive(f, planar, 0.3)
    for k, (goal, code, words) in enumerate(_invalid_goals(planar)):
        refused, ended = f.accept(goal, f"bad{k}", 4.0 if code == ResultCode.OLD_HEADER_TIMESTAMP else 0.3)
        assert refused is not None and ended == [], k
        assert refused.key == f"bad{k}" and refused.code == code and words in refused.message, (k, refused.message)
        assert f.active.key == "running" and f.streamer.active.trajectory is running
    # and the running goal still completes
    now, ended = drive(f, planar, 2.0, start=0.3)
    assert [(o.key, o.code) for o in ended] == [("running", ResultCode.SUCCESSFUL)] and 1.0 < now <= 1.001


def test_a_goal_in_any_joint_order_runs_in_the_model_order(planar):
    f = follower(planar)
    traj = trajectory(["elbow", "shoulder"], [0.0, 1.0], [[0.0, 0.0], [-0.2, 0.3]])
    assert f.accept(Goal(traj), "k", 0.0) == (None, [])
    q, _, _ = f.active.trajectory.sample(1.0)
    np.testing.assert_allclose(q.reshape(-1), [0.3, -0.2])
    np.testing.assert_allclose(f.active.final[0], [0.3, -0.2])


def test_a_stamp_in_the_future_starts_the_trajectory_then(planar):
    f = follower(planar)
    refused, _ = f.accept(Goal(trajectory(list(planar.joint_names), [0.5, 1.0], [[0.1, 0.0], [0.2, -0.1]],
                                          stamp=3.0)), "k", 2.0)
    assert refused is None and f.active.start_time == 3.0
    assert f.update(2.9) == []  # before its start: desired = the measured start, no error
    np.testing.assert_allclose(f.feedback(2.9).desired[0], [0.0, 0.0])


# -- execution: path and goal tolerances ----------------------------------------------------------


def test_a_followed_trajectory_succeeds_at_its_end(planar):
    f = follower(planar)
    f.accept(two_point_goal(planar), "a", 0.0)
    now, ended = drive(f, planar, 3.0, offset=lambda t: (0.004, 0.0))
    assert len(ended) == 1 and ended[0].succeeded and ended[0].key == "a"
    assert 1.0 < now <= 1.001  # the first state after the end
    assert "largest position error 0.004" in ended[0].message and f.active is None


def test_path_tolerance_violation_stops_the_arm_where_it_is(planar):
    f = follower(planar)
    goal = two_point_goal(planar, path_tolerance=[JointTolerance("elbow", position=0.01)])
    f.accept(goal, "a", 0.0)
    # the elbow lags 0.02 rad from t = 0.5 s
    now, ended = drive(f, planar, 3.0, offset=lambda t: (np.array([0.0, 0.02 if t >= 0.5 else 0.0]), 0.0))
    assert now == pytest.approx(0.5) and ended[0].code == ResultCode.PATH_TOLERANCE_VIOLATED
    assert "t = 0.500 s: elbow: position error -0.02 exceeds the tolerance 0.01 by 0.01" in ended[0].message
    # holding: the reference is the measured position at rest from now on
    measured = f.streamer.current.copy()
    np.testing.assert_allclose(measured, [0.15, -0.1 + 0.02], atol=1e-9)
    for later in (now, now + 1.0, now + 10.0):
        ref = f.streamer.reference(later)
        np.testing.assert_array_equal(ref.q, measured)
        np.testing.assert_array_equal(ref.qd, [0.0, 0.0])
    assert f.active is None and f.update(now + 1.0) == []


@pytest.mark.parametrize(
    "path_tolerance, default, code",
    [
        ([], 0.0, ResultCode.SUCCESSFUL),  # no default, no entry: not checked
        ([], 0.015, ResultCode.PATH_TOLERANCE_VIOLATED),  # the node's default
        ([JointTolerance("elbow", position=0.0)], 0.015, ResultCode.PATH_TOLERANCE_VIOLATED),  # 0 = the default
        ([JointTolerance("elbow", position=-1.0)], 0.015, ResultCode.SUCCESSFUL),  # -1 erases it
        ([JointTolerance("elbow", position=0.03)], 0.015, ResultCode.SUCCESSFUL),  # a looser bound
        ([JointTolerance("shoulder", position=-1.0)], 0.015, ResultCode.PATH_TOLERANCE_VIOLATED),  # other joint
    ],
)
def test_path_tolerance_zero_and_minus_one(planar, path_tolerance, default, code):
    f = follower(planar, path_position=default)
    f.accept(two_point_goal(planar, path_tolerance=path_tolerance), "a", 0.0)
    # the elbow lags 0.02 rad during the motion only, 0.004 at the end (within the goal tolerance)
    _, ended = drive(f, planar, 3.0, offset=lambda t: (np.array([0.0, 0.02 if 0.2 <= t < 0.9 else 0.004]), 0.0))
    assert ended[0].code == code, ended[0].message


def test_velocity_path_tolerance(planar):
    f = follower(planar)
    f.accept(two_point_goal(planar, path_tolerance=[JointTolerance("shoulder", velocity=0.1)]), "a", 0.0)
    now, ended = drive(f, planar, 3.0, offset=lambda t: (0.0, np.array([0.12 if t > 0.25 else 0.05, 5.0])))
    assert ended[0].code == ResultCode.PATH_TOLERANCE_VIOLATED and now == pytest.approx(0.251)
    assert "shoulder: velocity error -0.12 exceeds the tolerance 0.1" in ended[0].message


def test_acceleration_path_tolerance_compares_the_estimated_acceleration(planar):
    # following the trajectory exactly at 1 kHz: the acceleration estimated from successive
    # velocities is the desired one to within jerk * dt / 2 (about 5e-3 here) ...
    f = follower(planar)
    f.accept(two_point_goal(planar, path_tolerance=[JointTolerance("shoulder", acceleration=0.05),
                                                     JointTolerance("elbow", acceleration=0.05)]), "a", 0.0)
    _, ended = drive(f, planar, 3.0)
    assert ended[0].code == ResultCode.SUCCESSFUL, ended[0].message
    # ... and a velocity jump of 0.01 rad/s in one millisecond is 10 rad/s^2 of error
    f = follower(planar)
    f.accept(two_point_goal(planar, path_tolerance=[JointTolerance("elbow", acceleration=1.0)]), "a", 0.0)
    now, ended = drive(f, planar, 3.0, offset=lambda t: (0.0, np.array([0.0, 0.01 if t > 0.6 else 0.0])))
    assert ended[0].code == ResultCode.PATH_TOLERANCE_VIOLATED and now == pytest.approx(0.601)
    assert "elbow: acceleration error" in ended[0].message and "exceeds the tolerance 1" in ended[0].message
    err = float(ended[0].message.split("acceleration error ")[1].split()[0])
    assert err == pytest.approx(-10.0, abs=0.05)


def test_goal_tolerance_violated_after_the_goal_time(planar):
    f = follower(planar)
    goal = two_point_goal(planar, goal_tolerance=[JointTolerance("elbow", position=0.01)],
                          goal_time_tolerance=duration(0.5))
    f.accept(goal, "a", 0.0)
    now, ended = drive(f, planar, 3.0, offset=lambda t: (np.array([0.0, 0.025]), 0.0))
    assert ended[0].code == ResultCode.GOAL_TOLERANCE_VIOLATED and 1.5 < now <= 1.501
    assert "elbow: position error -0.025 exceeds the tolerance 0.01 by 0.015" in ended[0].message
    assert "goal time tolerance 0.5 s" in ended[0].message
    np.testing.assert_allclose(f.streamer.reference(now + 1.0).q, [0.3, -0.2 + 0.025])  # holds where it is


def test_goal_reached_while_settling_within_the_goal_time(planar):
    f = follower(planar, goal_time=1.0)  # goal_time_tolerance 0 = this default
    f.accept(two_point_goal(planar), "a", 0.0)
    # 0.05 rad behind until 1.4 s, then within the default 0.01
    now, ended = drive(f, planar, 3.0, offset=lambda t: (np.array([0.05 if t < 1.4 else 0.008, 0.0]), 0.0))
    assert ended[0].code == ResultCode.SUCCESSFUL and now == pytest.approx(1.4)
    assert "reached the goal 0.400 s after the trajectory's end, largest position error 0.008" in ended[0].message


@pytest.mark.parametrize(
    "goal_tolerance, offset, code",
    [
        ([], (0.02, 0.0), ResultCode.GOAL_TOLERANCE_VIOLATED),  # default position 0.01
        ([JointTolerance("shoulder", position=-1.0)], (0.02, 0.0), ResultCode.SUCCESSFUL),  # erased
        ([JointTolerance("shoulder", position=0.0)], (0.02, 0.0), ResultCode.GOAL_TOLERANCE_VIOLATED),
        ([JointTolerance("shoulder", position=0.03)], (0.02, 0.0), ResultCode.SUCCESSFUL),
        ([], (0.0, 0.06), ResultCode.GOAL_TOLERANCE_VIOLATED),  # default stopped velocity 0.05
        ([JointTolerance("shoulder", velocity=-1.0)], (0.0, 0.06), ResultCode.SUCCESSFUL),
        ([JointTolerance("shoulder", velocity=0.1)], (0.0, 0.06), ResultCode.SUCCESSFUL),
        ([JointTolerance("shoulder", velocity=0.04)], (0.0, 0.045), ResultCode.GOAL_TOLERANCE_VIOLATED),
    ],
)
def test_goal_tolerance_zero_and_minus_one(planar, goal_tolerance, offset, code):
    f = follower(planar, goal_time=0.2)
    f.accept(two_point_goal(planar, goal_tolerance=goal_tolerance), "a", 0.0)
    now, ended = drive(f, planar, 3.0, offset=lambda t: (np.array([offset[0], 0.0]), np.array([offset[1], 0.0])))
    assert ended[0].code == code, ended[0].message
    assert now == pytest.approx(1.001 if code == ResultCode.SUCCESSFUL else 1.201)


def test_defaults_of_zero_check_nothing(planar):
    f = follower(planar, goal_position=0.0, goal_velocity=0.0, goal_time=0.0)
    f.accept(two_point_goal(planar), "a", 0.0)
    now, ended = drive(f, planar, 3.0, offset=lambda t: (0.3, 0.4))
    assert ended[0].code == ResultCode.SUCCESSFUL and now == pytest.approx(1.001)
    with pytest.raises(rd.InputError, match="goal_time"):
        TrajectoryFollower(f.streamer, goal_time=-1.0)


# -- preemption, cancel, feedback -------------------------------------------------------------------


def test_a_new_goal_preempts_the_running_one(planar):
    f = follower(planar)
    f.accept(two_point_goal(planar), "first", 0.0)
    drive(f, planar, 0.4)
    here = f.streamer.current.copy()
    second = Goal(trajectory(list(planar.joint_names), [0.0, 0.8], [list(here), [-0.1, 0.1]]))
    refused, ended = f.accept(second, "second", 0.4)
    assert refused is None
    assert [(o.key, o.code, o.message) for o in ended] == [("first", ResultCode.INVALID_GOAL,
                                                            "preempted by a new goal")]
    assert f.active.key == "second" and f.active.start_time == 0.4
    now, ended = drive(f, planar, 3.0, start=0.4)
    assert [(o.key, o.code) for o in ended] == [("second", ResultCode.SUCCESSFUL)] and 1.2 <= now <= 1.201
    np.testing.assert_allclose(f.streamer.current, [-0.1, 0.1], atol=1e-12)


def test_another_motion_of_the_node_ends_the_goal(planar):
    f = follower(planar)
    f.accept(two_point_goal(planar), "a", 0.0)
    drive(f, planar, 0.2)
    traj, status = f.streamer.handle_goal(JointState(name=["shoulder", "elbow"], position=[0.5, 0.5]), 0.2)
    assert traj is not None, status
    ended = f.update(0.21)
    assert [(o.key, o.code) for o in ended] == [("a", ResultCode.INVALID_GOAL)]
    assert "preempted by another motion" in ended[0].message
    assert f.streamer.active.trajectory is traj  # that motion goes on


def test_cancel_holds_the_measured_position(planar):
    f = follower(planar)
    f.accept(two_point_goal(planar), "a", 0.0)
    drive(f, planar, 0.5)
    assert f.cancel("other", 0.5) == [] and f.active.key == "a"
    ended = f.cancel("a", 0.5)
    assert len(ended) == 1 and ended[0].canceled and not ended[0].succeeded and ended[0].key == "a"
    np.testing.assert_allclose(f.streamer.reference(2.0).q, [0.15, -0.1], atol=1e-12)
    np.testing.assert_array_equal(f.streamer.reference(2.0).qd, [0.0, 0.0])
    assert f.update(0.6) == [] and f.feedback(0.6) is None


def test_feedback_is_desired_actual_and_their_difference(planar):
    f = follower(planar)
    assert f.feedback(0.0) is None
    f.accept(two_point_goal(planar), "a", 0.0)
    drive(f, planar, 0.5, offset=lambda t: (np.array([0.01, -0.02]), np.array([0.1, 0.0])))
    fb = f.feedback(0.5)
    assert fb.key == "a" and fb.joint_names == ["shoulder", "elbow"] and fb.time_from_start == 0.5
    np.testing.assert_allclose(fb.desired[0], [0.15, -0.1], atol=1e-12)  # the mid point
    np.testing.assert_allclose(fb.desired[1], [0.45, -0.3], atol=1e-12)
    np.testing.assert_allclose(fb.actual[0], [0.16, -0.12], atol=1e-12)
    np.testing.assert_allclose(fb.error[0], [-0.01, 0.02], atol=1e-12)
    np.testing.assert_allclose(fb.error[1], [-0.1, 0.0], atol=1e-12)


def test_missing_velocities_are_estimated_from_positions(planar):
    f = follower(planar)
    names = list(planar.joint_names)
    assert f.on_joint_state(JointState(name=names, position=[0.0, 0.0]), 1.0)[0]
    assert f.on_joint_state(JointState(name=names, position=[0.01, -0.02]), 1.01)[0]
    np.testing.assert_allclose(f.qd, [1.0, -2.0])
    assert f.on_joint_state(JointState(name=names, position=[0.03, -0.04], velocity=[float("nan")] * 2), 1.02)[0]
    np.testing.assert_allclose(f.qd, [2.0, -2.0])
    np.testing.assert_allclose(f.qdd, [100.0, 0.0])
    ok, status = f.on_joint_state(JointState(name=["shoulder"], position=[0.0]), 1.03)
    assert not ok and "missing joints ['elbow']" in status


# -- through the nodes' loop on the PUMA -------------------------------------------------------------


def test_the_simulated_puma_follows_a_three_point_goal(puma):
    """Trajectory node (follower) -> controller (computed torque) -> simulator, wired by messages."""
    names = list(puma.joint_names)
    streamer = TrajectoryStreamer(puma)
    f = TrajectoryFollower(streamer, goal_position=0.01, goal_velocity=0.05, path_position=0.0)
    loop = ControlLoop(puma, build_controller(puma, "computed_torque"), names)
    plant = SimulatedPlant(puma, command_joints=names)
    mid, end = [0.25, -0.2, 0.15, 0.1, -0.05, 0.3], [0.5, -0.4, 0.3, 0.2, -0.1, 0.6]
    goal = Goal(trajectory(names, [0.0, 1.5, 3.0], [[0.0] * 6, mid, end]),
                path_tolerance=[JointTolerance(j, position=0.02) for j in names],
                goal_tolerance=[JointTolerance(j, position=0.005) for j in names])
    run = run_goal(f, loop, plant, streamer, goal, 5.0)
    ended, now, feedback_errors = run.ended, run.now, run.errors
    assert [(o.key, o.code) for o in ended] == [("puma", ResultCode.SUCCESSFUL)], ended
    assert 3.02 <= now <= 4.02  # 3 s of trajectory from 0.02 s, then within the goal time
    np.testing.assert_allclose(plant.q, end, atol=0.005)
    assert len(feedback_errors) > 700 and max(feedback_errors) < 0.02


def test_errors_are_taken_where_the_arm_was_measured_and_silence_times_out(planar):
    f = follower(planar, goal_time=0.5)
    f.accept(two_point_goal(planar), "a", 0.0)
    drive(f, planar, 0.5)  # exact states up to 0.5 s
    # a check 40 ms after the last state compares with the desired motion at that state's time
    np.testing.assert_allclose(f.feedback(0.54).error[0], [0.0, 0.0], atol=1e-12)
    assert f.feedback(0.54).time_from_start == pytest.approx(0.5)
    assert f.update(0.54) == [] and f.update(1.5) == []
    # no state since: the goal cannot be judged and ends once the goal time has passed
    ended = f.update(1.51)
    assert ended[0].code == ResultCode.GOAL_TOLERANCE_VIOLATED
    assert "0.510 s after the trajectory's end" in ended[0].message and "no joint state since" in ended[0].message
