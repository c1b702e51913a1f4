"""What broke beside real arms and on a real ROS 2, fixed in the node logic (no rclpy needed).

Each test failed on the layer as it was: NaN fields of joint_state_broadcaster rejected every
/joint_states, garbage answered as success, geared robots commanding actuator torques where
JointGroupEffortController expects joint efforts, and the demo move saturating the PUMA.
"""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.ros import conversion as cv
from robot_dynamics.ros.logic import DynamicsServices
from robot_dynamics.ros.messages import message_class, service_class
from robot_dynamics.ros.motion import ControlLoop, SimulatedPlant, TrajectoryStreamer, build_controller
from robot_dynamics.trajectory import check_torques

ID = service_class("InverseDynamics")
TE = service_class("TrajectoryEffort")
JointState = message_class("sensor_msgs/JointState")
JointTrajectory = message_class("trajectory_msgs/JointTrajectory")
Point = message_class("trajectory_msgs/JointTrajectoryPoint")
Float64MultiArray = message_class("std_msgs/Float64MultiArray")
NAN = float("nan")


def test_nan_velocity_and_effort_are_missing_fields_not_bad_messages():
    # joint_state_broadcaster on position-only hardware: velocity and effort all NaN
    msg = JointState(name=["elbow", "shoulder", "gripper"], position=[0.2, 0.1, 0.0], velocity=[NAN] * 3, effort=[NAN] * 3)
    s = cv.joint_state_to_arrays(msg, ["shoulder", "elbow"])
    np.testing.assert_allclose(s.position, [0.1, 0.2])
    assert not s.has_velocity and not s.has_effort
    assert s.velocity.tolist() == [0.0, 0.0]
    with pytest.raises(rd.InputError, match="position: contains NaN"):
        cv.joint_state_to_arrays(JointState(name=["shoulder", "elbow"], position=[NAN, 0.0]), ["shoulder", "elbow"])
    with pytest.raises(rd.InputError, match="NaN or infinite"):
        cv.joint_state_to_arrays(JointState(name=["shoulder", "elbow"], position=[0.0, 0.0], velocity=[float("inf"), 0.0]),
                                 ["shoulder", "elbow"])


def test_controller_on_position_only_hardware_estimates_velocities_and_runs():
    model = rd.load_robot("planar2")
    loop = ControlLoop(model, build_controller(model, "pd_gravity"), [])
    for k, q in enumerate(([0.10, 0.20], [0.11, 0.18])):
        ok, status = loop.on_joint_state(JointState(name=["shoulder", "elbow"], position=q, velocity=[NAN, NAN]), now=0.01 * k)
        assert ok, status
    np.testing.assert_allclose(loop.qd, [1.0, -2.0])  # backward difference over 10 ms
    effort, status = loop.tick(0.01)
    assert effort is not None and np.all(np.isfinite(effort))
    assert "velocities estimated from positions" in status
    svc = DynamicsServices(model)  # gravity compensation needs positions only
    ok, tau, _ = svc.gravity_compensation(JointState(name=["shoulder", "elbow"], position=[0.3, 0.4], velocity=[NAN, NAN]))
    assert ok and np.allclose(tau, rd.gravity_torques(model, [0.3, 0.4]))


def test_non_finite_inverse_dynamics_is_refused_not_answered():
    svc = DynamicsServices(rd.load_robot("puma560"))
    res = svc.inverse_dynamics(ID.Request(positions=[0.0] * 6, velocities=[1e308] * 6), ID.Response())
    assert res.success is False and "not finite" in res.message
    assert not res.message.startswith("internal error")


def test_trajectory_effort_refuses_absurd_finite_difference_rates():
    svc = DynamicsServices(rd.load_robot("puma560"))
    req = TE.Request()
    req.trajectory.joint_names = list(svc.names)
    for t, q in ((0.0, 0.0), (1e-6, 0.3)):  # two points one microsecond apart
        p = Point(positions=[q] * 6)
        p.time_from_start.sec, p.time_from_start.nanosec = 0, int(round(t * 1e9))
        req.trajectory.points.append(p)
    res = svc.trajectory_effort(req, TE.Response(), Point)
    assert res.success is False
    assert "velocities estimated by finite differences reach" in res.message and "1e-06 s" in res.message


