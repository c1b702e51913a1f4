"""What the launch files compute, without the launch packages: robot text and node parameters.

``launch/sim.launch.py`` and ``launch/dynamics.launch.py`` call these functions from an
OpaqueFunction with the launch arguments as plain strings, so a bad argument (unknown robot or
controller, a goal of the wrong length) stops the launch with one clear message before any
node starts, and the logic is tested without ROS.
"""

from __future__ import annotations

import math
import os
import tempfile
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io._files import write_bytes_atomic
from ..model import load_urdf, read_description, robot_files
from .params import validate
from .ros2_control import (
    COMPUTED_TORQUE_CONTROLLER,
    CONTROL,
    JOINT_COMMANDS_TOPIC,
    JOINT_STATES_TOPIC,
    TRAJECTORY_CONTROLLER,
    controllers_yaml,
    has_ros2_control,
    ros2_control_block,
    with_ros2_control,
)

__all__ = ["robot_description", "parse_vector", "sim_parameters", "arm_parameters", "dynamics_parameters",
           "as_bool", "parse_pairs", "write_parameter_file", "text_parameters", "node_actions", "rviz_action",
           "state_publisher_action", "LAUNCH_ARGUMENTS", "declare_arguments", "argument_values"]


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


def text_parameters(params: list[Any], parameter_value: Any) -> list[Any]:
    """A node's parameter list with the URDF text wrapped as an explicit string parameter.

    ``parameter_value`` is launch_ros' ParameterValue (passed in: this module imports no ROS);
    without it launch would try to read the URDF text as YAML.
    """
    out = []
    for p in params:
        if isinstance(p, dict):
            p = {k: (parameter_value(v, value_type=str) if k == "robot_description" else v) for k, v in p.items()}
        out.append(p)
    return out


def node_actions(node: Any, parameter_value: Any, params: dict[str, Any], names: tuple[str, ...],
                 remappings: dict[str, list[tuple[str, str]]] | None = None) -> list[Any]:
    """launch_ros Node actions of our nodes ``names`` (executable = node name), with their
    parameter lists from ``params`` and, where ``remappings`` names the node, its remap pairs;
    ``node`` and ``parameter_value`` are launch_ros' Node and ParameterValue (passed in: this
    module imports no ROS)."""
    remappings = remappings or {}
    return [node(package="robot_dynamics", executable=n, name=n, output="screen",
                 parameters=text_parameters(params[n], parameter_value),
                 **({"remappings": remappings[n]} if n in remappings else {})) for n in names]


def state_publisher_action(node: Any, parameter_value: Any, params: dict[str, Any], condition: Any = None) -> Any:
    """The robot_state_publisher Node action with the robot's description from ``params``."""
    return node(package="robot_state_publisher", executable="robot_state_publisher", name="robot_state_publisher",
                output="screen", parameters=text_parameters(params["robot_state_publisher"], parameter_value),
                condition=condition)


def rviz_action(node: Any, params: dict[str, Any], config: str, condition: Any) -> Any:
    """The rviz2 Node action: ``config`` file, fixed frame the robot's base link."""
    return node(package="rviz2", executable="rviz2", name="rviz2", output="log",
                arguments=["-d", config, "-f", params["fixed_frame"][0]], condition=condition)


# Every argument of sim.launch.py and arm.launch.py: name -> (default, description); "{share}"
# in a default is the package's share folder.
LAUNCH_ARGUMENTS: dict[str, tuple[str, str]] = {
    "robot": ("puma560", "Bundled robot: planar2, puma560, rx90, iiwa14, three_dof_geared"),
    "urdf": ("", "URDF/xacro file instead of a bundled robot"),
    "drivetrain": ("", "Drive-train YAML (default: the bundled robot's own)"),
    # arm.launch.py's defaults: the arm's dynamics and its computed-torque controller both inside
    # controller_manager's cycle (no topic in the loop)
    "control": ("in_loop", "in_loop (robot_dynamics_control's computed-torque controller inside controller_manager, "
                           "joint_trajectory_controller chained in front) or node (our controller node commanding "
                           "effort_controllers/JointGroupEffortController)"),
    "hardware": ("sim", "sim (the arm's dynamics inside controller_manager: robot_dynamics_control/SimulatedSystem), "
                        "topic (our simulator node through TopicBasedSystem), mock (mock_components/GenericSystem), "
                        "urdf (the URDF's own <ros2_control> block) or a vendor's plugin package/Class"),
    "hardware_params": ("", "name=value pairs for the hardware plugin, separated by commas"),
    "update_rate": ("500", "controller_manager's rate [Hz] (and the simulated hardware's)"),
    "controller": ("computed_torque", "pid, pd_gravity, computed_torque, lqr, task_pid, task_computed_torque"),
    "goal": ("", "Goal positions (comma list, model joint order) to move to after start"),
    "initial_positions": ("", "Initial positions of the simulated arm (comma list)"),
    "use_rviz": ("true", "Start rviz2"),
    "use_robot_state_publisher": ("true", "Start robot_state_publisher (false where something else publishes "
                                          "/robot_description and /tf)"),
    "rviz_config": ("{share}/rviz/robot_dynamics.rviz", "rviz2 configuration"),
}


