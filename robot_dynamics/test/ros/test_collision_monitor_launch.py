"""The collision monitor in the ros2_control bring-up without ROS: the controller manager's YAML
with the monitor between the computed-torque controller and the hardware, arm.launch.py's
``monitor`` argument, and robot_dynamics_bringup's config/collision_monitor.yaml.

The real run is robot_dynamics_bringup's test_arm_collision.py (controller_manager, the chain and
a simulated push).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import robot_dynamics as rd
from robot_dynamics.errors import InputError
from robot_dynamics.ros.launch_support import arm_parameters
from robot_dynamics.ros.ros2_control import (
    COLLISION_MONITOR_CONTROLLER,
    COLLISION_MONITOR_PLUGIN,
    COMPUTED_TORQUE_CONTROLLER,
    controllers_yaml,
    engine_model_text,
)

from repo_files import repository_file
from test_launch_files import PKG, _run_launch  # noqa: F401 - the recording launch stand-ins

MONITOR_CONFIG = ("robot_dynamics_bringup", "config", "collision_monitor.yaml")


def _declared(controller: str) -> set[str]:
    spec = repository_file("robot_dynamics_control", "src", f"{controller}.yaml")
    return set(yaml.safe_load(spec.read_text())[controller])


def test_controllers_yaml_puts_the_monitor_behind_the_computed_torque_controller():
    model = rd.load_robot("iiwa14")
    text = engine_model_text(model)
    data = yaml.safe_load(controllers_yaml(model, 1000, control="in_loop", robot_model=text, monitor=True))
    cm = data["controller_manager"]["ros__parameters"]
    assert cm[COLLISION_MONITOR_CONTROLLER]["type"] == COLLISION_MONITOR_PLUGIN
    monitor = data[COLLISION_MONITOR_CONTROLLER]["ros__parameters"]
    assert monitor == {"joints": list(model.joint_names), "robot_model": text}
    ct = data[COMPUTED_TORQUE_CONTROLLER]["ros__parameters"]
    # its efforts go to the monitor's reference interfaces <monitor>/<joint>/effort
    assert ct["command_joints"] == [f"{COLLISION_MONITOR_CONTROLLER}/{j}" for j in model.joint_names]
    assert set(ct) <= _declared(COMPUTED_TORQUE_CONTROLLER)
    assert set(monitor) <= _declared(COLLISION_MONITOR_CONTROLLER)
    plain = yaml.safe_load(controllers_yaml(model, 1000, control="in_loop", robot_model=text))
    assert COLLISION_MONITOR_CONTROLLER not in plain and "command_joints" not in plain[COMPUTED_TORQUE_CONTROLLER][
        "ros__parameters"]


def test_the_bringup_monitor_config_sets_only_parameters_the_monitor_declares():
    config = yaml.safe_load(repository_file(*MONITOR_CONFIG).read_text())
    assert set(config) == {COLLISION_MONITOR_CONTROLLER}
    params = config[COLLISION_MONITOR_CONTROLLER]["ros__parameters"]
    assert set(params) <= _declared(COLLISION_MONITOR_CONTROLLER)
    assert not {"joints", "robot_model"} & set(params)  # the launch's
    assert params["reaction"] in ("hold", "reflex")


def test_arm_parameters_with_the_monitor_activate_it_first_in_the_chain():
    path = str(repository_file(*MONITOR_CONFIG))
    p = arm_parameters(str(PKG), robot="iiwa14", monitor=path)
    assert p["monitor_file"] == path
    assert p["spawners"][1] == {"controllers": [COLLISION_MONITOR_CONTROLLER, COMPUTED_TORQUE_CONTROLLER,
                                                "joint_trajectory_controller"], "active": True}
    data = yaml.safe_load(p["controllers_yaml"])
    assert data[COLLISION_MONITOR_CONTROLLER]["ros__parameters"]["robot_model"].startswith("robot_dynamics-engine-model")
    assert arm_parameters(str(PKG), robot="iiwa14", monitor="true")["monitor_file"] == ""  # the defaults
    off = arm_parameters(str(PKG), robot="iiwa14")
    assert off["monitor_file"] == "" and COLLISION_MONITOR_CONTROLLER not in off["controllers_yaml"]
    for kwargs in ({"control": "node"}, {"controller": "pd_gravity"}):
        with pytest.raises(InputError, match="monitor: the collision monitor runs behind the computed-torque"):
            arm_parameters(str(PKG), robot="iiwa14", monitor="true", **kwargs)


def test_arm_launch_monitor_true_reads_the_bringup_config_last(monkeypatch):
    declared, nodes, _ = _run_launch(monkeypatch, "arm.launch.py", robot="iiwa14", monitor="true")
    assert declared["monitor"] == "false"
    _, generated, gains, monitor = nodes["ros2_control_node"].kwargs["parameters"]
    assert Path(monitor) == repository_file(*MONITOR_CONFIG)
    assert COLLISION_MONITOR_CONTROLLER in yaml.safe_load(Path(generated).read_text())
    chain = nodes["spawner_collision_monitor_controller"].kwargs["arguments"]
    assert chain[:3] == [COLLISION_MONITOR_CONTROLLER, COMPUTED_TORQUE_CONTROLLER, "joint_trajectory_controller"]
