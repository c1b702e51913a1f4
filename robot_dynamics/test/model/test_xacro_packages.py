"""xacro descriptions without a ROS install: ``$(find pkg)``, ``package://`` includes and xacro
arguments resolved through a package map (``--package``, ``ROBOT_DYNAMICS_PACKAGE_PATH``, or
``packages=`` in Python). The fixture is laid out as vendors' description packages are
(``<pkg>/package.xml``, ``urdf/*.urdf.xacro`` including macros from the same package by
``$(find ...)`` and from another by ``package://``)."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.errors import ModelError

ARM = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="arm">
  <xacro:arg name="prefix" default=""/>
  <xacro:arg name="payload" default="0.0"/>
  <xacro:include filename="$(find acme_description)/urdf/link.xacro"/>
  <xacro:include filename="package://acme_tools/urdf/tool.xacro"/>
  <link name="$(arg prefix)base"/>
  <xacro:acme_link name="$(arg prefix)upper" mass="2.0"/>
  <xacro:acme_link name="$(arg prefix)lower" mass="1.0"/>
  <joint name="$(arg prefix)shoulder" type="revolute">
    <parent link="$(arg prefix)base"/><child link="$(arg prefix)upper"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="50" velocity="2"/>
  </joint>
  <joint name="$(arg prefix)elbow" type="revolute">
    <parent link="$(arg prefix)upper"/><child link="$(arg prefix)lower"/><origin xyz="0.5 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="30" velocity="2"/>
  </joint>
  <xacro:acme_tool parent="$(arg prefix)lower" mass="$(arg payload)"/>
</robot>
"""
LINK = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="acme_link" params="name mass">
    <link name="${name}">
      <inertial><origin xyz="0.25 0 0"/><mass value="${mass}"/>
        <inertia ixx="0.001" ixy="0" ixz="0" iyy="${mass * 0.5**2 / 12}" iyz="0" izz="${mass * 0.5**2 / 12}"/></inertial>
      <visual><geometry><mesh filename="package://acme_description/meshes/${name}.stl"/></geometry></visual>
    </link>
  </xacro:macro>
</robot>
"""
TOOL = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="acme_tool" params="parent mass">
    <link name="tool"><inertial><mass value="${mass}"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
    <joint name="tool_joint" type="fixed"><parent link="${parent}"/><child link="tool"/><origin xyz="0.5 0 0"/></joint>
  </xacro:macro>
</robot>
"""


@pytest.fixture
def workspace(tmp_path):
    for pkg, files in (("acme_description", {"urdf/arm.urdf.xacro": ARM, "urdf/link.xacro": LINK}),
                       ("acme_tools", {"urdf/tool.xacro": TOOL})):
        root = tmp_path / "src" / f"{pkg}_folder"  # the folder name need not be the package name
        (root / "urdf").mkdir(parents=True)
        (root / "package.xml").write_text(f"<package format='3'><name>{pkg}</name></package>")
        for rel, text in files.items():
            (root / rel).write_text(text)
    return tmp_path / "src"


def _gravity_at_zero(model):
    return rd.gravity_torques(model, np.zeros(model.nq))


def test_find_and_package_includes_resolve_through_the_package_map(workspace, monkeypatch):
    monkeypatch.delenv("ROBOT_DYNAMICS_PACKAGE_PATH", raising=False)
    arm = workspace / "acme_description_folder" / "urdf" / "arm.urdf.xacro"
    packages = {"acme_description": workspace / "acme_description_folder", "acme_tools": workspace / "acme_tools_folder"}
    model = rd.load_urdf(arm, packages=packages, xacro_args={"prefix": "left_", "payload": "3.0"})
    assert model.joint_names == ("left_shoulder", "left_elbow")
    # gravity about the shoulder (y axis, x forward, z up): 2 kg at 0.25 m, 1 kg at 0.75 m and the
    # 3 kg payload at 1.0 m: tau = -g x (m r) summed = 9.81 (0.5 + 0.75 + 3.0) with the sign of y
    tau = _gravity_at_zero(model)
    assert abs(tau[0]) == pytest.approx(9.81 * (2 * 0.25 + 1 * 0.75 + 3 * 1.0))
    assert abs(tau[1]) == pytest.approx(9.81 * (1 * 0.25 + 3 * 0.5))
    # the same through the environment variable: a folder of packages, found by package.xml name
    monkeypatch.setenv("ROBOT_DYNAMICS_PACKAGE_PATH", str(workspace))
    again = rd.load_urdf(arm, xacro_args={"payload": "3.0"})
    np.testing.assert_allclose(_gravity_at_zero(again), tau)
    # and the source itself as package://
    assert rd.load_urdf("package://acme_description/urdf/arm.urdf.xacro").nq == 2


