"""The ``<ros2_control>`` block and the controller configuration of a robot, without ROS.

ros2_control's controller_manager reads the hardware of a robot from a ``<ros2_control>`` block
in its URDF: the hardware plugin (a vendor's driver, ``mock_components/GenericSystem``,
``topic_based_ros2_control/TopicBasedSystem``, which bridges a simulator through two
sensor_msgs/JointState topics, or ``robot_dynamics_control/SimulatedSystem``, the arm's dynamics
integrated inside the controller manager's cycle) and, per joint, its command and state
interfaces. This module writes that block for any robot the package loads, with an effort
command interface limited by the URDF's effort limit and position/velocity/effort state
interfaces, and the part of the controller manager's YAML that depends on the robot, for one of
two ways of controlling the arm (:data:`CONTROL`):

- ``node``: ``joint_state_broadcaster`` (publishes /joint_states) and ``effort_controller``
  (``effort_controllers/JointGroupEffortController``: a std_msgs/Float64MultiArray on
  ``/effort_controller/commands``, one effort per joint in the order of its ``joints``), which
  the controller node commands;
- ``in_loop``: ``joint_state_broadcaster``, the controllers of robot_dynamics_control
  (:data:`IN_LOOP_CONTROLLERS`: gravity compensation, PD + gravity, computed torque, Cartesian
  impedance and operational-space control, inside the controller manager's update; one of them
  active at a time) and ``joint_trajectory_controller``
  chained in front of the computed-torque controller: it takes FollowJointTrajectory goals and
  trajectories and writes the reference interfaces ``<joint>/position``, ``/velocity`` and
  ``/acceleration`` of the computed-torque controller.

The robot reaches robot_dynamics_control's plugins as the engine's model text
(:func:`engine_model_text`, what ``robot-dynamics engine-model --strict`` prints), made here by
the package's one URDF loader: the hardware parameter ``robot_model`` of the ``sim`` block and
the parameter ``robot_model`` of each in-loop controller (:func:`robot_models`); the plugins
parse it and run no loader of their own.

The gains are not here: they are tuned, not derived from the robot, and live in
robot_dynamics_bringup's ``config/controllers.yaml``, which its ``arm.launch.py`` passes beside
this YAML; ``robot-dynamics ros2-control`` prints this one.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence

import numpy as np
import yaml

from ..errors import InputError, ModelError
from ..model import RobotModel, check_model
from ..model.checks import ACCEPTED_KEY

__all__ = [
    "HARDWARE",
    "CONTROL",
    "UPDATE_RATE",
    "IN_LOOP_CONTROLLERS",
    "GRAVITY_COMPENSATION_CONTROLLER",
    "PD_GRAVITY_CONTROLLER",
    "COMPUTED_TORQUE_CONTROLLER",
    "TRAJECTORY_CONTROLLER",
    "CARTESIAN_IMPEDANCE_CONTROLLER",
    "OPERATIONAL_SPACE_CONTROLLER",
    "TASK_SPACE_CONTROLLERS",
    "COLLISION_MONITOR_CONTROLLER",
    "COLLISION_MONITOR_PLUGIN",
    "JOINT_COMMANDS_TOPIC",
    "JOINT_STATES_TOPIC",
    "hardware_plugin",
    "ros2_control_block",
    "with_ros2_control",
    "has_ros2_control",
    "controllers_yaml",
    "CHECKS_LINE",
    "engine_model_text",
    "robot_models",
]

#: Short names of the hardware plugins; any other ``package/Class`` plugin name is taken as is.
HARDWARE = {
    "sim": "robot_dynamics_control/SimulatedSystem",
    "topic": "topic_based_ros2_control/TopicBasedSystem",
    "mock": "mock_components/GenericSystem",
}
#: The ways of controlling the arm: our controller inside ros2_control's loop, or the
#: controller node beside it commanding JointGroupEffortController.
CONTROL = ("in_loop", "node")
#: controller_manager's rate [Hz]: the default of ``robot-dynamics ros2-control`` and of
#: arm.launch.py (the rate of the measurements in docs/ros2_control.md).
UPDATE_RATE = 1000
#: The controllers' names of ``in_loop``: robot_dynamics_control's three and the
#: joint_trajectory_controller chained in front of the computed-torque one.
GRAVITY_COMPENSATION_CONTROLLER = "gravity_compensation_controller"
PD_GRAVITY_CONTROLLER = "pd_gravity_controller"
COMPUTED_TORQUE_CONTROLLER = "computed_torque_controller"
TRAJECTORY_CONTROLLER = "joint_trajectory_controller"
#: The task-space controllers of ``in_loop``: one frame's pose held compliant (Cartesian impedance)
#: or decoupled (operational space), its target from ``~/target_pose``.
CARTESIAN_IMPEDANCE_CONTROLLER = "cartesian_impedance_controller"
OPERATIONAL_SPACE_CONTROLLER = "operational_space_controller"
#: The collision monitor of ``in_loop`` with ``monitor``: a chainable controller between the
#: computed-torque controller (whose efforts go to its reference interfaces) and the hardware.
COLLISION_MONITOR_CONTROLLER = "collision_monitor_controller"
COLLISION_MONITOR_PLUGIN = "robot_dynamics_control/CollisionMonitorController"
#: ``in_loop``'s choice (arm.launch.py's ``controller:=``) -> (controller name, plugin type).
IN_LOOP_CONTROLLERS = {
    "gravity_compensation": (GRAVITY_COMPENSATION_CONTROLLER, "robot_dynamics_control/GravityCompensationController"),
    "pd_gravity": (PD_GRAVITY_CONTROLLER, "robot_dynamics_control/PdGravityController"),
    "computed_torque": (COMPUTED_TORQUE_CONTROLLER, "robot_dynamics_control/ComputedTorqueController"),
    "cartesian_impedance": (CARTESIAN_IMPEDANCE_CONTROLLER, "robot_dynamics_control/CartesianImpedanceController"),
    "operational_space": (OPERATIONAL_SPACE_CONTROLLER, "robot_dynamics_control/OperationalSpaceController"),
}
#: The in-loop controllers of one frame's pose: their parameter ``frame`` is the model's end effector.
TASK_SPACE_CONTROLLERS = (CARTESIAN_IMPEDANCE_CONTROLLER, OPERATIONAL_SPACE_CONTROLLER)
#: joint_trajectory_controller's goal tolerance per joint [rad or m] (its default, 0, checks nothing)
GOAL_TOLERANCE = 0.02
#: Where TopicBasedSystem publishes the effort commands (sensor_msgs/JointState, effort field)
#: and reads the simulated state (sensor_msgs/JointState) in arm.launch.py.
JOINT_COMMANDS_TOPIC = "/robot_dynamics/joint_commands"
JOINT_STATES_TOPIC = "/robot_dynamics/joint_states"

#: The model text's line recording the checks it was made with (``# checks: strict`` and, with
#: ``allow_no_effort_limit``, `` allow-no-effort-limit``): a comment to the engine's parser, read by
#: robot_dynamics_control's plugins, which refuse a text without ``strict`` unless their
#: ``allow_nonphysical_model`` is set.
CHECKS_LINE = "# checks:"

_PLUGIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*/[A-Za-z_][A-Za-z0-9_]*$")
_PARAM_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")


def hardware_plugin(hardware: str) -> str:
    """The plugin class of ``hardware``: ``topic``, ``mock`` or a ``package/Class`` name.

    Raises:
        InputError: anything else (names the choices).
    """
    text = str(hardware).strip()
    if text in HARDWARE:
        return HARDWARE[text]
    if _PLUGIN.match(text):
        return text
    raise InputError(
        f"hardware: expected 'topic' (the simulator through {HARDWARE['topic']}), 'sim' (the dynamics "
        f"inside the controller manager, {HARDWARE['sim']}), 'mock' ({HARDWARE['mock']}) or a vendor's "
        f"plugin as package/Class, got {hardware!r}"
    )


def _number(x: float) -> str:
    return repr(float(x))


def _check_params(params: Mapping[str, object]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in params.items():
        if not isinstance(key, str) or not _PARAM_NAME.match(key):
            raise InputError(f"hardware parameter names are letters, digits, '_' and '.', got {key!r}")
        out[key] = str(value)
    return out


def ros2_control_block(
    model: RobotModel,
    hardware: str = "topic",
    *,
    initial_positions: Sequence[float] | None = None,
    hardware_params: Mapping[str, object] | None = None,
    name: str | None = None,
    robot_model: str = "",
) -> str:
    """The ``<ros2_control>`` element of ``model`` as XML text (indented, no declaration).

    Args:
        model: the robot; one ``<joint>`` per model joint (mimic joints are left to the
            hardware and to robot_state_publisher, as the URDF declares them).
        hardware: ``sim``, ``topic``, ``mock`` or a vendor plugin ``package/Class`` (:func:`hardware_plugin`).
        initial_positions: positions [rad or m] in model order for the position state's
            ``initial_value`` (default: zeros clipped into the joint limits); ``sim`` and ``mock``
            start there.
        hardware_params: ``<param>`` entries of the hardware; for ``topic`` they override the
            defaults (the two topics of this module, a command sent every cycle); for ``sim``
            see robot_dynamics_control's SimulatedSystem (``substeps``, ``friction``,
            ``max_step``, ...).
        name: the system's name (default: the robot's name).
        robot_model: ``sim``: the simulated arm as the engine's model text (:func:`engine_model_text`),
            its ``robot_model`` parameter ("" : none, which SimulatedSystem refuses).

    Raises:
        InputError: bad hardware, parameters or initial positions.
    """
    plugin = hardware_plugin(hardware)
    params: dict[str, str] = {}
    if plugin == HARDWARE["topic"]:
        params = {"joint_commands_topic": JOINT_COMMANDS_TOPIC, "joint_states_topic": JOINT_STATES_TOPIC,
                  "trigger_joint_command_threshold": "-1"}
    elif plugin == HARDWARE["sim"] and robot_model:
        params = {"robot_model": str(robot_model)}
    params.update(_check_params(hardware_params or {}))
    q0 = _initial_positions(model, initial_positions)
    root = ET.Element("ros2_control", name=name or model.name, type="system")
    hw = ET.SubElement(root, "hardware")
    ET.SubElement(hw, "plugin").text = plugin
    for key, value in params.items():
        ET.SubElement(hw, "param", name=key).text = value
    for i, joint in enumerate(model.joint_names):
        j = ET.SubElement(root, "joint", name=joint)
        command = ET.SubElement(j, "command_interface", name="effort")
        limit = float(model.effort_limit[i])
        if math.isfinite(limit) and limit > 0:
            ET.SubElement(command, "param", name="min").text = _number(-limit)
            ET.SubElement(command, "param", name="max").text = _number(limit)
        position = ET.SubElement(j, "state_interface", name="position")
        ET.SubElement(position, "param", name="initial_value").text = _number(q0[i])
        ET.SubElement(j, "state_interface", name="velocity")
        effort = ET.SubElement(j, "state_interface", name="effort")
        if plugin == HARDWARE["topic"]:
            # TopicBasedSystem starts a joint's command at its state's initial_value (0 without):
            # NaN is ros2_control's "no command", so the simulated arm keeps its brakes until a
            # controller commands it instead of falling under a zero effort while the nodes start.
            ET.SubElement(effort, "param", name="initial_value").text = "nan"
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode")


def _initial_positions(model: RobotModel, values: Sequence[float] | None) -> np.ndarray:
    if values is None or len(values) == 0:
        lo = np.where(np.isfinite(model.lower), model.lower, -np.inf)
        hi = np.where(np.isfinite(model.upper), model.upper, np.inf)
        return np.clip(np.zeros(model.nq), lo, hi)
    q0 = np.asarray(values, dtype=float)
    if q0.shape != (model.nq,) or not np.all(np.isfinite(q0)):
        raise InputError(f"initial_positions: expected {model.nq} finite values ordered as "
                         f"{list(model.joint_names)}, got {list(values)!r}")
    return q0


def has_ros2_control(description: str) -> bool:
    """Whether the URDF text already holds a ``<ros2_control>`` element (a vendor's description)."""
    try:
        root = ET.fromstring(description)
    except ET.ParseError as exc:
        raise InputError(f"robot_description is not XML: {exc}") from None
    return root.find("ros2_control") is not None


def with_ros2_control(description: str, block: str) -> str:
    """The URDF text with ``block`` inserted before its closing ``</robot>``.

    The rest of the text stays byte for byte (comments, formatting), so the description that
    robot_state_publisher and rviz read is the robot's own.

    Raises:
        InputError: not a URDF, or it already has a ``<ros2_control>`` block.
    """
    if has_ros2_control(description):
        raise InputError("the URDF already has a <ros2_control> block: use it as it is")
    end = description.rstrip().rfind("</robot>")
    if end < 0:
        raise InputError("robot_description: expected a URDF ending in </robot>")
    indented = "\n".join("  " + line for line in block.splitlines())
    return f"{description[:end].rstrip()}\n\n{indented}\n\n{description[end:]}"


def controllers_yaml(
    model: RobotModel,
    update_rate: int = UPDATE_RATE,
    joints: Sequence[str] | None = None,
    *,
    control: str = "node",
    robot_model: str | Mapping[str, str] = "",
    monitor: bool = False,
) -> str:
    """The controller manager's parameter file (YAML text) for ``model``: what depends on the robot.

    ``controller_manager`` runs at ``update_rate`` [Hz] and knows ``joint_state_broadcaster`` and,
    for ``control``:

    - ``node``: ``effort_controller`` (JointGroupEffortController over ``joints``, default the
      model's joints in model order: the order the controller node's commands use);
    - ``in_loop``: the controllers of :data:`IN_LOOP_CONTROLLERS` over ``joints`` (the task-space
      ones with ``frame`` the model's end effector), each with
      its ``robot_model``: the engine's model text (:func:`engine_model_text`), one for all or one
      per controller name (:func:`robot_models`), and
      ``joint_trajectory_controller`` commanding the reference interfaces
      ``computed_torque_controller/<joint>/position|velocity|acceleration``; with ``monitor``,
      :data:`COLLISION_MONITOR_CONTROLLER` over ``joints`` (its ``robot_model``: ``robot_model``'s
      entry of that name, or the one text) and the computed-torque controller's efforts going to
      its reference interfaces (``command_joints``: ``collision_monitor_controller/<joint>``).

    No gains: the controllers' own defaults apply unless a second file (robot_dynamics_bringup's
    ``config/controllers.yaml``, or your copy of it) gives them; the PD + gravity controller has
    no default gains and needs that file.

    Raises:
        InputError: a rate outside 1..10000 Hz, an unknown control, no model text for
            ``in_loop``, or an unknown joint.
    """
    if isinstance(update_rate, bool) or not isinstance(update_rate, (int, np.integer)) or not 1 <= update_rate <= 10000:
        raise InputError(f"update_rate: expected an integer in [1, 10000] Hz, got {update_rate!r}")
    if control not in CONTROL:
        raise InputError(f"control: expected one of {list(CONTROL)}, got {control!r}")
    names = list(joints) if joints else list(model.joint_names)
    for j in names:
        model.joint_index(j)
    manager: dict[str, object] = {
        "update_rate": int(update_rate),
        "joint_state_broadcaster": {"type": "joint_state_broadcaster/JointStateBroadcaster"},
    }
    params: dict[str, object] = {"controller_manager": {"ros__parameters": manager}}
    if control == "node":
        manager["effort_controller"] = {"type": "effort_controllers/JointGroupEffortController"}
        params["effort_controller"] = {"ros__parameters": {"joints": names}}
    else:
        users = [name for name, _ in IN_LOOP_CONTROLLERS.values()] + ([COLLISION_MONITOR_CONTROLLER] if monitor else [])
        texts = {name: robot_model if isinstance(robot_model, str) else robot_model.get(name, "") for name in users}
        if not all(texts.values()):
            raise InputError("control in_loop: the controllers need the robot's model text (robot_model)")
        for name, plugin in IN_LOOP_CONTROLLERS.values():
            manager[name] = {"type": plugin}
            # the robot as the engine's model text, made by the package's one loader
            frame = {"frame": model.end_effector} if name in TASK_SPACE_CONTROLLERS else {}
            params[name] = {"ros__parameters": {"joints": names, "robot_model": texts[name], **frame}}
        if monitor:
            manager[COLLISION_MONITOR_CONTROLLER] = {"type": COLLISION_MONITOR_PLUGIN}
            params[COLLISION_MONITOR_CONTROLLER] = {"ros__parameters": {
                "joints": names, "robot_model": texts[COLLISION_MONITOR_CONTROLLER]}}
            # computed torque writes the monitor's reference interfaces instead of the hardware
            params[COMPUTED_TORQUE_CONTROLLER] = {"ros__parameters": {
                "joints": names, "robot_model": texts[COMPUTED_TORQUE_CONTROLLER],
                "command_joints": [f"{COLLISION_MONITOR_CONTROLLER}/{j}" for j in names]}}
        manager[TRAJECTORY_CONTROLLER] = {"type": "joint_trajectory_controller/JointTrajectoryController"}
        params[TRAJECTORY_CONTROLLER] = {"ros__parameters": {
            "joints": names,  # its state: the hardware's <joint>/position and /velocity
            "command_joints": [f"{COMPUTED_TORQUE_CONTROLLER}/{j}" for j in names],
            "command_interfaces": ["position", "velocity", "acceleration"],
            "state_interfaces": ["position", "velocity"],
            "constraints": {j: {"trajectory": 0.0, "goal": GOAL_TOLERANCE} for j in names},
        }}
    header = (f"# ros2_control's controller manager for {model.name} (robot-dynamics ros2-control): what depends on\n"
              "# the robot; the gains: robot_dynamics_bringup's config/controllers.yaml, a second params file\n")
    # no anchors/aliases for the lists used twice: rcl's parameter parser refuses them
    return header + yaml.dump(params, Dumper=_PlainDumper, sort_keys=False, default_flow_style=False, width=1 << 20)


class _PlainDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: object) -> bool:
        return True


