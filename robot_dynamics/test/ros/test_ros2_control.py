"""The ros2_control bring-up without ROS: the <ros2_control> block, the controller manager's
YAML, `robot-dynamics ros2-control`, robot_dynamics_bringup's arm.launch.py and its
config/controllers.yaml, and the simulator's JointState commands (what topic_based_ros2_control's
TopicBasedSystem sends).

The real runs are robot_dynamics_bringup's tests (controller_manager, the controllers and
TopicBasedSystem built from source).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from robot_dynamics.errors import InputError, ModelError, RobotDynamicsError, UnknownNameError
from robot_dynamics.engine.layout import model_text
from robot_dynamics.model import check_model
from robot_dynamics.ros.launch_support import arm_parameters, parse_pairs, write_parameter_file
from robot_dynamics.ros.motion import SimulatedPlant
from robot_dynamics.ros.ros2_control import (
    HARDWARE,
    IN_LOOP_CONTROLLERS,
    TASK_SPACE_CONTROLLERS,
    UPDATE_RATE,
    JOINT_COMMANDS_TOPIC,
    JOINT_STATES_TOPIC,
    controllers_yaml,
    engine_model_text,
    has_ros2_control,
    hardware_plugin,
    ros2_control_block,
    with_ros2_control,
)

from repo_files import repository_file
from test_launch_files import PKG, _run_launch  # noqa: F401 - the recording launch stand-ins

ROBOTS = rd.list_robots()


def _interfaces(joint: ET.Element, kind: str) -> list[str]:
    return [i.get("name") for i in joint.findall(kind)]


def _param(element: ET.Element, name: str) -> str | None:
    found = [p.text for p in element.findall("param") if p.get("name") == name]
    return found[0] if found else None


@pytest.mark.parametrize("robot", ROBOTS)
def test_block_has_every_joint_with_effort_command_and_three_states(robot):
    model = rd.load_robot(robot)
    root = ET.fromstring(ros2_control_block(model))
    assert root.tag == "ros2_control" and root.get("name") == model.name and root.get("type") == "system"
    hw = root.find("hardware")
    assert hw.findtext("plugin") == "topic_based_ros2_control/TopicBasedSystem"
    assert _param(hw, "joint_commands_topic") == JOINT_COMMANDS_TOPIC
    assert _param(hw, "joint_states_topic") == JOINT_STATES_TOPIC
    assert float(_param(hw, "trigger_joint_command_threshold")) < 0  # a command every cycle
    joints = root.findall("joint")
    assert [j.get("name") for j in joints] == list(model.joint_names)
    for i, j in enumerate(joints):
        assert _interfaces(j, "command_interface") == ["effort"]
        assert _interfaces(j, "state_interface") == ["position", "velocity", "effort"]
        command = j.find("command_interface")
        assert float(_param(command, "min")) == -model.effort_limit[i]
        assert float(_param(command, "max")) == model.effort_limit[i]
        position, _, effort = j.findall("state_interface")
        lo, hi = model.lower[i], model.upper[i]
        assert float(_param(position, "initial_value")) == float(np.clip(0.0, lo, hi))
        assert math.isnan(float(_param(effort, "initial_value")))  # "no command" until a controller writes


def test_block_initial_positions_params_and_other_hardware():
    model = rd.load_robot("puma560")
    q0 = [0.1, -0.2, 0.3, 0.0, 0.5, -0.6]
    root = ET.fromstring(ros2_control_block(model, "mock", initial_positions=q0, name="arm"))
    assert root.get("name") == "arm"
    assert root.find("hardware").findtext("plugin") == HARDWARE["mock"] == "mock_components/GenericSystem"
    assert root.find("hardware").findall("param") == []
    for q, j in zip(q0, root.findall("joint")):
        position, _, effort = j.findall("state_interface")
        assert float(_param(position, "initial_value")) == q
        assert _param(effort, "initial_value") is None  # only the simulator bridge needs the NaN start
    root = ET.fromstring(ros2_control_block(model, "vendor_driver/ArmSystem",
                                            hardware_params={"robot_ip": "192.168.1.2", "port": 30001}))
    hw = root.find("hardware")
    assert hw.findtext("plugin") == "vendor_driver/ArmSystem"
    assert {p.get("name"): p.text for p in hw.findall("param")} == {"robot_ip": "192.168.1.2", "port": "30001"}
    root = ET.fromstring(ros2_control_block(model, "topic", hardware_params={"joint_states_topic": "/isaac/states"}))
    assert _param(root.find("hardware"), "joint_states_topic") == "/isaac/states"
    assert _param(root.find("hardware"), "joint_commands_topic") == JOINT_COMMANDS_TOPIC


@pytest.mark.parametrize("hardware", ["", "Topic", "plugin", "a/b/c", "pkg/", "/Class", "pkg/Cl ass", "pkg/Class;rm"])
def test_bad_hardware_names_the_choices(hardware):
    with pytest.raises(InputError, match="expected 'topic'.*'mock'.*package/Class"):
        hardware_plugin(hardware)


def test_bad_block_inputs_are_refused():
    model = rd.load_robot("planar2")
    with pytest.raises(InputError, match="expected 2 finite values ordered as"):
        ros2_control_block(model, initial_positions=[0.0, 1.0, 2.0])
    with pytest.raises(InputError, match="expected 2 finite values"):
        ros2_control_block(model, initial_positions=[0.0, float("nan")])
    with pytest.raises(InputError, match="hardware parameter names"):
        ros2_control_block(model, hardware_params={"bad name": 1})


@pytest.mark.parametrize("robot", ROBOTS)
def test_the_urdf_with_the_block_keeps_the_robot(robot):
    model = rd.load_robot(robot)
    text = with_ros2_control(model.description, ros2_control_block(model))
    assert has_ros2_control(text) and not has_ros2_control(model.description)
    end = model.description.rstrip().rfind("</robot>")
    assert text.startswith(model.description[:end].rstrip())  # the robot's own text, byte for byte
    assert text.rstrip().endswith("</robot>")
    again = rd.load_urdf(text, drivetrain=None)
    bare = rd.load_urdf(model.description, drivetrain=None)
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.normal(size=(3, bare.nq))
    np.testing.assert_array_equal(rd.rnea(again, q, qd, qdd), rd.rnea(bare, q, qd, qdd))
    with pytest.raises(InputError, match="already has a <ros2_control> block"):
        with_ros2_control(text, ros2_control_block(model))
    with pytest.raises(InputError, match="not XML"):
        with_ros2_control("<robot", "<ros2_control/>")
    with pytest.raises(InputError, match="ending in </robot>"):
        with_ros2_control("<notrobot/>", "<ros2_control/>")


def test_controllers_yaml_names_the_two_controllers_and_the_joints():
    model = rd.load_robot("three_dof_geared")
    data = yaml.safe_load(controllers_yaml(model, 500))
    cm = data["controller_manager"]["ros__parameters"]
    assert cm["update_rate"] == 500
    assert cm["joint_state_broadcaster"]["type"] == "joint_state_broadcaster/JointStateBroadcaster"
    assert cm["effort_controller"]["type"] == "effort_controllers/JointGroupEffortController"
    assert data["effort_controller"]["ros__parameters"]["joints"] == list(model.joint_names)
    for bad in (0, 10001, 2.5, True, "250"):
        with pytest.raises(InputError, match=r"update_rate: expected an integer in \[1, 10000\]"):
            controllers_yaml(model, bad)
    with pytest.raises(UnknownNameError):
        controllers_yaml(model, 250, joints=["joint1", "nope"])


def test_cli_prints_the_block_the_yaml_and_writes_both(tmp_path):
    def cli(*args):
        return subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "ros2-control", *args],
                              capture_output=True, text=True, cwd=tmp_path)

    model = rd.load_robot("planar2")
    out = cli("--robot", "planar2", "--hardware", "topic")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == with_ros2_control(model.description, ros2_control_block(model)).strip()
    # the defaults are arm.launch.py's: the simulated arm in-process, the law in the loop
    out = cli("--robot", "planar2")
    text = engine_model_text(model)  # the plugins' robot_model, made by the one loader with its checks
    full = with_ros2_control(model.description, ros2_control_block(model, "sim", robot_model=engine_model_text(
        model, allow_no_effort_limit=True)))
    assert out.stdout.strip() == full.strip()
    out = cli("--robot", "planar2", "--block-only", "--hardware", "mock", "--q", "0.1,0.2")
    assert out.stdout.strip() == ros2_control_block(model, "mock", initial_positions=[0.1, 0.2])
    out = cli("-r", "planar2", "--controllers", "--update-rate", "100", "--control", "node")
    assert out.stdout == controllers_yaml(model, 100)
    out = cli("-r", "planar2", "--controllers", "--update-rate", "100")
    assert out.stdout == controllers_yaml(model, 100, control="in_loop", robot_model=text)
    out = cli("-r", "planar2", "--json", "--hardware-param", "robot_ip=10.0.0.2", "--hardware", "drv/Arm")
    data = json.loads(out.stdout)
    assert "<param name=\"robot_ip\">10.0.0.2</param>" in data["ros2_control"] and data["files"] is None
    out = cli("-r", "planar2", "--out", "cfg")
    assert out.returncode == 0, out.stderr
    urdf, controllers = (tmp_path / p for p in out.stdout.split())
    assert urdf == tmp_path / "cfg" / "planar2_ros2_control.urdf" and has_ros2_control(urdf.read_text())
    # one rate for the command, the launch and the docs: 1 kHz, the rate of docs/ros2_control.md's measurements
    assert yaml.safe_load(controllers.read_text())["controller_manager"]["ros__parameters"]["update_rate"] == UPDATE_RATE
    assert UPDATE_RATE == 1000
    for args, message in ((["--hardware", "what"], "expected 'topic'"), (["--q", "1"], "--q: expected 2 values"),
                          (["--update-rate", "0"], "update_rate: expected an integer"),
                          (["--hardware-param", "novalue"], "--hardware-param: expected NAME=VALUE")):
        out = cli("-r", "planar2", *args)
        assert out.returncode == 2 and message in out.stderr, (args, out.stderr)


def test_arm_parameters_bridge_the_simulator_through_topic_based_system():
    goal = "0.5,-0.4,0.3,0.2,-0.1,0.6"
    p = arm_parameters(str(PKG), robot="puma560", goal=goal, initial_positions="0,0.1,0,0,0,0", control="node",
                       hardware="topic")
    model = rd.load_robot("puma560")
    assert has_ros2_control(p["robot_description"])
    assert p["robot_state_publisher"] == [{"robot_description": p["robot_description"]}]
    config, sim = p["simulator"]
    assert Path(config).name == "simulator_node.yaml"
    assert sim["command_type"] == "joint_state"
    assert sim["command_topic"] == JOINT_COMMANDS_TOPIC and sim["joint_states_topic"] == JOINT_STATES_TOPIC
    assert sim["initial_positions"] == [0.0, 0.1, 0.0, 0.0, 0.0, 0.0]
    assert (sim["rate"], sim["substeps"]) == (1000.0, 1)  # the controller manager's cycle, 1 ms RK4 steps
    assert yaml.safe_load(p["controllers_yaml"])["controller_manager"]["ros__parameters"]["update_rate"] == 1000
    slow = arm_parameters(str(PKG), robot="planar2", update_rate="30", hardware="topic")["simulator"][1]
    assert (slow["rate"], slow["substeps"]) == (30.0, 34)
    root = ET.fromstring(p["robot_description"]).find("ros2_control")
    assert [float(_param(j.find("state_interface"), "initial_value")) for j in root.findall("joint")] == sim["initial_positions"]
    assert p["trajectory"][1]["initial_goal"] == [float(x) for x in goal.split(",")]
    assert p["controller"][1]["controller"] == "computed_torque"
    assert yaml.safe_load(p["controllers_yaml"])["effort_controller"]["ros__parameters"]["joints"] == list(model.joint_names)
    assert p["fixed_frame"] == ["base_link"]
    assert p["spawners"] == [{"controllers": ["joint_state_broadcaster"], "active": True},
                             {"controllers": ["effort_controller"], "active": True}] and p["remappings"] == {}
    assert p["controller_manager_remappings"] == [("~/robot_description", "/robot_description")]
    mock = arm_parameters(str(PKG), robot="planar2", hardware="mock")
    assert mock["simulator"] is None
    assert ET.fromstring(mock["robot_description"]).find("ros2_control/hardware").findtext("plugin") == HARDWARE["mock"]


def test_arm_parameters_vendor_descriptions_and_bad_arguments(tmp_path):
    model = rd.load_robot("planar2")
    vendor = tmp_path / "vendor.urdf"
    vendor.write_text(with_ros2_control(model.description, ros2_control_block(model, "drv/Arm")))
    p = arm_parameters(str(PKG), urdf=str(vendor), hardware="urdf")
    assert p["robot_description"] == vendor.read_text() and p["simulator"] is None
    p = arm_parameters(str(PKG), robot="planar2", hardware="drv/Arm", hardware_params="ip=10.0.0.2, port=5")
    hw = ET.fromstring(p["robot_description"]).find("ros2_control/hardware")
    assert (_param(hw, "ip"), _param(hw, "port")) == ("10.0.0.2", "5")
    cases = [
        (dict(robot="planar2", hardware="urdf"), "has no <ros2_control> block"),
        (dict(urdf=str(vendor), hardware="topic"), "already has a <ros2_control> block"),
        (dict(robot="planar2", hardware="gazebo"), "expected 'topic'"),
        (dict(robot="planar2", update_rate="fast"), "update_rate: expected an integer"),
        (dict(robot="planar2", update_rate="0"), r"update_rate: expected an integer in \[1, 10000\]"),
        (dict(robot="planar2", hardware_params="ip"), "hardware_params: expected name=value"),
        (dict(robot="planar2", goal="1,2,3"), "goal: expected 2 values"),
        (dict(robot="nope"), "nope"),
    ]
    for kwargs, message in cases:
        with pytest.raises(RobotDynamicsError, match=message):
            arm_parameters(str(PKG), **kwargs)
    assert parse_pairs("", "x") == {} and parse_pairs(" a=1 ,b = two,", "x") == {"a": "1", "b": "two"}


def test_write_parameter_file_is_private_and_complete():
    path = Path(write_parameter_file("a: 1\n", "c.yaml"))
    try:
        assert path.read_text() == "a: 1\n" and path.name == "c.yaml"
        assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    finally:
        path.unlink()
        path.parent.rmdir()


def test_arm_launch_starts_controller_manager_spawners_and_our_nodes(monkeypatch):
    declared, nodes, _ = _run_launch(monkeypatch, "arm.launch.py", goal="0.5,-0.4,0.3,0.2,-0.1,0.6",
                                     control="node", hardware="topic")
    assert declared["robot"] == "puma560" and declared["use_rviz"] == "true"
    assert declared["update_rate"] == str(UPDATE_RATE)
    assert set(nodes) == {"robot_state_publisher", "ros2_control_node", "spawner_joint_state_broadcaster",
                          "spawner_effort_controller", "simulator", "controller", "trajectory", "dynamics", "rviz2"}
    cm = nodes["ros2_control_node"].kwargs
    assert (cm["package"], cm["executable"]) == ("controller_manager", "ros2_control_node")
    assert "name" not in cm  # a __node remap would rename the controllers' nodes of that process too
    description, generated, gains = cm["parameters"]
    assert has_ros2_control(description["robot_description"].value)
    assert yaml.safe_load(Path(generated).read_text())["controller_manager"]["ros__parameters"]["update_rate"] == 1000
    # the gains: robot_dynamics_bringup's config/controllers.yaml, read last
    assert Path(gains) == repository_file("robot_dynamics_bringup", "config", "controllers.yaml")
    assert declared["controllers_file"] == gains
    for name in ("joint_state_broadcaster", "effort_controller"):
        spawner = nodes[f"spawner_{name}"].kwargs
        assert spawner["executable"] == "spawner" and spawner["arguments"][0] == name
        assert "--inactive" not in spawner["arguments"]
    sim = nodes["simulator"].kwargs["parameters"][1]
    assert sim["command_type"] == "joint_state" and sim["command_topic"] == JOINT_COMMANDS_TOPIC
    rsp = nodes["robot_state_publisher"].kwargs["parameters"][0]["robot_description"].value
    assert rsp == description["robot_description"].value
    assert cm["remappings"] == [("~/robot_description", "/robot_description")]  # Jazzy reads the topic
    _, mock_nodes, _ = _run_launch(monkeypatch, "arm.launch.py", hardware="mock", control="node")
    assert "simulator" not in mock_nodes


class _JointState(types.SimpleNamespace):
    pass


def test_simulator_takes_joint_state_efforts_by_name_and_nan_as_no_command():
    model = rd.load_robot("planar2")
    plant = SimulatedPlant(model, [0.3, -0.2], command_type="joint_state", friction=False)
    ok, status = plant.on_command(_JointState(name=["shoulder", "elbow"], effort=[math.nan, math.nan]), 0.0)
    assert ok and "no command yet" in status
    ok, status = plant.step(0.01, 0.01)
    assert ok and "brakes" in status
    np.testing.assert_array_equal(plant.q, [0.3, -0.2])
    ok, _ = plant.on_command(_JointState(name=["elbow", "shoulder"], position=[], effort=[2.0, 5.0]), 0.02)
    assert ok
    np.testing.assert_array_equal(plant.effort, [5.0, 2.0])  # by name, model order
    ok, _ = plant.step(1e-3, 0.021, substeps=1)
    assert ok
    tau = rd.rnea(model, [0.3, -0.2], [0.0, 0.0], rd.aba(model, [0.3, -0.2], [0.0, 0.0], [5.0, 2.0], friction=False),
                  friction=False)
    np.testing.assert_allclose(tau, [5.0, 2.0], atol=1e-9)
    np.testing.assert_array_equal(plant.applied, [5.0, 2.0])
    for msg, message in (
        (_JointState(name=["shoulder"], effort=[1.0]), "missing joints"),
        (_JointState(name=["shoulder", "elbow", "wrist"], effort=[1.0, 2.0, 3.0]), "wrist"),
        (_JointState(name=["shoulder", "elbow"], effort=[1.0]), "expected 2 values"),
        (_JointState(name=["shoulder", "elbow"], effort=[1.0, math.nan]), "NaN"),
        (_JointState(name=["shoulder", "elbow"], effort=["a", "b"]), "expected numbers"),
    ):
        ok, status = plant.on_command(msg, 0.03)
        assert not ok and message in status, status
    np.testing.assert_array_equal(plant.effort, [5.0, 2.0])  # a refused command changes nothing
    with pytest.raises(InputError, match="command_type: expected one of"):
        SimulatedPlant(model, command_type="joint_states")


def test_sim_block_names_the_in_process_hardware_with_its_model_text():
    model = rd.load_robot("puma560")
    q0 = [0.1, -0.2, 0.3, 0.0, 0.5, -0.6]
    text = engine_model_text(model, allow_no_effort_limit=True)
    root = ET.fromstring(ros2_control_block(model, "sim", initial_positions=q0, robot_model=text,
                                            hardware_params={"substeps": 2}))
    hw = root.find("hardware")
    assert hw.findtext("plugin") == HARDWARE["sim"] == "robot_dynamics_control/SimulatedSystem"
    # the model text survives the XML round trip, line by line
    assert {p.get("name"): p.text for p in hw.findall("param")} == {"robot_model": text, "substeps": "2"}
    assert text.endswith("\n# checks: strict allow-no-effort-limit\n")
    for q, j in zip(q0, root.findall("joint")):
        assert _interfaces(j, "command_interface") == ["effort"]
        position, _, effort = j.findall("state_interface")
        assert float(_param(position, "initial_value")) == q  # SimulatedSystem starts there
        assert _param(effort, "initial_value") is None
    bare = ET.fromstring(ros2_control_block(model, "sim")).find("hardware")
    assert bare.findall("param") == []  # no model text: no parameter (an empty <param> is no value)
    with pytest.raises(InputError, match="'sim'"):
        hardware_plugin("simulated")


def _declared_parameters(controller: str) -> set[str]:
    """A controller's declared parameters (its generate_parameter_library YAML in robot_dynamics_control)."""
    spec = repository_file("robot_dynamics_control", "src", f"{controller}.yaml")
    return set(yaml.safe_load(spec.read_text())[controller])