def test_geared_robot_commands_joint_efforts_by_default_and_actuator_efforts_on_request():
    model = rd.load_robot("three_dof_geared")
    A = np.asarray(model.drivetrain.A)
    assert not np.allclose(A, np.eye(3))
    state = JointState(name=list(model.joint_names), position=[0.2, -0.3, 0.4], velocity=[0.0, 0.0, 0.0])
    efforts = {}
    for space in ("joint", "actuator"):
        loop = ControlLoop(model, build_controller(model, "pd_gravity"), [], command_space=space)
        loop.on_joint_state(state, 0.0)
        efforts[space], _ = loop.tick(0.0)
    tau_g = rd.gravity_torques(model, [0.2, -0.3, 0.4])
    np.testing.assert_allclose(efforts["joint"], tau_g, rtol=1e-9, atol=1e-9)  # holding: gravity
    np.testing.assert_allclose(A @ efforts["actuator"], efforts["joint"], rtol=1e-9, atol=1e-9)  # G = A xi
    # the simulator reads the same convention: joint efforts apply as they are
    for space in ("joint", "actuator"):
        plant = SimulatedPlant(model, [0.2, -0.3, 0.4], command_space=space, friction=False, effort_saturation=False)
        plant.on_command(Float64MultiArray(data=list(efforts[space])), 0.0)
        plant.step(1e-3, 0.0, 1)
        np.testing.assert_allclose(plant.applied, tau_g, rtol=1e-9, atol=1e-9)
        assert np.max(np.abs(plant.qd)) < 1e-9  # gravity held: the arm does not move


def test_planned_moves_keep_a_tenth_of_every_effort_limit_for_the_feedback():
    model = rd.load_robot("puma560")
    goal = np.array([0.5, -0.4, 0.3, 0.2, -0.1, 0.6])  # the README's sim.launch.py goal
    check = check_torques(model, TrajectoryStreamer(model).plan(np.zeros(6), goal))
    assert check.feasible and check.ratio <= 0.9 + 1e-6, check.ratio
    planar = rd.load_robot("planar2")
    fast = dict(max_acceleration=40.0, velocity_scaling=1.0)
    unscaled = TrajectoryStreamer(planar, torque_scaling=False, **fast).plan(np.zeros(2), np.array([0.5, -0.5]))
    assert check_torques(planar, unscaled).ratio > 1.0  # kinematic limits alone saturate the shoulder
    scaled = TrajectoryStreamer(planar, **fast).plan(np.zeros(2), np.array([0.5, -0.5]))
    assert check_torques(planar, scaled).ratio <= 0.905  # 0.9 on the scaling's own samples
    assert scaled.duration > unscaled.duration


def test_initial_goal_waits_for_a_consumer_of_the_reference():
    model = rd.load_robot("planar2")
    s = TrajectoryStreamer(model)
    s.set_initial_goal([0.3, 0.2], 0.5)
    s.on_joint_state(JointState(name=["shoulder", "elbow"], position=[0.0, 0.0]))
    assert s.initial_goal_due(0.0, consumer=False)[0] is None
    assert s.initial_goal_due(2.0, consumer=False)[0] is None  # no controller yet: nothing sent
    assert s.initial_goal_due(2.1, consumer=True)[0] is None  # the delay starts with the consumer
    assert s.initial_goal_due(2.7, consumer=True)[0] is not None


def test_the_simulated_arm_waits_on_its_brakes_for_the_first_command():
    model = rd.load_robot("puma560")
    plant = SimulatedPlant(model, [0.0, -0.5, 0.5, 0.0, 0.0, 0.0])
    q0 = plant.q.copy()
    for k in range(100):  # 0.5 s of nodes starting up: gravity must not pull the arm down
        ok, status = plant.step(0.005, 0.005 * k, 5)
        assert ok and status == "waiting for the first command (brakes on)"
    np.testing.assert_array_equal(plant.q, q0)
    plant.on_command(Float64MultiArray(data=[0.0] * 6), 0.5)
    plant.step(0.005, 0.5, 5)
    assert not np.allclose(plant.q, q0)  # released: zero effort, the arm falls


@pytest.mark.parametrize("name", rd.list_robots())
def test_every_bundled_robot_has_geometry_rviz_can_draw(name):
    import xml.etree.ElementTree as ET

    from robot_dynamics.model import robot_files

    path, _ = robot_files(name)
    root = ET.parse(path).getroot()
    assert "package://" not in path.read_text()  # no mesh from a package that is not a dependency
    parents = {j.find("parent").get("link") for j in root.iter("joint")}
    offsets = {}
    for j in root.iter("joint"):
        xyz = np.array([float(v) for v in j.find("origin").get("xyz").split()])
        offsets.setdefault(j.find("parent").get("link"), []).append(float(np.linalg.norm(xyz)))
    for link in root.iter("link"):
        visuals = link.findall("visual")
        if link.find("inertial") is not None or link.get("name") in parents:
            assert visuals, f"{name}: link {link.get('name')} has no <visual>"
        lengths = sorted(float(c.get("length")) for v in visuals for c in v.iter("cylinder"))
        expected = sorted(d for d in offsets.get(link.get("name"), []) if d > 1e-6)
        np.testing.assert_allclose(lengths, expected, rtol=1e-5)  # a body from the link to each child joint