def declare_arguments(declare: Any, share: str, names: tuple[str, ...]) -> list[Any]:
    """``declare`` (launch's DeclareLaunchArgument, passed in) of each of ``names`` from
    :data:`LAUNCH_ARGUMENTS`."""
    return [declare(n, default_value=LAUNCH_ARGUMENTS[n][0].replace("{share}", share),
                    description=LAUNCH_ARGUMENTS[n][1]) for n in names]


def argument_values(configuration: Any, context: Any, names: tuple[str, ...]) -> dict[str, str]:
    """The launch arguments ``names`` as strings in ``context`` (``configuration``: launch's
    LaunchConfiguration, passed in)."""
    return {n: configuration(n).perform(context) for n in names}


def parse_pairs(text: str, what: str) -> dict[str, str]:
    """``"a=1, b=x"`` -> {"a": "1", "b": "x"}; "" -> {}."""
    out: dict[str, str] = {}
    for item in (p.strip() for p in str(text).split(",")):
        if not item:
            continue
        key, found, value = item.partition("=")
        if not found or not key.strip():
            raise InputError(f"{what}: expected name=value pairs separated by commas, got {item!r}")
        out[key.strip()] = value.strip()
    return out


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
    return _node_parameters(share, description, drivetrain, controller, goal, initial_positions)[0]


def _node_parameters(
    share: str | os.PathLike[str], description: str, drivetrain: str, controller: str, goal: str,
    initial_positions: str,
) -> tuple[dict[str, list[Any]], Any, list[float]]:
    """sim_parameters' work on a read description: (parameter lists, model, initial positions)."""
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
    return out, model, q0


def arm_parameters(
    share: str | os.PathLike[str],
    robot: str = "puma560",
    urdf: str = "",
    drivetrain: str = "",
    hardware: str = LAUNCH_ARGUMENTS["hardware"][0],
    hardware_params: str = "",
    controller: str = "computed_torque",
    goal: str = "",
    initial_positions: str = "",
    update_rate: str = "500",
    control: str = LAUNCH_ARGUMENTS["control"][0],
) -> dict[str, Any]:
    """What arm.launch.py starts: the arm brought up through ros2_control.

    ``hardware``: ``sim`` (robot_dynamics_control's SimulatedSystem: the arm's dynamics integrated
    inside controller_manager's cycle, 1 ms RK4 steps at most), ``topic`` (the simulator node
    behind topic_based_ros2_control's TopicBasedSystem), ``mock`` (mock_components/GenericSystem),
    ``urdf`` (the URDF's own ``<ros2_control>`` block: a vendor's description) or a vendor's plugin
    ``package/Class`` (block generated for it); ``hardware_params``: ``name=value`` pairs for the
    plugin (they override the generated ones).

    ``control``: ``in_loop`` (the computed-torque controller plugin inside controller_manager,
    joint_trajectory_controller chained in front of it; the trajectory node's plans go to
    joint_trajectory_controller, ``controller`` is not used) or ``node`` (the controller node
    ``controller`` commanding effort_controllers/JointGroupEffortController).

    Returns:
        ``{"robot_description": URDF text with its <ros2_control> block, "controllers_yaml":
        the controller manager's YAML text, "spawners": the controllers to spawn, one list per
        spawner (a chain in its activation order), "controller_manager_remappings": remap pairs
        of ros2_control_node (its ``~/robot_description`` topic, which Jazzy's reads, to
        robot_state_publisher's), "remappings": per node of ours, its remap pairs, "simulator"
        and "controller": parameter lists or None (not started), "trajectory"/"dynamics"/
        "robot_state_publisher": parameter lists as in :func:`sim_parameters`, "fixed_frame":
        [base link]}``.

    Raises:
        RobotDynamicsError subclasses: unknown robot/controller/hardware/control, a URDF without
        (with) a ros2_control block for hardware urdf (for the others), a bad goal or rate.
    """
    description, drivetrain = robot_description(robot, urdf, drivetrain)
    params, model, q0 = _node_parameters(share, description, drivetrain, controller, goal, initial_positions)
    rate, mode = _rate_and_control(update_rate, control)
    hw = str(hardware).strip()
    # 1 ms RK4 steps at most, for the simulator node and the in-process plant alike
    substeps = max(1, math.ceil(1000.0 / rate)) if rate > 0 else 1
    full = _with_hardware(description, model, hw, hardware_params, substeps, q0, drivetrain)
    out: dict[str, Any] = {
        "robot_description": full,
        "controllers_yaml": controllers_yaml(model, rate, control=mode, description=full, drivetrain=drivetrain),
        "robot_state_publisher": [{"robot_description": full}],
        "fixed_frame": params["fixed_frame"],
        "simulator": None,
        "controller": params["controller"] if mode == "node" else None,
        "controller_manager_remappings": [("~/robot_description", "/robot_description")],
        # in the loop, the trajectory node's plans go to joint_trajectory_controller
        "remappings": {} if mode == "node" else
        {"trajectory": [("~/joint_trajectory", f"/{TRAJECTORY_CONTROLLER}/joint_trajectory")]},
        "spawners": _spawners(mode),
    }
    for node in ("trajectory", "dynamics"):
        out[node] = params[node]
    if hw == "topic":
        out["simulator"] = _topic_simulator(params["simulator"], rate, substeps)
    return out