def test_controllers_yaml_in_loop_declares_the_three_controllers_and_the_chain():
    model = rd.load_robot("puma560")
    models = {name: engine_model_text(model, allow_no_effort_limit=name == "pd_gravity_controller")
              for name, _ in IN_LOOP_CONTROLLERS.values()}
    text = controllers_yaml(model, 500, control="in_loop", robot_model=models)
    assert "&id" not in text and "*id" not in text  # rcl's parameter parser refuses YAML aliases
    data = yaml.safe_load(text)
    cm = data["controller_manager"]["ros__parameters"]
    assert set(cm) == {"update_rate", "joint_state_broadcaster", "gravity_compensation_controller",
                       "pd_gravity_controller", "computed_torque_controller", "joint_trajectory_controller",
                       "cartesian_impedance_controller", "operational_space_controller"}
    for name, plugin in IN_LOOP_CONTROLLERS.values():
        assert cm[name]["type"] == plugin
        params = data[name]["ros__parameters"]
        assert params["joints"] == list(model.joint_names)
        assert params["robot_model"] == models[name]  # the model text survives the YAML round trip
        # what depends on the robot, no gain: those are config/controllers.yaml's; the task-space
        # controllers' frame: the model's end effector
        task = name in TASK_SPACE_CONTROLLERS
        assert set(params) == {"joints", "robot_model"} | ({"frame"} if task else set())
        assert params.get("frame", model.end_effector) == model.end_effector
        assert set(params) <= _declared_parameters(name)
    assert cm["joint_trajectory_controller"]["type"] == "joint_trajectory_controller/JointTrajectoryController"
    jtc = data["joint_trajectory_controller"]["ros__parameters"]
    assert jtc["joints"] == list(model.joint_names)
    # its commands are the computed-torque controller's reference interfaces
    assert jtc["command_joints"] == [f"computed_torque_controller/{j}" for j in model.joint_names]
    assert jtc["command_interfaces"] == ["position", "velocity", "acceleration"]
    assert jtc["state_interfaces"] == ["position", "velocity"]
    assert all(jtc["constraints"][j]["goal"] > 0 for j in model.joint_names)
    with pytest.raises(InputError, match=r"control: expected one of \['in_loop', 'node'\]"):
        controllers_yaml(model, 500, control="inloop", robot_model=models)
    with pytest.raises(InputError, match=r"need the robot's model text \(robot_model\)"):
        controllers_yaml(model, 500, control="in_loop")


