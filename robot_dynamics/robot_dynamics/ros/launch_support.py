"""What the launch files compute, without the launch packages: robot text and node parameters.

``launch/sim.launch.py`` and ``launch/dynamics.launch.py`` call these functions from an
OpaqueFunction with the launch arguments as plain strings, so a bad argument (unknown robot or
controller, a goal of the wrong length) stops the launch with one clear message before any
node starts, and the logic is tested without ROS.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model import load_urdf, read_description, robot_files
from .params import validate

__all__ = ["robot_description", "parse_vector", "sim_parameters", "dynamics_parameters", "as_bool"]


def as_bool(text: str) -> bool:
    """A launch argument as a boolean (true/false, 1/0, yes/no, on/off)."""
    t = str(text).strip().lower()
    if t in ("true", "1", "yes", "on"):
        return True
    if t in ("false", "0", "no", "off"):
        return False
    raise InputError(f"expected true or false, got {text!r}")


def robot_description(robot: str = "", urdf: str = "", drivetrain: str = "") -> tuple[str, str]:
    """(URDF text, drive-train YAML path or "") of a bundled robot or of a URDF/xacro file.

    ``urdf`` wins over ``robot``; ``drivetrain`` defaults to the bundled robot's own YAML.

    Raises:
        UnknownNameError: unknown bundled robot (lists them). ModelError: unreadable file.
    """
    if urdf:
        return read_description(urdf), drivetrain
    path, sidecar = robot_files(robot)
    return read_description(path), drivetrain or (str(sidecar) if sidecar is not None else "")


def parse_vector(text: str, what: str) -> list[float]:
    """``"0.5, -0.4 0.3"`` -> [0.5, -0.4, 0.3]; "" -> []."""
    parts = [p for p in str(text).replace(",", " ").split() if p]
    try:
        return [float(p) for p in parts]
    except ValueError:
        raise InputError(f"{what}: expected numbers separated by commas, got {text!r}") from None


def _config(share: str | os.PathLike[str], node: str) -> str:
    return str(Path(share) / "config" / f"{node}_node.yaml")


def sim_parameters(
    share: str | os.PathLike[str],
    robot: str = "puma560",
    urdf: str = "",
    drivetrain: str = "",
    controller: str = "computed_torque",
    goal: str = "",
    initial_positions: str = "",
) -> dict[str, list[Any]]:
    """Parameter lists (config YAML path, then overrides) of the nodes of sim.launch.py.

    Returns:
        ``{"robot_state_publisher": [...], "simulator": [...], "controller": [...],
        "trajectory": [...], "dynamics": [...], "fixed_frame": [base link name]}``; the
        robot_description entries are the URDF text.

    Raises:
        RobotDynamicsError subclasses: unknown robot/controller, a goal or initial positions
        that do not fit the robot.
    """
    description, drivetrain = robot_description(robot, urdf, drivetrain)
    model = load_urdf(description, drivetrain=drivetrain or None)
    common: dict[str, Any] = {"robot_description": description, "drivetrain": drivetrain}
    goal_v = parse_vector(goal, "goal")
    q0 = parse_vector(initial_positions, "initial_positions")
    for what, v in (("goal", goal_v), ("initial_positions", q0)):
        if v and len(v) != model.nq:
            raise InputError(f"{what}: expected {model.nq} values ordered as {list(model.joint_names)}, got {len(v)}")
    overrides: dict[str, dict[str, Any]] = {
        "simulator": {"initial_positions": q0} if q0 else {},
        "controller": {"controller": controller},
        "trajectory": {"initial_goal": goal_v} if goal_v else {},
        "dynamics": {},
    }
    out: dict[str, list[Any]] = {
        "robot_state_publisher": [{"robot_description": description}],
        "fixed_frame": [model.base_link],
    }
    for node, extra in overrides.items():
        validate(node, dict(common, **extra))  # fail at launch, not inside a node
        out[node] = [_config(share, node), dict(common, **extra)]
    return out


def dynamics_parameters(share: str | os.PathLike[str], urdf: str = "", drivetrain: str = "") -> list[Any]:
    """Parameter list of the dynamics node beside a real arm (dynamics.launch.py).

    With ``urdf`` the description is read from the file; without, the node takes it from the
    ``/robot_description`` topic that the arm's robot_state_publisher publishes.
    """
    params: dict[str, Any] = {"drivetrain": drivetrain}
    if urdf:
        params["robot_description"] = read_description(urdf)
        load_urdf(params["robot_description"], drivetrain=drivetrain or None)  # fail early
    validate("dynamics", params)
    return [_config(share, "dynamics"), params]
