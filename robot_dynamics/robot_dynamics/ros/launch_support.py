"""What the launch files compute, without the launch packages: robot text and node parameters.

``launch/sim.launch.py``, ``launch/dynamics.launch.py`` and robot_dynamics_bringup's
``launch/arm.launch.py`` call these functions from an OpaqueFunction with the launch arguments
as plain strings, so a bad argument (unknown robot or controller, a goal of the wrong length)
stops the launch with one clear message before any node starts, and the logic is tested
without ROS.
"""

from __future__ import annotations

import math
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io._files import write_bytes_atomic
from ..model import load_urdf, read_description, robot_files
from .params import validate
from .ros2_control import (
    COLLISION_MONITOR_CONTROLLER,
    COMPUTED_TORQUE_CONTROLLER,
    CONTROL,
    IN_LOOP_CONTROLLERS,
    JOINT_COMMANDS_TOPIC,
    JOINT_STATES_TOPIC,
    TRAJECTORY_CONTROLLER,
    UPDATE_RATE,
    HARDWARE,
    controllers_yaml,
    engine_model_text,
    hardware_plugin,
    has_ros2_control,
    robot_models,
    ros2_control_block,
    with_ros2_control,
)

__all__ = ["robot_description", "robot_model_text", "parse_vector", "sim_parameters", "arm_parameters", "dynamics_parameters",
           "as_bool", "parse_pairs", "write_parameter_file", "text_parameters", "node_actions", "rviz_action",
           "state_publisher_action", "LAUNCH_ARGUMENTS", "declare_arguments", "argument_values", "spawner_arguments",
           "exit_message", "HARDWARE_NOT_LOADED"]


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


def robot_model_text(robot: str = "", urdf: str = "", drivetrain: str = "", *, strict: bool = True,
                     allow_no_effort_limit: bool = False) -> str:
    """The ``robot_model`` parameter of robot_dynamics_control's controllers and SimulatedSystem:
    the engine's model text of a bundled robot or of a URDF/xacro file (with ``drivetrain``, default
    the bundled robot's own), made by the package's one loader and, with ``strict``, its checks
    (what ``robot-dynamics engine-model --urdf URDF --drivetrain YAML --strict
    [--allow-no-effort-limit]`` prints). For a launch file of one's own::

        from launch_ros.parameter_descriptions import ParameterValue
        model = ParameterValue(robot_model_text(urdf="/path/arm.urdf", drivetrain="/path/drive.yaml"), value_type=str)
        # the controllers' parameters: {"robot_model": model, ...}

    Raises:
        UnknownNameError, ModelError: an unknown robot, an unreadable file, a model failing the
        strict checks (one line naming each issue).
    """
    description, drivetrain = robot_description(robot, urdf, drivetrain)
    model = load_urdf(description, drivetrain=drivetrain or None)
    return engine_model_text(model, strict=strict, allow_no_effort_limit=allow_no_effort_limit)


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


# Every argument of sim.launch.py and robot_dynamics_bringup's arm.launch.py: name -> (default,
# description); "{share}" in a default is robot_dynamics' share folder, "{bringup}"
# robot_dynamics_bringup's.
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
    "update_rate": (str(UPDATE_RATE), "controller_manager's rate [Hz] (and the simulated hardware's)"),
    "controller": ("computed_torque", "sim.launch.py and control:=node: our controller node's law (pid, pd_gravity, "
                                      "computed_torque, lqr, task_pid, task_computed_torque); control:=in_loop: the "
                                      "controller active at start (gravity_compensation, pd_gravity, computed_torque; "
                                      "the other two are loaded inactive)"),
    "controllers_file": ("{bringup}/config/controllers.yaml",
                         "The controllers' gains and options (a copy of robot_dynamics_bringup's config/controllers.yaml "
                         "with your arm's values)"),
    "monitor": ("false", "arm.launch.py with control:=in_loop controller:=computed_torque: true puts robot_dynamics_control's "
                         "collision monitor between the computed-torque controller and the hardware, set by "
                         "robot_dynamics_bringup's config/collision_monitor.yaml; or the path of your copy of that file"),
    "goal": ("", "Goal positions (comma list, model joint order) to move to after start"),
    "initial_positions": ("", "Initial positions of the simulated arm (comma list)"),
    "use_rviz": ("true", "Start rviz2"),
    "use_robot_state_publisher": ("true", "Start robot_state_publisher (false where something else publishes "
                                          "/robot_description and /tf)"),
    "rviz_config": ("{share}/rviz/robot_dynamics.rviz", "rviz2 configuration"),
}