def test_the_bringup_config_holds_each_gain_once_and_only_parameters_the_controllers_declare():
    """robot_dynamics_bringup's config/controllers.yaml: the gains and options, nothing the launch
    generates (no rate, type, joint or description), every parameter one its controller declares."""
    config = yaml.safe_load(repository_file("robot_dynamics_bringup", "config", "controllers.yaml").read_text())
    assert "controller_manager" not in config  # update_rate and the types: the launch's
    names = {name for name, _ in IN_LOOP_CONTROLLERS.values()}
    assert set(config) == names | {"joint_trajectory_controller"}
    generated = {"joints", "robot_model", "command_joints", "command_interfaces",
                 "state_interfaces"}
    for name, body in config.items():
        params = body["ros__parameters"]
        assert not generated & set(params), name
        if name in names:
            assert set(params) <= _declared_parameters(name), name
    # the controllers' gains: the only place they are written (controllers_yaml writes none)
    assert config["computed_torque_controller"]["ros__parameters"]["omega"] == [20.0]
    assert config["pd_gravity_controller"]["ros__parameters"]["kp"] and config["pd_gravity_controller"]["ros__parameters"]["kd"]
    model = rd.load_robot("puma560")
    text = controllers_yaml(model, control="in_loop", robot_model=engine_model_text(model))
    assert "omega" not in text and "kp" not in text


