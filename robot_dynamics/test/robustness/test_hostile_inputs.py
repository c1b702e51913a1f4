"""Bad input, round 2: the classes an outside campaign found, each accepted with a finite and
right answer or refused with the package's own error naming what is wrong and what is valid
(CLI: exit 2 and one line; node logic: success false and a message)."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.cli import main
from robot_dynamics.errors import InputError, ModelError
from robot_dynamics.model.registry import robot_files
from robot_dynamics.ros.messages import message_class, service_class

ROW = {"alpha": 0.0, "d": 0.3, "theta": 0.0, "r": 0.0, "mass": 1.0, "com": [0.1, 0, 0],
       "inertia": [0.01, 0, 0, 0.01, 0, 0.01]}
PUMA_JOINTS = [f"joint{i}" for i in range(1, 7)]


def cli_refusal(argv, capsys, tmp_path) -> str:
    """The one line of a CLI refusal (exit 2), run in tmp_path (not every subcommand takes --out)."""
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert main(argv) == 2
    finally:
        os.chdir(here)
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1, err
    return err[0]


@pytest.fixture(scope="module")
def puma():
    return rd.load_robot("puma560")


# -- 1. paths too long for the file system, or not encodable -------------------------------------

LONG = ["x" * 5000, "y" * 300, "a/" * 2600, "bad\udcffname.yaml", "nul\x00.yaml"]


@pytest.mark.parametrize("path", LONG)
def test_absurd_yaml_paths_are_refused_by_every_loader(path, puma):
    urdf = str(robot_files("puma560")[0])
    for load in (lambda: rd.load_dh_yaml(path), lambda: rd.load_urdf(urdf, drivetrain=path),
                 lambda: rd.model.apply_sidecar(puma, path), lambda: rd.load_urdf(path)):
        with pytest.raises(ModelError, match="not found") as info:
            load()
        message = str(info.value)
        assert "expected" in message and len(message) < 400 and "\n" not in message


@pytest.mark.parametrize("path", ["x" * 5000, "z" * 300, "s\udcff.yaml"])
def test_absurd_drivetrain_paths_on_the_cli_are_one_line(path, capsys, tmp_path):
    for command in ("info", "accel"):
        line = cli_refusal([command, "--drivetrain", path], capsys, tmp_path)
        assert "drive-train YAML not found" in line and "expected the path of a YAML file" in line


# -- 2. URDF text that has no UTF-8 encoding ----------------------------------------------------------

def test_urdf_text_with_a_lone_surrogate_is_refused():
    text = robot_files("puma560")[0].read_text(encoding="utf-8").replace('name="joint1"', 'name="j\udcff"', 1)
    with pytest.raises(ModelError, match="no UTF-8 encoding .a lone surrogate.; expected UTF-8 text"):
        rd.load_urdf(text)


# -- 3. a mimic joint with multiplier 0 -----------------------------------------------------------

MIMIC_URDF = """<robot name="r"><link name="base"/>
<link name="a"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<link name="b"><inertial><origin xyz="0.2 0 0"/><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
<joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0.5 0 0"/><axis xyz="0 1 0"/>
<limit lower="-1" upper="1" effort="10" velocity="1"/><mimic joint="j1" multiplier="{m}" offset="0.1"/></joint></robot>"""


@pytest.mark.parametrize("multiplier", ["0", "-0.0", "1e-300", "5e-324"])
def test_zero_mimic_multiplier_is_refused_at_load(multiplier):
    with pytest.raises(ModelError, match="makes the joint fixed.*write it as a fixed joint"):
        rd.load_urdf(MIMIC_URDF.format(m=multiplier))


def test_small_mimic_multiplier_still_loads_and_matches_the_chain_rule():
    m = rd.load_urdf(MIMIC_URDF.format(m="0.001"))
    assert m.nq == 1
    q, qd, qdd = np.array([0.4]), np.array([0.3]), np.array([-0.2])
    tau = rd.rnea(m, q, qd, qdd)
    # the same robot with both joints free, the mimic's coordinates given by the chain rule
    free = rd.load_urdf(MIMIC_URDF.format(m="0.001").replace('<mimic joint="j1" multiplier="0.001" offset="0.1"/>', ""))
    full = rd.rnea(free, np.array([0.4, 0.001 * 0.4 + 0.1]), np.array([0.3, 0.0003]), np.array([-0.2, -0.0002]))
    assert np.allclose(tau, full[0] + 0.001 * full[1], rtol=1e-12, atol=1e-12)


# -- 4. ragged, nested and mixed sequences ------------------------------------------------------------

@pytest.mark.parametrize("q", [
    [[0.0] * 6, [0.0] * 5],
    [[0.0] * 6, [[0.0]] * 6],
    [0.0, [0.0, 0.0], 0.0, 0.0, 0.0, 0.0],
    [[0.0] * 6, 1.0],
])
def test_ragged_states_are_refused_naming_the_shape(q, puma):
    z = np.zeros(6)
    for call in (lambda: rd.aba(puma, q, z, z), lambda: rd.rnea(puma, q, z, z), lambda: rd.crba(puma, q),
                 lambda: rd.aba(puma, z, q, z)):
        with pytest.raises(InputError, match=r"shape \(\.\.\., 6\) \(every row of the same length\), got a ragged"):
            call()


# -- 5. huge integers in the drive-train YAML -----------------------------------------------------

@pytest.mark.parametrize("field, value", [
    ("inertia", 10**400), ("mass", 10**400), ("axis", [0, 0, 10**400]), ("com", [10**400, 0, 0]),
    ("transverse_inertia", -(10**400)),
])
def test_drivetrain_numbers_beyond_a_double_are_refused(field, value):
    doc = {"secondary_links": {"g": {"carrier": "link0", "axis": [0, 0, 1], "inertia": 1e-4, "coefficients": {"joint1": 1.0},
                                     field: value}}, "inputs": ["g", "joint2", "joint3"]}
    with pytest.raises(ModelError, match=f"secondary_links.g.{field}.*too large for a number; expected a finite number"):
        rd.load_urdf(robot_files("three_dof_geared")[0], drivetrain=doc)


def test_elastic_stiffness_beyond_a_double_is_refused():
    with pytest.raises(ModelError, match="too large for a number"):
        rd.model.apply_sidecar(rd.load_robot("puma560"), {"elastic": {"joint1": {"stiffness": 10**400, "motor_inertia": 0.5}}})


# -- 6. limits that say nothing, or the wrong thing ----------------------------------------------

@pytest.mark.parametrize("limits, words", [
    ({"lower": float("inf"), "upper": float("inf")}, "limits.lower: inf leaves the joint no position"),
    ({"upper": float("-inf")}, "limits.upper: -inf leaves the joint no position"),
    ({"velocity": 0.0}, "limits.velocity: must be > 0"),
    ({"effort": -1.0}, "limits.effort: must be > 0"),
])
def test_joint_property_limits_must_leave_a_range(limits, words, puma):
    with pytest.raises(ModelError, match=words):
        rd.model.apply_sidecar(puma, {"joints": {"joint1": {"limits": limits}}})


def test_joint_property_limits_may_be_unlimited(puma):
    m = rd.model.apply_sidecar(puma, {"joints": {"joint1": {"limits": {"lower": -np.inf, "upper": np.inf,
                                                                        "velocity": np.inf}}}})
    assert m.lower[0] == -np.inf and m.upper[0] == np.inf and m.velocity_limit[0] == np.inf


@pytest.mark.parametrize("limits, words", [
    ({"velocity": -1.0}, "limits.velocity: must be > 0"),
    ({"effort": -3.0}, "limits.effort: must be > 0"),
    ({"effort": 0.0}, "limits.effort: must be > 0"),
    ({"lower": -1.0}, "give both lower and upper, or neither"),
])
def test_dh_limits_are_checked(limits, words):
    with pytest.raises(ModelError, match=words):
        rd.load_dh_yaml({"name": "x", "links": [{**ROW, "limits": limits}]})


def test_dh_prismatic_joint_needs_limits():
    with pytest.raises(ModelError, match="a prismatic joint needs lower and upper"):
        rd.load_dh_yaml({"name": "x", "links": [{**ROW, "type": "prismatic"}]})


def test_dh_unknown_top_level_key_is_refused():
    with pytest.raises(ModelError, match=r"unknown top-level keys \['tool_frame'\]. Valid keys: \['accepted_model_issues', 'base_link', "):
        rd.load_dh_yaml({"name": "x", "tool_frame": {"xyz": [0, 0, 0.1]}, "links": [ROW]})


def test_dh_unknown_tool_key_is_refused():
    with pytest.raises(ModelError, match=r"tool: unknown keys \['xzy'\]. Valid keys: \['name', 'rpy', 'xyz'\]"):
        rd.load_dh_yaml({"name": "x", "tool": {"name": "t", "xzy": [0, 0, 0.1]}, "links": [ROW]})


def test_dh_joint_without_limits_is_continuous_in_the_model_and_its_urdf():
    with pytest.warns(rd.ModelWarning) as record:  # neither row has an effort limit: the checks say so
        m = rd.load_dh_yaml({"name": "x", "links": [ROW, {**ROW, "limits": {"lower": -1, "upper": 2, "velocity": 3}}]})
    assert [(w.message.issue.kind, w.message.issue.name) for w in record] == [("no_effort_limit", "joint1"), ("no_effort_limit", "joint2")]
    assert m.lower[0] == -np.inf and m.upper[0] == np.inf
    assert '<joint name="joint1" type="continuous">' in m.description and 'lower="-1000000.0"' not in m.description
    with pytest.warns(rd.ModelWarning) as record:
        back = rd.load_urdf(m.description)
    assert [w.message.issue.name for w in record] == ["joint1", "joint2"]
    assert np.array_equal(back.lower, m.lower) and np.array_equal(back.upper, m.upper)
    assert back.lower[1] == -1.0 and back.upper[1] == 2.0 and back.velocity_limit[1] == 3.0
    q = np.array([0.3, -0.2])
    assert np.allclose(rd.rnea(back, q, q, q), rd.rnea(m, q, q, q), rtol=1e-12, atol=1e-12)


# -- 7. sample counts from huge durations and rates ------------------------------------------------

@pytest.mark.parametrize("duration, rate", [(1e300, 1e10), (1.0, 1e300), (1e10, 1e10), (1.0, float("inf")), (7.9, 1e6)])
def test_sample_table_refuses_huge_products_before_work(duration, rate):
    from robot_dynamics.trajectory import MAX_SAMPLES, plan, sample_table

    traj = plan("quintic", [0, 0], [1, 1], duration=duration)
    with pytest.raises(InputError, match=f"more than {MAX_SAMPLES:,}|finite sampling rate"):
        sample_table(traj, rate)


def test_sample_table_at_the_limit_is_exact():
    from robot_dynamics.trajectory import plan, sample_table

    t, q, _, _ = sample_table(plan("quintic", [0.0], [1.0], duration=2.0), 1000.0)
    assert t.size == 2001 and t[-1] == 2.0 and q[-1, 0] == 1.0


def test_cli_trajectory_refuses_huge_products(capsys, tmp_path):
    line = cli_refusal(["trajectory", "--duration", "1e300", "--rate", "1e10"], capsys, tmp_path)
    assert "more than the table's 200,000" in line


@pytest.mark.parametrize("period", [5e-324, 1e-300, 1e-9, 1e-6])
def test_plan_service_refuses_tiny_sample_periods(period, puma):
    from robot_dynamics.ros.motion import TrajectoryStreamer

    Plan = service_class("robot_dynamics_interfaces/PlanTrajectory")
    s = TrajectoryStreamer(puma)
    s.on_joint_state(message_class("sensor_msgs/JointState")(name=PUMA_JOINTS, position=[0.0] * 6))
    res = s.handle_plan(Plan.Request(goal_positions=[0.3] * 6, duration=2.0, profile="quintic", sample_period=period),
                        Plan.Response(), message_class("trajectory_msgs/JointTrajectoryPoint"), now=0.0)
    assert not res.success and res.message.startswith("sample_period:") and "more than 100,000 points" in res.message


def test_task_space_refuses_huge_rates_before_any_inverse_kinematics(puma, monkeypatch):
    import robot_dynamics.kinematics as kin
    from robot_dynamics.trajectory import MAX_TASK_SPACE_SAMPLES, cartesian_motion, task_space_to_joint

    q0 = np.array([0.0, -0.8, 0.8, 0.0, 0.6, 0.0])
    T0 = rd.frame_pose(puma, q0, puma.end_effector)
    T1 = T0.copy()
    T1[:3, 3] += [0.02, 0.0, 0.0]
    motion = cartesian_motion(T0, T1, 0.25, 1.0, 1.0, 2.0, duration=1.0)
    calls = []
    monkeypatch.setattr(kin, "inverse_kinematics", lambda *a, **k: calls.append(1))
    with pytest.raises(InputError, match=f"more than {MAX_TASK_SPACE_SAMPLES:,}"):
        task_space_to_joint(puma, motion, q0, rate=1e6)
    assert calls == []


def test_torque_check_of_a_long_trajectory_is_bounded_and_agrees(puma):
    from robot_dynamics.trajectory import MAX_CHECK_SAMPLES, check_torques, plan

    traj = plan("quintic", np.zeros(6), np.full(6, 0.5), duration=2000.0)
    capped = check_torques(puma, traj, rate=200.0)  # 400,000 samples asked
    assert capped.t.size == MAX_CHECK_SAMPLES + 1
    dense = check_torques(puma, traj, rate=MAX_CHECK_SAMPLES / 2000.0 / 2)  # half as many
    assert capped.ratio == pytest.approx(dense.ratio, rel=1e-6) and capped.feasible == dense.feasible


def test_plan_service_refuses_durations_beyond_a_ros_duration(puma):
    from robot_dynamics.ros.motion import TrajectoryStreamer

    Plan = service_class("robot_dynamics_interfaces/PlanTrajectory")
    s = TrajectoryStreamer(puma)
    s.on_joint_state(message_class("sensor_msgs/JointState")(name=PUMA_JOINTS, position=[0.0] * 6))
    res = s.handle_plan(Plan.Request(goal_positions=[0.3] * 6, duration=1e300, profile="quintic", sample_period=1e300),
                        Plan.Response(), message_class("trajectory_msgs/JointTrajectoryPoint"), now=0.0)
    assert not res.success and "does not fit a builtin_interfaces/Duration" in res.message, res.message


# -- 8. huge displacements over huge durations -----------------------------------------------------

@pytest.mark.parametrize("profile", ["trapezoidal", "continuous_acceleration"])
def test_huge_trapezoids_sample_finite_and_right(profile):
    from robot_dynamics.trajectory import plan

    big = plan(profile, [0.0], [1e300], None, 1.0, None, 1e300)
    small = plan(profile, [0.0], [1.0], None, 1.0, None, 1e150)  # the same law scaled by 1e-300 in q
    s = np.linspace(0.0, 1.0, 9)
    qb, qdb, qddb = big.sample(s * big.duration)
    qs, qds, qdds = small.sample(s * small.duration)
    assert np.all(np.isfinite(qb)) and np.all(np.isfinite(qdb)) and np.all(np.isfinite(qddb))
    assert qb[4, 0] == pytest.approx(0.5e300, rel=1e-12)  # the law is symmetric
    # q scales with D, time with T: q_big(s T) / D_big is the same unit law as the small one's
    # stretched by the ratio of durations (both are the minimum-time law stretched to T)
    assert np.allclose(qb[:, 0] / 1e300, qs[:, 0] / 1.0, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("args", [
    ("double_s", [1.0], [-1e300], 1.0, None, None, 1e308),
    ("double_s", [1e308], [1e150], None, 1e-300, None, 1e150),
    ("double_s", [1.0], [5e-324], None, 1e150, None, 1e150),
])
def test_double_s_beyond_double_precision_is_refused_not_nan(args):
    from robot_dynamics.trajectory import plan

    with pytest.raises(InputError, match="beyond what the double_s law can evaluate in double precision"):
        plan(*args)


def test_double_s_of_ordinary_size_still_plans():
    from robot_dynamics.trajectory import plan

    traj = plan("double_s", [0.0], [2.0], 1.0, 2.0, 10.0)
    q, qd, qdd = traj.sample(np.linspace(0.0, traj.duration, 101))
    assert q[0, 0] == 0.0 and q[-1, 0] == pytest.approx(2.0, abs=1e-12) and np.max(qd) <= 1.0 + 1e-12


# -- 9. ROS parameters that are not numbers -------------------------------------------------------

@pytest.mark.parametrize("gravity", ["abc", "1,2,3", [1.0, "x", 3.0], [[1.0], [2.0, 3.0]], 1 + 2j, [0, 0, 10**400]])
def test_gravity_parameter_must_be_three_numbers(gravity):
    from robot_dynamics.ros.logic import load_model_from_parameters

    with pytest.raises(ModelError, match=r"gravity: expected 3 finite numbers \[m/s\^2\]"):
        load_model_from_parameters({"robot": "puma560", "gravity": gravity})


# -- 10. repeated and oversize name lists ----------------------------------------------------------

@pytest.mark.parametrize("names, words", [
    (["joint1"] * 60_000, "60,000 joint names, more than 10,000"),
    (PUMA_JOINTS + [f"x{i}" for i in range(20_000)], "more than 10,000"),
    (PUMA_JOINTS + ["joint3", "joint1"] * 2000, r"repeated joint names \['joint1', 'joint3'\]; expected each joint once"),
])
def test_inverse_dynamics_refuses_repeated_and_oversize_names(names, words, puma):
    from robot_dynamics.ros.logic import DynamicsServices

    ID = service_class("robot_dynamics_interfaces/InverseDynamics")
    res = DynamicsServices(puma).inverse_dynamics(ID.Request(joint_names=names, positions=[0.1] * len(names)), ID.Response())
    assert not res.success and re.search(words, res.message), res.message


def test_every_message_conversion_refuses_repeated_names(puma):
    from robot_dynamics.ros import conversion as cv
    from robot_dynamics.ros.motion import command_joint_order

    JointState = message_class("sensor_msgs/JointState")
    Trajectory = message_class("trajectory_msgs/JointTrajectory")
    Point = message_class("trajectory_msgs/JointTrajectoryPoint")
    names = PUMA_JOINTS + ["joint2"]
    with pytest.raises(InputError, match="JointState.name: repeated joint names"):
        cv.joint_state_to_arrays(JointState(name=names, position=[0.0] * 7), PUMA_JOINTS)
    with pytest.raises(InputError, match="JointTrajectory.joint_names: repeated joint names"):
        cv.trajectory_to_arrays(Trajectory(joint_names=names, points=[Point(positions=[0.0] * 7)]), PUMA_JOINTS)
    with pytest.raises(InputError, match="joints: repeated joint names"):
        command_joint_order(puma, names)
    with pytest.raises(InputError, match="more than 10,000"):
        cv.joint_state_to_arrays(JointState(name=PUMA_JOINTS, position=[0.0] * 20_000), PUMA_JOINTS)


# -- 11. the simulate command's offset -------------------------------------------------------------

@pytest.mark.parametrize("offset", ["1e308", "-1e300", "10"])
def test_simulate_refuses_absurd_offsets(offset, capsys, tmp_path):
    line = cli_refusal(["simulate", f"--offset={offset}"], capsys, tmp_path)
    assert "--offset: expected an initial error with |offset| <= pi" in line


# -- 12. a geared batch of one state with accelerations near 1e6 --------------------------------------
# It ran past 10 s because numba compiled a batch kernel on its first call and the one-state kernel
# on the second (78 s and 54 s with an empty cache, measured; the values made no difference). The
# engine is compiled at install: in a fresh process the same calls compile nothing, and give the
# one-state call's torques, which direct dynamics undoes.

def test_a_geared_batch_of_one_state_compiles_nothing_and_is_right():
    import subprocess
    import sys

    code = """
import sys
import numpy as np
import robot_dynamics as rd
m = rd.load_robot("three_dof_geared")
q = np.array([[0.3, -0.2, 0.5]]); qd = np.array([[1.0, -2.0, 0.5]]); qdd = np.array([[1e6, -9.9e5, 1e6]])
tau = rd.rnea(m, q, qd, qdd)
one = rd.rnea(m, q[0], qd[0], qdd[0])
back = rd.aba(m, q, qd, tau)
assert tau.shape == (1, 3) and np.all(np.isfinite(tau))
assert np.allclose(tau[0], one, rtol=1e-14, atol=0.0), (tau, one)
assert np.allclose(back, qdd, rtol=1e-9, atol=0.0), (back, qdd)
print(sorted(name for name in sys.modules if name == "numba" or name.startswith("numba.")))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", f"numba was imported: {run.stdout[:200]}"
