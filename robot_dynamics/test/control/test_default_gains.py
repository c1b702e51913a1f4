"""One default bandwidth, read everywhere; the launched controller node's gains from config/controllers.yaml."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml
from repo_files import repository_file

import robot_dynamics as rd
from robot_dynamics.control import DEFAULT_OMEGA, ComputedTorque, PDGravity, build_controller
from robot_dynamics.ros.launch_support import controller_gains, sim_parameters
from robot_dynamics.ros.params import NODE_PARAMETERS, validate
from robot_dynamics.study.description import Study

PKG = Path(__file__).resolve().parents[2]


def test_the_default_bandwidth_is_20_rad_s_and_every_law_reads_it():
    assert DEFAULT_OMEGA == 20.0
    model = rd.load_robot("puma560")
    ct = ComputedTorque(model)
    np.testing.assert_array_equal(ct.kp, np.full(model.nq, 400.0))  # omega^2
    np.testing.assert_array_equal(ct.kd, np.full(model.nq, 40.0))   # 2 xi omega, xi = 1
    for name in ("computed_torque", "pd_gravity", "lqr", "task_computed_torque"):
        default, explicit = build_controller(model, name), build_controller(model, name, omega=20.0)
        for gain in ("kp", "kd"):
            if hasattr(default, gain):
                np.testing.assert_array_equal(getattr(default, gain), getattr(explicit, gain), err_msg=f"{name}.{gain}")
    np.testing.assert_array_equal(PDGravity(model).kp, PDGravity(model, omega=20.0).kp)


def test_the_node_the_study_and_the_command_line_default_to_it():
    spec = {p.name: p for p in NODE_PARAMETERS["controller"]}["gains.omega"]
    assert spec.default == DEFAULT_OMEGA
    assert Study(name="s").controller["omega"] == DEFAULT_OMEGA
    from robot_dynamics.cli import build_parser

    args = build_parser().parse_args(["simulate"])
    assert args.omega == DEFAULT_OMEGA


def test_the_cpp_computed_torque_controller_defaults_to_it():
    # generate_parameter_library's YAML cannot import the library's constant: held equal here
    spec = yaml.safe_load(repository_file("robot_dynamics_control", "src", "computed_torque_controller.yaml").read_text())
    assert spec["computed_torque_controller"]["omega"]["default_value"] == [DEFAULT_OMEGA]


def test_the_launched_controller_node_takes_its_gains_from_config_controllers_yaml():
    assert controller_gains(PKG) == {"gains.omega": 20.0}
    config, overrides = sim_parameters(PKG, robot="planar2")["controller"]
    assert Path(config).name == "controller_node.yaml" and overrides["gains.omega"] == 20.0
    assert "gains" not in yaml.safe_load(Path(config).read_text())["/**"]["ros__parameters"]


def test_a_changed_gains_file_reaches_the_node_and_a_bad_one_is_refused(tmp_path):
    (tmp_path / "config").mkdir()
    gains = tmp_path / "config" / "controllers.yaml"
    gains.write_text("/**:\n  ros__parameters:\n    gains:\n      omega: 35.0\n      kp: [1.0, 2.0]\n      kd: [0.5, 0.5]\n")
    got = controller_gains(tmp_path)
    assert got == {"gains.omega": 35.0, "gains.kp": [1.0, 2.0], "gains.kd": [0.5, 0.5]}
    assert validate("controller", got)["gains.omega"] == 35.0
    assert controller_gains(tmp_path / "elsewhere") == {}
    gains.write_text("/**:\n  ros__parameters:\n    rate: 100.0\n")
    with pytest.raises(rd.InputError, match="gains alone"):
        controller_gains(tmp_path)
    gains.write_text("gains: {omega: 1.0}\n")
    with pytest.raises(rd.InputError, match="parameters file"):
        controller_gains(tmp_path)