def test_a_controllers_file_that_sets_the_rate_or_cannot_be_read_is_refused(tmp_path):
    rate = tmp_path / "rate.yaml"
    rate.write_text("controller_manager:\n  ros__parameters:\n    update_rate: 100\n")
    with pytest.raises(InputError, match="give it as the launch argument update_rate:="):
        arm_parameters(str(PKG), robot="planar2", controllers_file=str(rate))
    with pytest.raises(InputError, match="controllers_file: cannot read"):
        arm_parameters(str(PKG), robot="planar2", controllers_file=str(tmp_path / "none.yaml"))
    ok = tmp_path / "gains.yaml"
    ok.write_text("pd_gravity_controller:\n  ros__parameters:\n    kp: [50.0]\n")
    assert arm_parameters(str(PKG), robot="planar2", controllers_file=str(ok))["controllers_file"] == str(ok)


def test_arm_parameters_default_to_in_loop_control_on_the_in_process_hardware():
    p = arm_parameters(str(PKG), robot="puma560", goal="0.5,-0.4,0.3,0.2,-0.1,0.6", initial_positions="0,0.1,0,0,0,0")
    root = ET.fromstring(p["robot_description"]).find("ros2_control")
    hw = root.find("hardware")
    assert hw.findtext("plugin") == HARDWARE["sim"] == p["hardware_plugin"]
    # the plant's model text: the robot with its drive-train YAML (rotor inertias), checked
    with_drive = rd.load_urdf(rd.load_robot("puma560").description, drivetrain=rd.model.robot_files("puma560")[1])
    assert [line.strip() for line in _param(hw, "robot_model").strip().splitlines()] == \
        engine_model_text(with_drive, allow_no_effort_limit=True).strip().splitlines()
    assert _param(hw, "substeps") == "1"  # 1 kHz: 1 ms RK4 steps, as the simulator node's
    assert [float(_param(j.find("state_interface"), "initial_value")) for j in root.findall("joint")] == \
        [0.0, 0.1, 0.0, 0.0, 0.0, 0.0]
    assert p["simulator"] is None and p["controller"] is None
    # every controller loaded, the chain of the computed-torque controller active
    assert p["spawners"] == [
        {"controllers": ["joint_state_broadcaster"], "active": True},
        {"controllers": ["computed_torque_controller", "joint_trajectory_controller"], "active": True},
        {"controllers": ["gravity_compensation_controller", "pd_gravity_controller", "cartesian_impedance_controller",
                         "operational_space_controller"], "active": False}]
    assert p["remappings"] == {"trajectory": [("~/joint_trajectory", "/joint_trajectory_controller/joint_trajectory")]}
    data = yaml.safe_load(p["controllers_yaml"])
    assert data["computed_torque_controller"]["ros__parameters"]["robot_model"] == engine_model_text(with_drive)
    assert p["trajectory"][1]["initial_goal"] == [0.5, -0.4, 0.3, 0.2, -0.1, 0.6]
    q = arm_parameters(str(PKG), robot="planar2", hardware_params="substeps=5, timing_log=t.csv", update_rate="100")
    hw = ET.fromstring(q["robot_description"]).find("ros2_control/hardware")
    assert (_param(hw, "substeps"), _param(hw, "timing_log")) == ("5", "t.csv")  # given ones win
    topic = arm_parameters(str(PKG), robot="planar2", hardware="topic")  # in_loop on the simulator node
    assert topic["simulator"] is not None and topic["controller"] is None
    with pytest.raises(InputError, match=r"control: expected one of \['in_loop', 'node'\]"):
        arm_parameters(str(PKG), robot="planar2", control="loop")