def declare_arguments(declare: Any, share: str, names: tuple[str, ...], bringup: str = "") -> list[Any]:
    """``declare`` (launch's DeclareLaunchArgument, passed in) of each of ``names`` from
    :data:`LAUNCH_ARGUMENTS`; ``share`` and ``bringup``: the share folders of robot_dynamics and
    robot_dynamics_bringup."""
    return [declare(n, default_value=LAUNCH_ARGUMENTS[n][0].replace("{share}", share).replace("{bringup}", bringup),
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


def controller_gains(share: str | os.PathLike[str]) -> dict[str, Any]:
    """The controller node's gains from ``share``/config/controllers.yaml (a parameters file,
    ``/**: ros__parameters: gains: ...``) as its parameters (``gains.omega`` [rad/s],
    ``gains.kp``, ...); {} when the file is absent (the library's defaults).

    Raises:
        InputError: the file is not a parameters file of that form.
    """
    import yaml

    path = Path(share) / "config" / "controllers.yaml"
    if not path.is_file():
        return {}
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        params = data["/**"]["ros__parameters"]
        gains = params.get("gains") or {}
    except (yaml.YAMLError, OSError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"{path}: expected a parameters file '/**: ros__parameters: gains: ...' ({exc})") from None
    if set(params) != {"gains"} or not isinstance(gains, dict):
        raise InputError(f"{path}: holds the gains alone ('gains:'), got {sorted(params)}")
    return {f"gains.{name}": value for name, value in gains.items()}


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
        "controller": {**controller_gains(share), "controller": controller},
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
    update_rate: str = str(UPDATE_RATE),
    control: str = LAUNCH_ARGUMENTS["control"][0],
    controllers_file: str = "",
    monitor: str = "false",
) -> dict[str, Any]:
    """What robot_dynamics_bringup's arm.launch.py starts: the arm brought up through ros2_control.

    ``hardware``: ``sim`` (robot_dynamics_control's SimulatedSystem: the arm's dynamics integrated
    inside controller_manager's cycle, 1 ms RK4 steps at most), ``topic`` (the simulator node
    behind topic_based_ros2_control's TopicBasedSystem), ``mock`` (mock_components/GenericSystem),
    ``urdf`` (the URDF's own ``<ros2_control>`` block: a vendor's description) or a vendor's plugin
    ``package/Class`` (block generated for it); ``hardware_params``: ``name=value`` pairs for the
    plugin (they override the generated ones).

    ``control``: ``in_loop`` (robot_dynamics_control's three controllers loaded into
    controller_manager, ``controller`` the one active at start: ``gravity_compensation``,
    ``pd_gravity`` or ``computed_torque``, with joint_trajectory_controller chained in front of it,
    which takes the trajectory node's plans; the other two inactive) or ``node`` (the controller
    node ``controller`` commanding effort_controllers/JointGroupEffortController).

    ``controllers_file``: the controllers' gains and options (robot_dynamics_bringup's
    ``config/controllers.yaml`` or a copy), read after the generated YAML; "" : none. ``monitor``:
    the collision monitor between the computed-torque controller and the hardware (:func:`_monitor`).

    Returns:
        ``{"robot_description": URDF text with its <ros2_control> block, "hardware_plugin": the
        plugin of that block, "controllers_yaml": the controller manager's YAML text (what depends
        on the robot), "controllers_file": ``controllers_file``, "monitor_file": the monitor's
        parameters file ("" : none), "spawners": the spawners to run,
        each ``{"controllers": [names, a chain in its activation order], "active": bool}``,
        "controller_manager_remappings": remap pairs of ros2_control_node (its
        ``~/robot_description`` topic, which Jazzy's reads, to robot_state_publisher's),
        "remappings": per node of ours, its remap pairs, "simulator" and "controller": parameter
        lists or None (not started), "trajectory"/"dynamics"/"robot_state_publisher": parameter
        lists as in :func:`sim_parameters`, "fixed_frame": [base link]}``.

    Raises:
        RobotDynamicsError subclasses: unknown robot/controller/hardware/control, a URDF without
        (with) a ros2_control block for hardware urdf (for the others), a bad goal or rate, a
        controllers file that cannot be read or sets the rate.
    """
    rate, mode = _rate_and_control(update_rate, control)
    monitor_file = _monitor(monitor, mode, controller)
    on = monitor_file is not None
    description, drivetrain = robot_description(robot, urdf, drivetrain)
    # in the loop the controller node is not started: its parameters are checked with its default law
    node_law = controller if mode == "node" else LAUNCH_ARGUMENTS["controller"][0]
    params, model, q0 = _node_parameters(share, description, drivetrain, node_law, goal, initial_positions)
    gains = {**_controllers_file(controllers_file), **_controllers_file(monitor_file or "")}  # as read
    hw = str(hardware).strip()
    # 1 ms RK4 steps at most, for the simulator node and the in-process plant alike
    substeps = max(1, math.ceil(1000.0 / rate)) if rate > 0 else 1
    models = _robot_models(model, mode, hw, hardware_params, gains, on)
    full = _with_hardware(description, model, hw, hardware_params, substeps, q0, models.pop("hardware", ""))
    return {
        "robot_description": full,
        "hardware_plugin": _plugin_of(full),
        "controllers_yaml": controllers_yaml(model, rate, control=mode, robot_model=models, monitor=on),
        "controllers_file": str(controllers_file),
        "monitor_file": monitor_file or "",
        "robot_state_publisher": [{"robot_description": full}],
        "fixed_frame": params["fixed_frame"],
        "simulator": _topic_simulator(params["simulator"], rate, substeps) if hw == "topic" else None,
        "controller": params["controller"] if mode == "node" else None,
        "controller_manager_remappings": [("~/robot_description", "/robot_description")],
        "remappings": _remappings(mode),
        "spawners": _spawners(mode, controller, on),
        "trajectory": params["trajectory"],
        "dynamics": params["dynamics"],
    }


def _check_in_loop_law(mode: str, controller: str) -> None:
    """In the loop (``mode`` ``in_loop``), ``controller`` must be one of ``IN_LOOP_CONTROLLERS``;
    InputError otherwise."""
    if mode == "in_loop" and controller not in IN_LOOP_CONTROLLERS:
        raise InputError(f"controller: with control:=in_loop expected one of {list(IN_LOOP_CONTROLLERS)}, "
                         f"got {controller!r}")


def _monitor(monitor: str, mode: str, controller: str) -> str | None:
    """The collision monitor's parameters file of the launch argument ``monitor``: None for
    ``false`` or "" (no monitor), "" for ``true`` (the monitor with the controllers' files alone),
    else the path given (robot_dynamics_bringup's ``config/collision_monitor.yaml`` or a copy, read
    last: its thresholds and reaction). The monitor runs between the computed-torque controller
    and the hardware, activated with the chain: InputError for another control or controller (and
    for an in-loop controller that is not one of IN_LOOP_CONTROLLERS)."""
    _check_in_loop_law(mode, controller)
    text = str(monitor).strip()
    if text.lower() in ("", "false", "0", "no", "off"):
        return None
    if mode != "in_loop" or controller != "computed_torque":
        raise InputError(f"monitor: the collision monitor runs behind the computed-torque controller in the loop: "
                         f"give control:=in_loop controller:=computed_torque (got {mode!r}, {controller!r})")
    return "" if text.lower() in ("true", "1", "yes", "on") else text


def _remappings(mode: str) -> dict[str, list[tuple[str, str]]]:
    """Per node of ours, its remap pairs: in the loop, the trajectory node's plans go to
    joint_trajectory_controller."""
    if mode == "node":
        return {}
    return {"trajectory": [("~/joint_trajectory", f"/{TRAJECTORY_CONTROLLER}/joint_trajectory")]}


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


def _chain(controller: str, monitor: bool = False) -> list[str]:
    """The controllers that run as ``controller`` (a key of IN_LOOP_CONTROLLERS), in their
    activation order: joint_trajectory_controller after the computed-torque controller, whose
    reference interfaces it claims, and, with ``monitor``, the collision monitor before both."""
    name = IN_LOOP_CONTROLLERS[controller][0]
    if name != COMPUTED_TORQUE_CONTROLLER:
        return [name]
    return [*([COLLISION_MONITOR_CONTROLLER] if monitor else []), name, TRAJECTORY_CONTROLLER]


def _spawners(mode: str, controller: str, monitor: bool = False) -> list[dict[str, Any]]:
    """The spawners for control ``mode``: ``{"controllers": [...], "active": bool}`` each."""
    if mode == "node":
        return [{"controllers": ["joint_state_broadcaster"], "active": True},
                {"controllers": ["effort_controller"], "active": True}]
    # every controller of ours loaded, one chain active: one switch_controllers call changes it
    others = [c for k in IN_LOOP_CONTROLLERS if k != controller for c in _chain(k)]
    return [{"controllers": ["joint_state_broadcaster"], "active": True},
            {"controllers": _chain(controller, monitor), "active": True},
            {"controllers": others, "active": False}]


#: Seconds a spawner waits for controller_manager's services before it gives up with an error.
SPAWNER_TIMEOUT_S = 60


def spawner_arguments(spawner: dict[str, Any]) -> list[str]:
    """The command line of controller_manager's spawner for one entry of arm_parameters'
    ``spawners``: its controllers, ``--inactive`` (loaded and configured, not activated), and a
    timeout so that it ends, with an error, when no controller manager answers."""
    return [*spawner["controllers"], *([] if spawner["active"] else ["--inactive"]),
            "--controller-manager", "/controller_manager",
            "--controller-manager-timeout", str(SPAWNER_TIMEOUT_S)]


def exit_message(process: str, returncode: int | None, manager_output: list[str], hardware_plugin: str) -> str:
    """The error arm.launch.py stops with when ``process`` ends while the arm is brought up:
    controller_manager (``ros2_control_node``), which must never end, or a spawner that failed.

    ``returncode``: the process's exit code (negative: the signal that ended it); None: it runs
    on without its hardware (ros2_control 4, Jazzy: "Could not load and initialize hardware").
    ``manager_output``: the lines controller_manager printed, whose errors (rclcpp's [ERROR] and
    [FATAL] lines, a C++ exception's ``what()``) are the cause; ``hardware_plugin``: the plugin
    of the URDF's ``<ros2_control>`` block.
    """
    if returncode is None:
        how = "could not load its hardware"
    else:
        how = f"ended (exit code {returncode}"
        if returncode < 0:
            try:
                how += f", {signal.Signals(-returncode).name}"
            except ValueError:
                pass
        how += ")"
    causes = [line for line in (_cause(text) for text in manager_output) if line]
    said = "; controller_manager said: " + " | ".join(dict.fromkeys(causes[-3:])) if causes else ""
    plugin = f" (hardware plugin {hardware_plugin})" if hardware_plugin else ""
    return f"{process} {how}: the arm is not up{plugin}{said}"


#: What controller_manager of ros2_control 4 (Jazzy) prints when its hardware does not load; it
#: then runs on, waiting for another robot description, and never serves its controllers.
HARDWARE_NOT_LOADED = "Could not load and initialize hardware"


def _cause(line: str) -> str:
    """An error line of controller_manager's output, without rcutils' severity and time stamp
    ("" for any other line)."""
    text = line.strip()
    if "what():" in text:
        return text[text.index("what():") + len("what():"):].strip()[:400]
    for severity in ("[ERROR]", "[FATAL]"):
        if text.startswith(severity):
            # "[ERROR] [1712345678.123] [controller_manager]: message" -> "controller_manager: message"
            rest = text[len(severity):].strip()
            if rest.startswith("[") and "] " in rest:
                rest = rest[rest.index("] ") + 2:]
            return rest.replace("[", "", 1).replace("]", "", 1)[:400] if rest.startswith("[") else rest[:400]
    return ""


def _robot_models(model: Any, mode: str, hw: str, hardware_params: str, gains: dict[str, Any],
                  monitor: bool = False) -> dict[str, str]:
    """The ``robot_model`` text of each plugin of ours the launch loads: ``"hardware"`` (hardware
    ``sim``) and, in the loop, each controller (the collision monitor with ``monitor``), made as it
    checks it (robot_models): strict unless
    its hardware_params or its entry in the controllers file sets allow_nonphysical_model, with
    allow-no-effort-limit where that entry gives effort_limits."""
    users: dict[str, Any] = {}
    if hw != "urdf" and hardware_plugin(hw) == HARDWARE["sim"]:
        users["hardware"] = parse_pairs(hardware_params, "hardware_params")
    if mode == "in_loop":
        for name in [n for n, _ in IN_LOOP_CONTROLLERS.values()] + ([COLLISION_MONITOR_CONTROLLER] if monitor else []):
            entry = gains.get(name)
            users[name] = (entry.get("ros__parameters") or {}) if isinstance(entry, dict) else {}
    return robot_models(model, users)


def _controllers_file(path: str) -> dict[str, Any]:
    """The parameters YAML at ``path`` ("" : none, {}); InputError unless it is readable and leaves
    the rate to the launch (update_rate:=, which the simulated hardware's steps follow too)."""
    if not path:
        return {}
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"controllers_file: cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise InputError(f"controllers_file: {path} is not a parameters YAML (node: ros__parameters: ...)")
    manager = (data.get("controller_manager") or {}).get("ros__parameters") or {}
    if "update_rate" in manager:
        raise InputError(f"controllers_file: {path} sets controller_manager's update_rate; give it as the launch "
                         "argument update_rate:= instead")
    return data


def _plugin_of(description: str) -> str:
    """The hardware plugin named by the ``<ros2_control>`` block of ``description`` ("" : none)."""
    import xml.etree.ElementTree as ET

    found = ET.fromstring(description).find("ros2_control/hardware/plugin")
    return (found.text or "").strip() if found is not None else ""


def _with_hardware(description: str, model: Any, hw: str, hardware_params: str, substeps: int, q0: list[float],
                   robot_model: str) -> str:
    """The URDF text with the ``<ros2_control>`` block of hardware ``hw``: the URDF's own for
    ``urdf`` (InputError when it has none), else one generated with ``hardware_params`` (and
    ``substeps`` and the model text ``robot_model`` for ``sim``)."""
    if hw == "urdf":
        if not has_ros2_control(description):
            raise InputError("hardware:=urdf: the URDF has no <ros2_control> block; choose sim, topic, mock or a plugin")
        return description
    extra = parse_pairs(hardware_params, "hardware_params")
    if hw == "sim":
        extra = {"substeps": str(substeps), **extra}
    block = ros2_control_block(model, hw, initial_positions=q0 or None, hardware_params=extra,
                               robot_model=robot_model)
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