def test_the_cli_takes_packages_and_xacro_arguments(workspace, monkeypatch, capsys, tmp_path):
    import json

    from robot_dynamics.cli import main

    monkeypatch.delenv("ROBOT_DYNAMICS_PACKAGE_PATH", raising=False)
    arm = workspace / "acme_description_folder" / "urdf" / "arm.urdf.xacro"
    args = ["torque", "--urdf", str(arm), "--package", f"acme_description={workspace / 'acme_description_folder'}",
            "--package", f"acme_tools={workspace / 'acme_tools_folder'}", "--xacro-arg", "payload:=3.0", "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    tau = np.array(data["gravity_torque"])
    assert abs(tau[0]) == pytest.approx(9.81 * (2 * 0.25 + 1 * 0.75 + 3 * 1.0))
    assert main(["torque", "--urdf", str(arm)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--package acme_description=DIR" in err
    assert main(["torque", "--urdf", str(arm), "--package", "nonsense"]) == 2
    assert "--package: expected NAME=DIR" in capsys.readouterr().err


def test_a_published_package_include_that_points_nowhere_is_one_line(monkeypatch):
    """example-robot-data's hector quadrotor includes package://.../urdf/..., a folder it lacks."""
    from test_example_robot_data import ROBOTS

    monkeypatch.delenv("ROBOT_DYNAMICS_PACKAGE_PATH", raising=False)
    share = ROBOTS.parent
    with pytest.raises(ModelError) as info:
        rd.load_urdf(ROBOTS / "hector_description/robots/quadrotor_base.xacro", packages={"example-robot-data": share})
    assert "\n" not in str(info.value) and "quadrotor_base.urdf.xacro" in str(info.value)
    # its macro file expands, and defines no link until the macro is called
    with pytest.raises(ModelError, match="no links"):
        rd.load_urdf(ROBOTS / "hector_description/robots/quadrotor_base.urdf.xacro", packages={"example-robot-data": share})


def test_file_uris_in_includes_and_as_the_source(workspace, monkeypatch):
    """``file:///abs/path`` (as ROS 2 launch files and some vendors write includes) is a path."""
    monkeypatch.delenv("ROBOT_DYNAMICS_PACKAGE_PATH", raising=False)
    desc = workspace / "acme_description_folder"
    tool = workspace / "acme_tools_folder" / "urdf" / "tool.xacro"
    text = (desc / "urdf" / "arm.urdf.xacro").read_text().replace(
        "package://acme_tools/urdf/tool.xacro", f"file://{tool}")
    (desc / "urdf" / "arm_file.urdf.xacro").write_text(text)
    model = rd.load_urdf(f"file://{desc / 'urdf' / 'arm_file.urdf.xacro'}", packages={"acme_description": desc},
                         xacro_args={"payload": "3.0"})
    assert model.joint_names == ("shoulder", "elbow")
    assert abs(_gravity_at_zero(model)[0]) == pytest.approx(9.81 * (2 * 0.25 + 1 * 0.75 + 3 * 1.0))
    with pytest.raises(ModelError, match="not found"):
        rd.load_urdf(f"file://{desc / 'urdf' / 'absent.urdf'}")
