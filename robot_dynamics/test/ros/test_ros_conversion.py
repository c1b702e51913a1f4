"""Message <-> array conversion, without rclpy, on objects with the real message layouts."""

from __future__ import annotations

import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from robot_dynamics import InputError, UnknownNameError
from robot_dynamics.ros import conversion as cv
from robot_dynamics.ros.messages import message_class

JointState = message_class("sensor_msgs/msg/JointState")
JointTrajectory = message_class("trajectory_msgs/msg/JointTrajectory")
JointTrajectoryPoint = message_class("trajectory_msgs/msg/JointTrajectoryPoint")
Float64MultiArray = message_class("std_msgs/msg/Float64MultiArray")
Duration = message_class("builtin_interfaces/msg/Duration")
Wrench = message_class("geometry_msgs/msg/Wrench")

JOINTS = ["j1", "j2", "j3"]


def test_message_layouts_are_the_real_ones():
    # The fields rclpy generates for these types (sensor_msgs/JointState.msg etc.).
    assert JointState.__slots__ == ("header", "name", "position", "velocity", "effort")
    assert JointTrajectory.__slots__ == ("header", "joint_names", "points")
    assert JointTrajectoryPoint.__slots__ == ("positions", "velocities", "accelerations", "effort", "time_from_start")
    assert Float64MultiArray.__slots__ == ("layout", "data")
    assert Duration.__slots__ == ("sec", "nanosec")


