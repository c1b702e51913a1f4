"""Node parameter tables, their validation, and the config/*_node.yaml files that set them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from robot_dynamics.ros.messages import message_class
from robot_dynamics.ros.motion import TrajectoryStreamer
from robot_dynamics.ros.params import NODE_PARAMETERS, TYPES, defaults, service_history, validate

CONFIG = Path(__file__).resolve().parents[2] / "config"
NODES = ("dynamics", "trajectory", "controller", "simulator")


def _flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


@pytest.mark.parametrize("node", NODES)
def test_config_file_is_a_valid_ros_params_file(node):
    data = yaml.safe_load((CONFIG / f"{node}_node.yaml").read_text())
    assert list(data) == ["/**"] and list(data["/**"]) == ["ros__parameters"]
    values = _flatten(data["/**"]["ros__parameters"])
    specs = {p.name: p for p in NODE_PARAMETERS[node]}
    for name, value in values.items():
        # ROS 2 parameters are statically typed: a double written as 2 would be an integer.
        if specs[name].type == "double":
            assert isinstance(value, float), f"{node}.{name}: write {value} as a float"
        if specs[name].type == "double_array":
            assert all(isinstance(v, float) for v in value), f"{node}.{name}: floats only"
    out = validate(node, values)
    assert set(out) == set(specs)


@pytest.mark.parametrize("node", NODES)
def test_tables_are_consistent(node):
    names = [p.name for p in NODE_PARAMETERS[node]]
    assert len(names) == len(set(names))
    for p in NODE_PARAMETERS[node]:
        assert p.type in TYPES and p.description
        if p.default is not None:
            validate(node, {p.name: p.default})  # every default is itself valid
    assert validate(node, {}) == defaults(node)


@pytest.mark.parametrize(
    "node, values, match",
    [
        ("controller", {"controller": "h_infinity"}, "Valid choices"),
        ("controller", {"rate": 0.0}, "must be >= 1.0"),
        ("controller", {"rate": "fast"}, "must be of type double"),
        ("controller", {"gains.kp": [1.0, float("nan")]}, "finite"),
        ("simulator", {"substeps": 2.5}, "must be of type integer"),
        ("simulator", {"friction": 1}, "must be of type bool"),
        ("trajectory", {"profile": "sine"}, "Valid choices"),
        ("dynamics", {"gravity": [0.0, -9.81]}, "3 numbers"),
        ("dynamics", {"robot_descripton": "<robot/>"}, "unknown parameters ['robot_descripton']"),
        ("nodeX", {}, "Valid nodes"),
    ],
)
def test_invalid_values_are_rejected_with_the_valid_choices(node, values, match):
    with pytest.raises(rd.InputError) as err:
        validate(node, values)
    assert match in str(err.value)


def test_initial_goal_of_the_trajectory_node():
    model = rd.load_robot("planar2")
    s = TrajectoryStreamer(model)
    with pytest.raises(rd.InputError, match="initial_goal: expected 2 values"):
        s.set_initial_goal([1.0], 0.5)
    s.set_initial_goal([0.4, -0.2], 0.5)
    assert s.initial_goal_due(0.0)[0] is None  # no state yet
    JointState = message_class("sensor_msgs/JointState")
    s.on_joint_state(JointState(name=["shoulder", "elbow"], position=[0.0, 0.0]))
    assert s.initial_goal_due(1.0) == (None, "initial goal waiting")
    traj, status = s.initial_goal_due(1.6)
    assert traj is not None and "initial goal" in status
    np.testing.assert_allclose(s.reference(1.6 + traj.duration).q, [0.4, -0.2])
    assert s.initial_goal_due(9.0) == (None, "no initial goal pending")  # only once


@pytest.mark.parametrize("depth, history", [(0, ("keep_all", 0)), (1, ("keep_last", 1)), (10, ("keep_last", 10)),
                                            (1000, ("keep_last", 1000)), (1_000_000, ("keep_last", 1_000_000))])
def test_service_history_from_the_queue_depth(depth, history):
    assert service_history(depth) == history


@pytest.mark.parametrize("depth", [-1, 1_000_001, 2.0, True, "10", None])
def test_a_bad_service_queue_depth_is_refused_naming_the_parameter(depth):
    message = r"parameter 'service_queue_depth' must be an integer in \[0, 1000000\] \(0 keeps all\)"
    with pytest.raises(rd.InputError, match=message):
        service_history(depth)


@pytest.mark.parametrize("node", ["dynamics", "trajectory"])
def test_the_serving_nodes_keep_a_deep_service_history_by_default(node):
    # rclpy's services default keeps 10 requests: 3 client processes sending 200 calls each at
    # once lost 150-199 of each client's calls at 10, none at 1000 (test_ros_nodes' burst test)
    assert defaults(node)["service_queue_depth"] == 1000
    for bad, match in ((-1, "must be >= 0"), (2_000_000, "must be <= 1000000"), (1.5, "type integer")):
        with pytest.raises(rd.InputError, match=match):
            validate(node, {"service_queue_depth": bad})
