"""Loading robots: URDF features, xacro, the joint-properties YAML, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.model import share_directory

TWO_LINKS = """<?xml version="1.0"?>
<robot name="t">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0 0" rpy="0 0 0"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial>
    <visual><geometry><mesh filename="package://nowhere/a.dae"/></geometry></visual></link>
  <link name="flange"><inertial><origin xyz="0 0 0.05" rpy="0 0 0"/><mass value="1"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <link name="b"><inertial><origin xyz="0 0.2 0" rpy="0 0 0"/><mass value="1.5"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.01"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 -1"/><limit lower="-1" upper="1" effort="50" velocity="2"/>
    <dynamics damping="0.4" friction="1.1"/></joint>
  <joint name="fix" type="fixed"><parent link="a"/><child link="flange"/>
    <origin xyz="0.3 0 0" rpy="0 1.5707963267948966 0"/></joint>
  <joint name="j2" type="continuous"><parent link="flange"/><child link="b"/>
    <origin xyz="0 0 0.1"/><axis xyz="1 0 0"/><limit effort="20" velocity="3"/></joint>
</robot>
"""


def test_fixed_joint_is_merged_and_kept_as_frame():
    m = rd.load_urdf(TWO_LINKS)
    assert m.joint_names == ("j1", "j2") and m.nb == 2
    assert m.frame_names == ("base", "a", "flange", "b")
    # flange (1 kg) merged into body a (2 kg): 3 kg, COM between them
    assert m.mass[0] == pytest.approx(3.0)
    flange_com_in_a = np.array([0.3, 0, 0]) + np.array([[0, 0, 1], [0, 1, 0], [-1, 0, 0]]) @ [0, 0, 0.05]
    np.testing.assert_allclose(m.com[0], (2 * np.array([0.1, 0, 0]) + flange_com_in_a) / 3, atol=1e-15)
    # the frame still sits where the URDF says
    T = rd.frame_pose(m, [0.0, 0.0], "flange")
    np.testing.assert_allclose(T[:3, 3], [0.3, 0, 0], atol=1e-15)


def test_limits_dynamics_and_continuous_joints_are_read():
    m = rd.load_urdf(TWO_LINKS)
    np.testing.assert_array_equal(m.lower, [-1, -np.inf])
    np.testing.assert_array_equal(m.upper, [1, np.inf])
    np.testing.assert_array_equal(m.effort_limit, [50, 20])
    np.testing.assert_array_equal(m.velocity_limit, [2, 3])
    np.testing.assert_array_equal(m.viscous, [0.4, 0.0])
    np.testing.assert_array_equal(m.coulomb, [1.1, 0.0])
    np.testing.assert_array_equal(m.continuous, [False, True])
    # friction is in rnea: Khalil [7.28]
    q, qd = np.zeros(2), np.array([0.5, -2.0])
    diff = rd.rnea(m, q, qd, np.zeros(2)) - rd.rnea(m, q, qd, np.zeros(2), friction=False)
    np.testing.assert_allclose(diff, [0.4 * 0.5 + 1.1, 0.0])


def test_negative_axis_turns_the_other_way():
    m = rd.load_urdf(TWO_LINKS)
    T = rd.frame_pose(m, [0.5, 0.0], "a")
    np.testing.assert_allclose(T[:3, :3], rd.spatial.rpy_to_matrix([0, 0, -0.5]), atol=1e-15)


def test_links_without_inertial_are_massless_and_direct_dynamics_says_why():
    text = TWO_LINKS.replace(
        '<link name="b"><inertial><origin xyz="0 0.2 0" rpy="0 0 0"/><mass value="1.5"/>\n'
        '    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.01"/></inertial></link>',
        '<link name="b"/>',
    )
    with pytest.warns(rd.ModelWarning, match=r"link 'b' \(moved by joint 'j2'\) has no mass") as record:
        m = rd.load_urdf(text)
    assert [w.message.issue.kind for w in record] == ["massless_link"]
    assert m.mass[1] == 0.0
    assert np.all(np.isfinite(rd.rnea(m, [0.1, 0.2], [1, 1], [1, 1])))
    with pytest.raises(rd.SingularityError, match="'j2' moves no inertia"):
        rd.aba(m, [0.1, 0.2], [0, 0], [0, 0])


def test_joint_properties_yaml_rotor_inertia_is_n_squared_jm(tmp_path):
    side = tmp_path / "drive.yaml"
    side.write_text(
        "joints:\n  j1: {rotor_inertia: 2.0e-4, gear_ratio: -50, viscous: 0.2}\n"
        "  j2: {armature: 0.05, limits: {effort: 7.5}}\n"
    )
    base = rd.load_urdf(TWO_LINKS)
    m = rd.load_urdf(TWO_LINKS, drivetrain=side)
    np.testing.assert_allclose(m.rotor_inertia, [50**2 * 2.0e-4, 0.05])  # Khalil [7.29]
    assert m.viscous[0] == 0.2 and m.coulomb[0] == 1.1 and m.effort_limit[1] == 7.5
    q = np.array([0.3, 0.1])
    np.testing.assert_allclose(rd.crba(m, q) - rd.crba(base, q), np.diag([0.5, 0.05]), atol=1e-15)
    assert base.rotor_inertia.sum() == 0  # the original model is untouched


@pytest.mark.parametrize(
    "yaml_text, message",
    [
        ("joints: {elbow: {viscous: 1}}", "Valid joints: \\['j1', 'j2'\\]"),
        ("joints: {j1: {viscus: 1}}", "joints.j1.viscus: unknown key. Valid keys"),
        ("joints: {j1: {viscous: -1}}", "joints.j1.viscous: must be >= 0"),
        ("joints: {j1: {gear_ratio: 0, rotor_inertia: 1}}", "gear_ratio: must be non-zero"),
        ("joints: {j1: {limits: {lower: 2, upper: 1}}}", "lower 2.0 is above upper 1.0"),
        ("gears: {}", "Unknown section 'gears'"),
        ("joints: [1, 2]", "must map joint names"),
    ],
)
def test_bad_joint_properties_yaml_is_rejected_with_the_field_named(tmp_path, yaml_text, message):
    side = tmp_path / "bad.yaml"
    side.write_text(yaml_text)
    with pytest.raises(rd.ModelError, match=message):
        rd.load_urdf(TWO_LINKS, drivetrain=side)


@pytest.mark.parametrize(
    "text, message",
    [
        ("<robot><link name='a'>", "Malformed URDF XML"),
        ("<robt name='x'/>", "root element must be <robot>"),
        (TWO_LINKS.replace('type="continuous"', 'type="floating"'), "supported joint types"),
        (TWO_LINKS.replace('type="continuous"', 'type="hinge"'), "valid joint types"),
        (TWO_LINKS.replace('<child link="b"/>', '<child link="c"/>'), "child link 'c', which is not defined. Valid links"),
        (TWO_LINKS.replace('<axis xyz="1 0 0"/>', '<axis xyz="0 0 0"/>'), "zero or non-finite axis"),
        (TWO_LINKS.replace('<mass value="2"/>', '<mass value="-2"/>'), "mass must be a finite number >= 0"),
        (TWO_LINKS.replace('ixx="0.01" ixy="0" ixz="0" iyy="0.02"', 'ixx="-0.01" ixy="0" ixz="0" iyy="0.02"'), "negative principal moment"),
        (TWO_LINKS.replace('<origin xyz="0 0 0.1"/>', '<origin xyz="0 0 nan"/>'), "expected 3 finite numbers"),
        (TWO_LINKS.replace('<parent link="flange"/><child link="b"/>', '<parent link="b"/><child link="a"/>'), "child of two joints"),
        (TWO_LINKS.replace('<dynamics damping="0.4"', '<mimic joint="nope"/><dynamics damping="0.4"'), "mimics 'nope'"),
    ],
)
def test_malformed_urdf_is_rejected_with_a_clear_message(text, message):
    with pytest.raises(rd.ModelError, match=message):
        rd.load_urdf(text)


def test_missing_file_and_unknown_names():
    with pytest.raises(rd.ModelError, match="not found"):
        rd.load_urdf("no_such_robot.urdf")
    with pytest.raises(rd.UnknownNameError, match="Valid robots: \\['iiwa14'") as exc:
        rd.load_robot("ur5")
    assert "puma560" in exc.value.valid
    m = rd.load_urdf(TWO_LINKS)
    with pytest.raises(rd.UnknownNameError, match="Unknown frame 'tool'. Valid frames: \\['base', 'a', 'flange', 'b'\\]"):
        rd.frame_pose(m, [0, 0], "tool")
    with pytest.raises(rd.UnknownNameError, match="Valid joints"):
        m.joint_index("j3")


def test_bad_numeric_inputs_name_the_expected_shape():
    m = rd.load_robot("planar2")
    with pytest.raises(rd.InputError, match=r"q: expected shape \(\.\.\., 2\) ordered as \['shoulder', 'elbow'\]"):
        rd.rnea(m, [0, 0, 0], [0, 0], [0, 0])
    with pytest.raises(rd.InputError, match="NaN"):
        rd.crba(m, [np.nan, 0])
    with pytest.raises(rd.InputError, match="gravity"):
        rd.rnea(m, [0, 0], [0, 0], [0, 0], gravity=[0, -9.81])
    with pytest.raises(rd.InputError, match="do not broadcast"):
        rd.rnea(m, np.zeros((3, 2)), np.zeros((4, 2)), np.zeros(2))


def test_model_is_immutable():
    m = rd.load_robot("planar2")
    with pytest.raises(ValueError):
        m.mass[0] = 10.0
    with pytest.raises(AttributeError):
        m.name = "other"  # type: ignore[misc]


def test_xacro_file_is_expanded(tmp_path):
    (tmp_path / "arm.urdf.xacro").write_text(
        """<?xml version="1.0"?>