def test_joint_state_reordered_by_name_extra_joints_ignored():
    msg = JointState(name=["gripper", "j3", "j1", "j2"], position=[9.0, 3.0, 1.0, 2.0],
                     velocity=array.array("d", [0.9, 0.3, 0.1, 0.2]), effort=[])
    s = cv.joint_state_to_arrays(msg, JOINTS)
    np.testing.assert_array_equal(s.position, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(s.velocity, [0.1, 0.2, 0.3])
    np.testing.assert_array_equal(s.effort, [0.0, 0.0, 0.0])
    assert s.has_velocity and not s.has_effort


def test_joint_state_empty_velocity_means_zero():
    s = cv.joint_state_to_arrays(JointState(name=JOINTS, position=np.array([1.0, 2, 3])), JOINTS)
    np.testing.assert_array_equal(s.velocity, np.zeros(3))
    assert not s.has_velocity


@pytest.mark.parametrize(
    "fields, match",
    [
        ({"name": ["j1", "j2"], "position": [1.0, 2.0]}, r"missing joints \['j3'\]"),
        ({"name": JOINTS, "position": [1.0, 2.0]}, "expected 3 values"),
        ({"name": JOINTS, "position": [1.0, float("nan"), 3.0]}, "NaN"),
        ({"name": JOINTS, "position": [1.0, 2.0, 3.0], "velocity": [1.0]}, "JointState.velocity: expected 3"),
        ({"name": ["j1", "j1", "j3"], "position": [1.0, 2.0, 3.0]}, "repeated"),
        ({"name": JOINTS, "position": [1.0, 2.0, 3.0], "effort": [0.0, float("inf"), 0.0]}, "NaN or infinite"),
    ],
)
def test_joint_state_rejections(fields, match):
    with pytest.raises(InputError, match=match):
        cv.joint_state_to_arrays(JointState(**fields), JOINTS)


def test_request_vector_model_order_when_names_empty():
    np.testing.assert_array_equal(cv.request_vector([], [1.0, 2.0, 3.0], JOINTS, "positions", empty_is_zero=False),
                                  [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(cv.request_vector([], [], JOINTS, "velocities", empty_is_zero=True), np.zeros(3))
    with pytest.raises(InputError, match=r"expected 3 values ordered as \['j1', 'j2', 'j3'\], got 0"):
        cv.request_vector([], [], JOINTS, "positions", empty_is_zero=False)


def test_request_vector_unknown_name_lists_valid_joints():
    with pytest.raises(UnknownNameError, match=r"Unknown joint 'j9'. Valid joints: \['j1', 'j2', 'j3'\]"):
        cv.request_vector(["j1", "j2", "j3", "j9"], [0.0] * 4, JOINTS, "positions", empty_is_zero=False)


@settings(max_examples=30, deadline=None)
@given(st.permutations(range(3)), st.lists(st.floats(-10, 10), min_size=3, max_size=3))
def test_request_vector_any_permutation(perm, values):
    names = [JOINTS[i] for i in perm]
    out = cv.request_vector(names, values, JOINTS, "positions", empty_is_zero=False)
    for k, i in enumerate(perm):
        assert out[i] == values[k]


@settings(max_examples=50, deadline=None)
@given(st.floats(0.0, 1e6, allow_nan=False))
def test_duration_round_trip(t):
    d = cv.fill_duration(Duration(), t)
    assert 0 <= d.nanosec < 1_000_000_000
    assert abs(cv.duration_to_seconds(d) - t) <= 1e-9 * max(1.0, t) + 1e-9


def test_float64_multi_array_in_command_joint_order():
    msg = Float64MultiArray(data=[30.0, 10.0])
    out = cv.float64_multi_array_to_vector(msg, ["j3", "j1"], JOINTS)
    np.testing.assert_array_equal(out, [10.0, 0.0, 30.0])
    back = cv.fill_float64_multi_array(Float64MultiArray(), out, JOINTS, ["j3", "j1"])
    assert back.data == [30.0, 10.0]
    with pytest.raises(InputError, match="expected 2 values"):
        cv.float64_multi_array_to_vector(Float64MultiArray(data=[1.0]), ["j3", "j1"], JOINTS)
    with pytest.raises(InputError, match="NaN"):
        cv.float64_multi_array_to_vector(Float64MultiArray(data=[1.0, float("nan")]), ["j3", "j1"], JOINTS)


def _trajectory(names, t, Q, Qd=None, Qdd=None):
    msg = JointTrajectory()
    cv.fill_joint_trajectory(msg, JointTrajectoryPoint, names, t, Q, Qd, Qdd)
    return msg


def test_trajectory_round_trip_and_reordering():
    t = np.linspace(0.0, 1.0, 5)
    Q = np.stack([t, 2 * t, 3 * t], axis=1)
    msg = _trajectory(["j3", "j1", "j2"], t, Q[:, [2, 0, 1]], np.ones((5, 3)), np.zeros((5, 3)))
    assert msg.points[2].time_from_start.sec == 0 and msg.points[2].time_from_start.nanosec == 500_000_000
    arr = cv.trajectory_to_arrays(msg, JOINTS)
    np.testing.assert_allclose(arr.time, t)
    np.testing.assert_allclose(arr.position, Q)
    assert arr.estimated == ()


def test_trajectory_missing_derivatives_estimated_by_finite_differences():
    # q(t) = t^3: qd = 3 t^2, qdd = 6 t; second-order differences are exact for qd of a cubic
    # in the interior, and close for qdd.
    t = np.linspace(0.0, 2.0, 201)
    Q = np.stack([t**3, -(t**3), 0.5 * t**2], axis=1)
    arr = cv.trajectory_to_arrays(_trajectory(JOINTS, t, Q), JOINTS)
    assert arr.estimated == ("velocities", "accelerations")
    np.testing.assert_allclose(arr.velocity[:, 0], 3 * t**2, atol=1e-3)
    np.testing.assert_allclose(arr.acceleration[5:-5, 0], 6 * t[5:-5], atol=1e-3)
    np.testing.assert_allclose(arr.acceleration[5:-5, 2], 1.0, atol=1e-9)


def test_trajectory_rejections():
    with pytest.raises(InputError, match="no points"):
        cv.trajectory_to_arrays(JointTrajectory(joint_names=JOINTS), JOINTS)
    t = np.array([0.0, 1.0, 0.5])
    with pytest.raises(InputError, match="must not decrease"):
        cv.trajectory_to_arrays(_trajectory(JOINTS, t, np.zeros((3, 3))), JOINTS)
    bad = _trajectory(JOINTS, [0.0, 1.0], np.zeros((2, 3)))
    bad.points[1].positions = [0.0, 1.0]
    with pytest.raises(InputError, match=r"points\[1\].positions: expected 3"):
        cv.trajectory_to_arrays(bad, JOINTS)
    with pytest.raises(UnknownNameError):
        cv.trajectory_to_arrays(_trajectory(["j1", "j2", "x"], [0.0], np.zeros((1, 3))), JOINTS)


def test_wrench_and_joint_state_writers():
    w = Wrench()
    w.force.x, w.torque.z = 1.5, -2.0
    np.testing.assert_array_equal(cv.wrench_to_array(w), [1.5, 0, 0, 0, 0, -2.0])
    w.force.y = float("nan")
    with pytest.raises(InputError):
        cv.wrench_to_array(w)
    js = cv.fill_joint_state(JointState(), JOINTS, np.array([1.0, 2.0, 3.0]), np.zeros(3))
    assert js.name == JOINTS and js.position == [1.0, 2.0, 3.0] and js.effort == []
    assert all(type(v) is float for v in js.position)