@pytest.mark.parametrize("controller, active, inactive", [
    ("gravity_compensation", ["gravity_compensation_controller"],
     ["pd_gravity_controller", "computed_torque_controller", "joint_trajectory_controller",
      "cartesian_impedance_controller", "operational_space_controller"]),
    ("pd_gravity", ["pd_gravity_controller"],
     ["gravity_compensation_controller", "computed_torque_controller", "joint_trajectory_controller",
      "cartesian_impedance_controller", "operational_space_controller"]),
    ("cartesian_impedance", ["cartesian_impedance_controller"],
     ["gravity_compensation_controller", "pd_gravity_controller", "computed_torque_controller",
      "joint_trajectory_controller", "operational_space_controller"]),
])
def test_arm_parameters_in_loop_start_the_chosen_controller_and_load_the_others_inactive(controller, active, inactive):
    p = arm_parameters(str(PKG), robot="puma560", controller=controller)
    assert p["spawners"][1:] == [{"controllers": active, "active": True}, {"controllers": inactive, "active": False}]
    with pytest.raises(InputError, match=r"controller: with control:=in_loop expected one of "
                                         r"\['gravity_compensation', 'pd_gravity', 'computed_torque', 'cartesian_impedance', "
                                         r"'operational_space'\], got 'lqr'"):
        arm_parameters(str(PKG), robot="puma560", controller="lqr")
    assert arm_parameters(str(PKG), robot="puma560", controller="lqr", control="node")["controller"][1]["controller"] == "lqr"