def _rate_and_control(update_rate: str, control: str) -> tuple[int, str]:
    """controller_manager's rate [Hz] and the control path (one of ``CONTROL``) from their launch
    arguments; InputError otherwise."""
    try:
        rate = int(str(update_rate).strip())
    except ValueError:
        raise InputError(f"update_rate: expected an integer number of Hz, got {update_rate!r}") from None
    mode = str(control).strip()
    if mode not in CONTROL:
        raise InputError(f"control: expected one of {list(CONTROL)}, got {control!r}")
    return rate, mode


def _spawners(mode: str) -> list[list[str]]:
    """The controllers to spawn for control ``mode``, one list per spawner."""
    if mode == "node":
        return [["joint_state_broadcaster"], ["effort_controller"]]
    # the chain in its activation order: the computed-torque controller first, then
    # joint_trajectory_controller, which claims its reference interfaces
    return [["joint_state_broadcaster"], [COMPUTED_TORQUE_CONTROLLER, TRAJECTORY_CONTROLLER]]


def _with_hardware(description: str, model: Any, hw: str, hardware_params: str, substeps: int, q0: list[float],
                   drivetrain: str) -> str:
    """The URDF text with the ``<ros2_control>`` block of hardware ``hw``: the URDF's own for
    ``urdf`` (InputError when it has none), else one generated with ``hardware_params`` (and
    ``substeps`` for ``sim``)."""
    if hw == "urdf":
        if not has_ros2_control(description):
            raise InputError("hardware:=urdf: the URDF has no <ros2_control> block; choose sim, topic, mock or a plugin")
        return description
    extra = parse_pairs(hardware_params, "hardware_params")
    if hw == "sim":
        extra = {"substeps": str(substeps), **extra}
    block = ros2_control_block(model, hw, initial_positions=q0 or None, hardware_params=extra,
                               drivetrain=drivetrain if hw == "sim" else "")
    return with_ros2_control(description, block)


def _topic_simulator(simulator: list[Any], rate: int, substeps: int) -> list[Any]:
    """The simulator node's parameter list behind TopicBasedSystem: its commands and states on
    the hardware's topics at controller_manager's ``rate`` [Hz]."""
    config, sim = simulator
    # the simulated hardware's cycle is controller_manager's, as a real arm's driver runs at
    # the controller manager's rate
    sim = dict(sim, command_type="joint_state", command_topic=JOINT_COMMANDS_TOPIC,
               joint_states_topic=JOINT_STATES_TOPIC, rate=float(rate), substeps=substeps)
    validate("simulator", sim)
    return [config, sim]


def write_parameter_file(text: str, name: str) -> str:
    """Write a ROS parameter YAML into a new private temporary folder (atomically); its path.

    The launch process owns the folder; the file is read once by the node it is given to.
    """
    folder = tempfile.mkdtemp(prefix="robot_dynamics_launch_")
    return str(write_bytes_atomic(Path(folder) / name, text))


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
