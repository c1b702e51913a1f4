"""The `ros2 service call` examples of docs/ros2.md and of the README's ROS 2 quick start give
the answers they state.

Each call's YAML request is parsed as `ros2 service call` parses it, filled into a request of
the real layout and answered by the same objects the nodes use (dynamics services on the
PUMA 560 of sim.launch.py, with its drive-train YAML; the trajectory node's planner starting
at the zero position the simulator starts from). The `# field: [...]` lines after the call
are the expected answer.
"""

from __future__ import annotations

import re
from functools import partial

import numpy as np
import pytest
import yaml
from repo_files import repository_file

import robot_dynamics as rd
from robot_dynamics.ros.logic import DynamicsServices
from robot_dynamics.ros.messages import SERVICE_NAMES, message_class, service_class
from robot_dynamics.ros.motion import TrajectoryStreamer
from robot_dynamics.ros.params import defaults

CALL = re.compile(
    r"ros2 service call (?P<service>/\w+/\w+) robot_dynamics_interfaces/srv/(?P<type>\w+) \\\n\s*"
    r'"(?P<request>.*?)"\n(?P<answer>(?:# [^\n]*\n)+)',
    re.S,
)


def _fill(msg, data):
    """Set message fields from a dict, recursing into nested messages and lists of them."""
    for key, value in data.items():
        current = getattr(msg, key)
        if isinstance(value, dict):
            _fill(current, value)
        elif isinstance(value, list) and value and isinstance(value[0], dict):
            items = []
            for v in value:
                item = message_class("trajectory_msgs/JointTrajectoryPoint")()
                _fill(item, v)
                items.append(item)
            setattr(msg, key, items)
        else:
            setattr(msg, key, value)
    return msg


def _readme_quick_start() -> str:
    """The README's "ROS 2 quick start" section."""
    text = repository_file("README.md").read_text(encoding="utf-8")
    return text.split("\n## ROS 2 quick start\n", 1)[1].split("\n## ", 1)[0]


def _ros_page() -> str:
    """The documentation's ROS 2 bring-up page, docs/ros2.md."""
    return repository_file("docs", "ros2.md").read_text(encoding="utf-8")


def _calls():
    """Every documented call, once: the ROS 2 page's, then the README's (where it differs)."""
    calls = [m.groupdict() for text in (_ros_page(), _readme_quick_start()) for m in CALL.finditer(text)]
    return [dict(c) for c in dict.fromkeys(tuple(sorted(c.items())) for c in calls)]


def test_the_doc_has_an_example_per_service():
    types = {m.group("type") for m in CALL.finditer(_ros_page())}
    assert types == set(SERVICE_NAMES)  # InverseDynamics, ... PlanTrajectory, TimeOptimal


def test_the_readme_has_a_torque_query():
    assert [m.group("type") for m in CALL.finditer(_readme_quick_start())] == ["InverseDynamics"]


@pytest.mark.parametrize("call", _calls(), ids=lambda c: c["type"])
def test_documented_answers(call):
    model = rd.load_robot("puma560")
    srv = service_class(call["type"])
    request = _fill(srv.Request(), yaml.safe_load("{" + call["request"].strip()[1:-1] + "}"))
    if call["service"].startswith("/dynamics/"):
        services = DynamicsServices(model, friction=defaults("dynamics")["friction"])
        method = getattr(services, call["service"].split("/")[-1])
        args = (message_class("trajectory_msgs/JointTrajectoryPoint"),) if call["type"] == "TrajectoryEffort" else ()
        response = method(request, srv.Response(), *args)
    else:
        streamer = TrajectoryStreamer(model)
        streamer.on_joint_state(message_class("sensor_msgs/JointState")(name=list(model.joint_names),
                                                                         position=[0.0] * 6))
        handle = streamer.handle_time_optimal if call["type"] == "TimeOptimal" else partial(streamer.handle_plan,
                                                                                            now=0.0)
        response = handle(request, srv.Response(), message_class("trajectory_msgs/JointTrajectoryPoint"))
    answer = call["answer"].replace("\n# ", " ")
    checked = 0
    for field, numbers in re.findall(r"(\w+)(?: \([^)]*\))?: \[([-\d., ]+)(?:, \.\.\.)?\]", answer):
        expected = [float(x) for x in numbers.split(",") if x.strip() and x.strip() != "..."]
        got = np.asarray(getattr(response, field), dtype=float)[: len(expected)]
        np.testing.assert_allclose(got, expected, atol=6e-4, err_msg=field)
        checked += 1
    for field, value in re.findall(r"(success|feasible): (true|false)", answer):
        assert getattr(response, field) is (value == "true"), response.message
        checked += 1
    for text in re.findall(r'message: "([^"]*?)(?:\.\.\.)?"', answer):
        assert response.message.startswith(text.rstrip(". ")), response.message
        checked += 1
    if call["type"] == "PlanTrajectory":
        n = int(re.search(r"(\d+) points", answer).group(1))
        assert len(response.trajectory.points) == n and response.duration == pytest.approx(2.0)
        checked += 1
    if call["type"] == "TimeOptimal":  # the points, the duration and the peak effort ratio printed
        n = int(re.search(r"(\d+) points", answer).group(1))
        assert len(response.trajectory.points) == n
        for field, value in re.findall(r"\b(duration|peak_torque_ratio): ([\d.]+)", answer):
            assert getattr(response, field) == pytest.approx(float(value), abs=6e-4), field
            checked += 1
    if call["type"] == "MassMatrix":
        assert response.size == 6
    if call["type"] == "Linearize":  # sizes, and rows of the row-major A and B (1-based, a prefix)
        for field, value in re.findall(r"\b([ab]_(?:rows|cols)): (\d+)", answer):
            assert getattr(response, field) == int(value), field
            checked += 1
        for row, matrix, numbers in re.findall(r"row (\d+) of ([AB]) = \[([-\d., ]+)(?:, \.\.\.)?\]", answer):
            field = matrix.lower()
            values = np.asarray(getattr(response, field)).reshape(getattr(response, f"{field}_rows"), -1)
            expected = [float(x) for x in numbers.split(",") if x.strip() and x.strip() != "..."]
            np.testing.assert_allclose(values[int(row) - 1, : len(expected)], expected, atol=6e-4, err_msg=matrix)
            checked += 1
        assert checked >= 8
    assert checked >= 2, f"nothing checked for {call['type']}"