def test_arm_launch_defaults_start_the_chain_and_no_controller_node(monkeypatch):
    declared, nodes, _ = _run_launch(monkeypatch, "arm.launch.py", goal="0.5,-0.4,0.3,0.2,-0.1,0.6")
    assert (declared["control"], declared["hardware"], declared["controller"]) == ("in_loop", "sim", "computed_torque")
    assert set(nodes) == {"robot_state_publisher", "ros2_control_node", "spawner_joint_state_broadcaster",
                          "spawner_computed_torque_controller", "spawner_gravity_compensation_controller",
                          "trajectory", "dynamics", "rviz2"}
    chain = nodes["spawner_computed_torque_controller"].kwargs["arguments"]
    assert chain[:2] == ["computed_torque_controller", "joint_trajectory_controller"]  # activation order
    others = nodes["spawner_gravity_compensation_controller"].kwargs["arguments"]
    assert others[:5] == ["gravity_compensation_controller", "pd_gravity_controller", "cartesian_impedance_controller",
                          "operational_space_controller", "--inactive"]
    cm = nodes["ros2_control_node"].kwargs
    description, generated, gains = cm["parameters"]
    root = ET.fromstring(description["robot_description"].value)
    assert root.find("ros2_control/hardware").findtext("plugin") == HARDWARE["sim"]
    assert "computed_torque_controller" in yaml.safe_load(Path(generated).read_text())
    assert "omega" in yaml.safe_load(Path(gains).read_text())["computed_torque_controller"]["ros__parameters"]
    assert nodes["trajectory"].kwargs["remappings"] == [("~/joint_trajectory",
                                                         "/joint_trajectory_controller/joint_trajectory")]
    assert "remappings" not in nodes["dynamics"].kwargs