<robot name="xarm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="length" default="0.4"/>
  <xacro:property name="L" value="$(arg length)"/>
  <xacro:macro name="rod" params="name mass">
    <link name="${name}"><inertial><origin xyz="${L/2} 0 0"/><mass value="${mass}"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="${mass*L*L/12}" iyz="0" izz="${mass*L*L/12}"/></inertial></link>
  </xacro:macro>
  <link name="base"/>
  <xacro:rod name="l1" mass="2.0"/>
  <xacro:rod name="l2" mass="1.0"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="${L} 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
</robot>
"""
    )
    m = rd.load_urdf(tmp_path / "arm.urdf.xacro", xacro_args={"length": "0.5"})
    assert m.name == "xarm" and m.joint_names == ("j1", "j2")
    np.testing.assert_allclose(m.com[:, 0], [0.25, 0.25])
    # a horizontal two-rod arm: gravity torque at the shoulder = g (2 * 0.25 + 1 * 0.75)
    tau = rd.gravity_torques(m, [0.0, 0.0])
    assert abs(tau[0]) == pytest.approx(9.81 * (2 * 0.25 + 1 * 0.75), rel=1e-12)


def test_bundled_robots_are_found_and_load():
    names = rd.list_robots()
    assert {"planar2", "puma560", "rx90", "iiwa14"} <= set(names)
    assert (share_directory() / "urdf" / "puma560.urdf").is_file()
    for name in names:
        m = rd.load_robot(name)
        assert m.total_mass() > 1.0 and np.all(m.effort_limit > 0) and m.nq >= 2