def engine_model_text(model: RobotModel, *, strict: bool = True, allow_no_effort_limit: bool = False) -> str:
    """The engine's model text of ``model`` (``rd_model_parse``'s form), as ``robot-dynamics
    engine-model`` prints it: with ``strict``, the model checks first (:func:`~robot_dynamics.model.check_model`;
    ``allow_no_effort_limit`` leaves joints without an effort limit out of them) and the line
    :data:`CHECKS_LINE` recording them at the end, which robot_dynamics_control's plugins require
    unless their ``allow_nonphysical_model`` is set; without, the bare text.

    Raises:
        ModelError: ``strict`` and an issue the description does not accept (one line naming each),
            or a joint name with white space.
    """
    from ..engine.layout import model_text

    text = model_text(model)
    if not strict:
        return text
    issues = check_model(model, allow=("no_effort_limit",) if allow_no_effort_limit else ())
    if issues:
        raise ModelError(
            f"robot {model.name!r} fails the model checks ({len(issues)} issue{'s' if len(issues) > 1 else ''}): "
            + "; ".join(i.message for i in issues)
            + f"; declare a known one under {ACCEPTED_KEY} in the drive-train YAML"
            + ("" if allow_no_effort_limit or all(i.kind != "no_effort_limit" for i in issues)
               else ", or give the effort limits and --allow-no-effort-limit"))
    return text + f"{CHECKS_LINE} strict{' allow-no-effort-limit' if allow_no_effort_limit else ''}\n"


def robot_models(model: RobotModel, consumers: Mapping[str, Mapping[str, object]]) -> dict[str, str]:
    """The ``robot_model`` text of each plugin in ``consumers`` (its name -> the parameters it is
    given: a controller's ``allow_nonphysical_model`` and ``effort_limits``; ``"hardware"``:
    SimulatedSystem's hardware parameters), each made as the plugin checks it: strict unless it
    sets ``allow_nonphysical_model``, with ``allow-no-effort-limit`` where it gives its own effort
    limits (the simulated arm always: a plant takes any effort).

    Raises:
        ModelError: a strict text the model fails, naming the plugin and the way out.
    """
    made: dict[tuple[bool, bool], str] = {}
    out = {}
    for who, params in consumers.items():
        allow = str(params.get("allow_nonphysical_model", False)).strip().lower() in ("true", "1", "yes", "on")
        key = (not allow, who == "hardware" or bool(params.get("effort_limits")))
        if key not in made:
            try:
                made[key] = engine_model_text(model, strict=key[0], allow_no_effort_limit=key[1])
            except ModelError as exc:
                raise ModelError(f"robot_model of {who}: {exc}; or set its allow_nonphysical_model") from None
        out[who] = made[key]
    return out