def test_arm_parameters_hand_each_plugin_its_model_text(tmp_path):
    """arm.launch.py's plugins get the robot as the engine's model text, made by the one loader:
    SimulatedSystem in its <ros2_control> block, each in-loop controller in the generated YAML;
    strict unless that plugin sets allow_nonphysical_model (hardware_params, the controllers
    file), with allow-no-effort-limit for the plant and for a controller giving effort_limits."""
    model = rd.load_robot("puma560")
    strict = engine_model_text(model)
    own_limits = engine_model_text(model, allow_no_effort_limit=True)
    gains = tmp_path / "gains.yaml"
    gains.write_text("pd_gravity_controller:\n  ros__parameters:\n    kp: [10.0]\n    effort_limits: [5.0]\n"
                     "gravity_compensation_controller:\n  ros__parameters:\n    allow_nonphysical_model: true\n")
    p = arm_parameters(str(PKG), robot="puma560", controllers_file=str(gains))
    hw = ET.fromstring(p["robot_description"]).find("ros2_control/hardware")
    assert "drivetrain" not in {e.get("name") for e in hw.findall("param")}
    hw_text = next(e.text for e in hw.findall("param") if e.get("name") == "robot_model")
    # the block's lines are indented with the URDF's; the engine's parser skips leading blanks
    assert [line.strip() for line in hw_text.strip().splitlines()] == own_limits.strip().splitlines()
    data = yaml.safe_load(p["controllers_yaml"])
    models = {name: data[name]["ros__parameters"]["robot_model"] for name, _ in IN_LOOP_CONTROLLERS.values()}
    assert models == {"computed_torque_controller": strict, "pd_gravity_controller": own_limits,
                      "gravity_compensation_controller": model_text(model),
                      "cartesian_impedance_controller": strict, "operational_space_controller": strict}
    # the node path: only the simulated arm takes a model text; a mock none
    node = arm_parameters(str(PKG), robot="puma560", control="node", hardware="mock")
    assert "robot_model" not in node["robot_description"] and "robot_model" not in node["controllers_yaml"]


@pytest.mark.filterwarnings("ignore::robot_dynamics.errors.ModelWarning")  # the loader's, tested here as errors
def test_arm_parameters_refuse_a_model_that_fails_the_checks_naming_the_plugin(tmp_path):
    import re

    urdf = tmp_path / "massless.urdf"
    urdf.write_text(re.sub(r'<mass value="[^"]*"', '<mass value="0"', rd.load_robot("planar2").description))
    model = rd.load_urdf(urdf)
    assert check_model(model)  # the premise: an issue the description does not accept
    with pytest.raises(ModelError, match=r"robot_model of hardware: .* fails the model checks.*allow_nonphysical_model"):
        arm_parameters(str(PKG), urdf=str(urdf))
    p = arm_parameters(str(PKG), urdf=str(urdf), hardware_params="allow_nonphysical_model=true", control="node")
    assert "# checks:" not in p["robot_description"]  # the plant's text, unchecked as it asked
    with pytest.raises(ModelError, match=r"robot_model of gravity_compensation_controller: "):
        arm_parameters(str(PKG), urdf=str(urdf), hardware="mock")


def test_the_launch_passes_the_simulated_wrench_to_the_simulated_arm():
    """arm.launch.py's hardware_params carries SimulatedSystem's simulated_external_wrench_topic and
    simulated_external_wrench_frame into the block, beside the model text that names that frame
    (its frame_names line, which the plugin checks the frame against)."""
    p = arm_parameters(str(PKG), robot="iiwa14", hardware_params="simulated_external_wrench_topic=/simulated_external_wrench,"
                       " simulated_external_wrench_frame=iiwa_link_ee, simulated_external_torque_topic=/push")
    hw = ET.fromstring(p["robot_description"]).find("ros2_control/hardware")
    assert _param(hw, "simulated_external_wrench_topic") == "/simulated_external_wrench"
    assert _param(hw, "simulated_external_wrench_frame") == "iiwa_link_ee"
    assert _param(hw, "simulated_external_torque_topic") == "/push"
    frames = next(line.split() for line in _param(hw, "robot_model").splitlines() if line.strip().startswith("frame_names"))
    assert frames[1:] == ["9", *rd.load_robot("iiwa14").frame_names] and frames[-1] == "iiwa_link_ee"
    default = ET.fromstring(arm_parameters(str(PKG), robot="iiwa14")["robot_description"]).find("ros2_control/hardware")
    assert _param(default, "simulated_external_wrench_topic") is None  # none by default: no input
