"""Parameters of the nodes: one table per node, validated without rclpy.

Each node declares the parameters of its table (with a descriptor built from ``description``,
``read_only`` and the numeric range), reads them into a plain dict and calls
:func:`validate` before building anything: an invalid value stops the node at start-up with a
message that names the parameter and the valid choices, as ros2_controllers'
generate_parameter_library does. The config YAML files in ``config/`` are checked against
these tables by the tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..control.by_name import CONTROLLERS  # the controller names, the builder's own list
from ..control.base import DEFAULT_OMEGA
from ..control.computed_torque import FRICTION_VELOCITY
from ..errors import InputError
from ..trajectory import PROFILES as _PROFILES

__all__ = [
    "ParamSpec",
    "NODE_PARAMETERS",
    "validate",
    "defaults",
    "ROBOT_SOURCE",
    "SERVICE_QUEUE",
    "service_history",
    "CONTROLLERS",
]

#: ROS parameter types by name (rcl_interfaces/ParameterType).
TYPES = ("bool", "integer", "double", "string", "string_array", "double_array")


@dataclass(frozen=True)
class ParamSpec:
    """One node parameter.

    Attributes:
        name: parameter name (dots for nested YAML keys).
        type: one of ``TYPES``.
        default: value when not overridden; None for an empty array (declared with dynamic
            typing, since rclpy cannot infer the type of an empty list).
        description: shown by ``ros2 param describe``.
        minimum, maximum: numeric range (inclusive) for integer/double.
        choices: the valid strings of a ``string`` parameter (empty: any).
        read_only: cannot change after start-up.
    """

    name: str
    type: str
    default: Any
    description: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    read_only: bool = True


#: Where the robot comes from: shared by every node.
ROBOT_SOURCE: tuple[ParamSpec, ...] = (
    ParamSpec("robot_description", "string", "", "URDF text of the robot (as robot_state_publisher takes it); "
              "first choice"),
    ParamSpec("urdf_path", "string", "", "Path of a URDF or xacro file, used when robot_description is empty"),
    ParamSpec("robot", "string", "", "Name of a bundled robot (planar2, puma560, rx90, iiwa14), used when both "
              "robot_description and urdf_path are empty"),
    ParamSpec("drivetrain", "string", "", "Path of the drive-train YAML (friction, rotor inertia, gear ratios); "
              "empty for none"),
    ParamSpec("gravity", "double_array", [0.0, 0.0, -9.81], "Gravity in the base frame [m/s^2]"),
)


#: History depth of a node's services (requests in, responses out); shared by the nodes that serve.
SERVICE_QUEUE: tuple[ParamSpec, ...] = (
    ParamSpec("service_queue_depth", "integer", 1000, "History depth of the services' requests and responses "
              "(KEEP_LAST; 0 = KEEP_ALL). rclpy's default of 10 drops requests when more than 10 arrive "
              "while a callback runs (clients in parallel, calls sent without waiting)",
              minimum=0, maximum=1_000_000),
)


NODE_PARAMETERS: dict[str, tuple[ParamSpec, ...]] = {
    "dynamics": ROBOT_SOURCE
    + SERVICE_QUEUE
    + (
        ParamSpec("joint_states_topic", "string", "/joint_states", "Joint states to compute gravity compensation for"),
        ParamSpec("publish_gravity_compensation", "bool", True,
                  "Publish ~/gravity_compensation (Float64MultiArray) for every /joint_states message"),
        ParamSpec("gravity_compensation_joints", "string_array", None,
                  "Joint order of ~/gravity_compensation; empty = the model's joint order"),
        ParamSpec("friction", "bool", True, "Include joint friction (viscous + Coulomb) in inverse dynamics"),
        ParamSpec("robot_description_topic", "string", "/robot_description",
                  "When no robot parameter is set, wait for the URDF on this topic (std_msgs/String, "
                  "transient local, as robot_state_publisher publishes it)"),
    ),
    "trajectory": ROBOT_SOURCE
    + SERVICE_QUEUE
    + (
        ParamSpec("profile", "string", "quintic", "Default time-law profile", choices=_PROFILES),
        ParamSpec("duration", "double", 0.0, "Default duration [s]; 0 = shortest allowed by the limits",
                  minimum=0.0, maximum=3600.0),
        ParamSpec("velocity_scaling", "double", 0.5, "Fraction of the model's velocity limits used by default",
                  minimum=1e-3, maximum=1.0),
        ParamSpec("max_acceleration", "double", 5.0, "Default acceleration limit of every joint [rad/s^2 or m/s^2]",
                  minimum=1e-6, maximum=1e4),
        ParamSpec("sample_period", "double", 0.05, "Sample period of published JointTrajectory messages [s]",
                  minimum=1e-4, maximum=10.0),
        ParamSpec("publish_rate", "double", 100.0, "Rate of the ~/reference stream [Hz]", minimum=1.0,
                  maximum=10000.0),
        ParamSpec("joint_states_topic", "string", "/joint_states", "Current state: start of planned motions"),
        ParamSpec("torque_scaling", "bool", True, "Slow every plan until its torques stay within 90 % of the "
                  "effort limits"),
        ParamSpec("goal_topic", "string", "~/goal", "Goal positions (sensor_msgs/JointState, joints by name)"),
        ParamSpec("initial_goal", "double_array", None, "Goal positions (model order) to move to once, "
                  "initial_goal_delay after the first joint state; empty = none"),
        ParamSpec("initial_goal_delay", "double", 1.0, "Delay of initial_goal [s]", minimum=0.0, maximum=3600.0),
        ParamSpec("start_tolerance", "double", 0.05, "How far the first point (at 0 s) of a trajectory on ~/execute or "
                  "~/follow_joint_trajectory may be from the measured position [rad or m]", minimum=0.0, maximum=1e3),
        ParamSpec("action_monitor_rate", "double", 20.0, "Rate of ~/follow_joint_trajectory feedback [Hz] (tolerances "
                  "are checked on every joint state)", minimum=0.1, maximum=1000.0),
        ParamSpec("constraints.goal_time", "double", 1.0, "~/follow_joint_trajectory: time after a trajectory's end "
                  "allowed to reach the goal tolerances when a goal's goal_time_tolerance is 0 [s]",
                  minimum=0.0, maximum=3600.0),
        ParamSpec("constraints.goal_position", "double", 0.01, "~/follow_joint_trajectory: default goal position "
                  "tolerance of every joint [rad or m]; 0 = not checked", minimum=0.0, maximum=1e3),
        ParamSpec("constraints.stopped_velocity", "double", 0.05, "~/follow_joint_trajectory: default goal velocity "
                  "tolerance of every joint [rad/s or m/s]; 0 = not checked", minimum=0.0, maximum=1e3),
        ParamSpec("constraints.path_position", "double", 0.0, "~/follow_joint_trajectory: default path position "
                  "tolerance of every joint [rad or m]; 0 = not checked", minimum=0.0, maximum=1e3),
        ParamSpec("time_untimed_goals", "bool", False, "~/follow_joint_trajectory: time a goal whose points all "
                  "have time_from_start 0 and positions only (an untimed path), time-optimal as ~/time_optimal "
                  "does with its defaults, and execute it; false: refuse it (INVALID_GOAL)"),
        ParamSpec("time_optimal.effort_scaling", "double", 0.9, "~/time_optimal and untimed goals: fraction of the "
                  "model's effort limits used when a request gives none (0.9 keeps 10 % for the feedback)",
                  minimum=0.01, maximum=1.0),
        ParamSpec("time_optimal.grid_points", "integer", 1001, "~/time_optimal and untimed goals: grid points of "
                  "the path parameter when a request gives 0", minimum=2, maximum=100001),
    ),
    "controller": ROBOT_SOURCE
    + (
        ParamSpec("controller", "string", "computed_torque", "Controller of robot_dynamics.control",
                  choices=CONTROLLERS),
        ParamSpec("gains.omega", "double", DEFAULT_OMEGA, "Closed-loop bandwidth [rad/s] used when kp/kd are empty",
                  minimum=1e-3, maximum=1e4),
        ParamSpec("frame", "string", "", "Controlled frame of the task-space controllers (empty: end effector)"),
        ParamSpec("gains.kp", "double_array", None, "Proportional gains per joint (empty: the controller's "
                  "default)"),
        ParamSpec("gains.kd", "double_array", None, "Derivative gains per joint (empty: default)"),
        ParamSpec("gains.ki", "double_array", None, "Integral gains per joint (empty: default)"),
        ParamSpec("friction_velocity", "string", "desired", "computed_torque's friction compensation at the "
                  "desired velocity (feed-forward; holds still at rest) or the measured one (Khalil [9.22]; "
                  "its sign chatters at rest and the arm creeps in stick-slip)", choices=FRICTION_VELOCITY),
        ParamSpec("lqr.q", "double_array", None, "lqr: state weights, the diagonal of Q (positions then "
                  "velocities, model order; empty: the bandwidth design from gains.omega)"),
        ParamSpec("lqr.r", "double_array", None, "lqr: torque weights, the diagonal of R (model order; empty: "
                  "M(q^d)^-2, the commanded acceleration's weight)"),
        ParamSpec("lqr.relinearize_period", "double", 0.05, "lqr: time between refreshes of the gain about the "
                  "moving reference [s] (the gain is a discrete-time design at 'rate')", minimum=0.0, maximum=3600.0),
        ParamSpec("rate", "double", 500.0, "Control rate [Hz]", minimum=1.0, maximum=10000.0),
        ParamSpec("joints", "string_array", None,
                  "Joint order of the command, as the 'joints' parameter of the effort forward-command "
                  "controller; empty = the model's joint order"),
        ParamSpec("command_topic", "string", "/effort_controller/commands",
                  "Effort commands (std_msgs/Float64MultiArray), ros2_control's JointGroupEffortController"),
        ParamSpec("joint_states_topic", "string", "/joint_states", "Measured joint states"),
        ParamSpec("reference_topic", "string", "/trajectory/reference",
                  "Reference (trajectory_msgs/JointTrajectory, one point: positions, velocities, "
                  "accelerations)"),
        ParamSpec("state_timeout", "double", 0.5, "Stop commanding when no joint state came for this long [s]",
                  minimum=1e-3, maximum=60.0),
        ParamSpec("hold_on_start", "bool", True, "Hold the first measured position until a reference arrives"),
        ParamSpec("command_space", "string", "joint", "joint: joint efforts in the order of 'joints' (what "
                  "JointGroupEffortController takes); actuator: motor efforts of a geared robot (drive-train inputs)",
                  choices=("joint", "actuator")),
        ParamSpec("command_log", "string", "", "CSV file of the commands published (per command: the stamp of "
                  "the joint state it was computed from, when that state arrived and when the command left "
                  "[steady clock, ns], the efforts), written at shutdown; empty = off"),
        ParamSpec("command_log_cycles", "integer", 1048576, "Commands the command log keeps (the last ones; "
                  "preallocated at start)", minimum=1, maximum=100000000),
    ),
    "simulator": ROBOT_SOURCE
    + (
        ParamSpec("rate", "double", 200.0, "Publication rate of /joint_states [Hz]", minimum=1.0, maximum=10000.0),
        ParamSpec("substeps", "integer", 5, "Integration steps per publication", minimum=1, maximum=1000),
        ParamSpec("initial_positions", "double_array", None, "Initial joint positions, model order (empty: "
                  "zeros, clipped into the joint limits)"),
        ParamSpec("joints", "string_array", None, "Joint order of the effort commands; empty = model order"),
        ParamSpec("command_topic", "string", "/effort_controller/commands", "Effort commands to apply"),
        ParamSpec("joint_states_topic", "string", "/joint_states", "Where the simulated state is published"),
        ParamSpec("command_timeout", "double", 0.5, "Apply zero effort when no command came for this long [s]",
                  minimum=1e-3, maximum=60.0),
        ParamSpec("friction", "bool", True, "Simulate joint friction (viscous + Coulomb)"),
        ParamSpec("effort_saturation", "bool", True, "Clip commands to the model's effort limits"),
        ParamSpec("command_space", "string", "joint", "What the commands are: joint efforts ('joints' order) or "
                  "actuator efforts of a geared robot", choices=("joint", "actuator")),
        ParamSpec("command_type", "string", "float64_multi_array", "Message of the commands: "
                  "std_msgs/Float64MultiArray ('joints' order, the effort controller's topic) or "
                  "sensor_msgs/JointState (efforts by name, as ros2_control's TopicBasedSystem sends them)",
                  choices=("float64_multi_array", "joint_state")),
    ),
}


def service_history(depth: Any) -> tuple[str, int]:
    """The history of a service with ``service_queue_depth`` = ``depth``: ``("keep_last", depth)``,
    or ``("keep_all", 0)`` for 0.

    Raises:
        InputError: ``depth`` is not an integer in [0, 1000000].
    """
    spec = SERVICE_QUEUE[0]
    lo, hi = int(spec.minimum or 0), int(spec.maximum or 0)  # both set on this parameter
    if isinstance(depth, bool) or not isinstance(depth, int) or not lo <= depth <= hi:
        raise InputError(f"parameter 'service_queue_depth' must be an integer in [{spec.minimum}, {spec.maximum}] "
                         f"(0 keeps all), got {depth!r}")
    return ("keep_all", 0) if depth == 0 else ("keep_last", depth)


def defaults(node: str) -> dict[str, Any]:
    """``{name: default}`` of a node's parameters (None arrays as empty lists)."""
    return {p.name: ([] if p.default is None else p.default) for p in NODE_PARAMETERS[node]}


def describe(spec: ParamSpec) -> str:
    """What a parameter takes, in words: its type, range or choices."""
    text = f"expected {'a' if spec.type[0] not in 'aeiou' else 'an'} {spec.type}"
    if spec.type in ("integer", "double") and (spec.minimum is not None or spec.maximum is not None):
        lo = "-inf" if spec.minimum is None else f"{spec.minimum:g}"
        hi = "inf" if spec.maximum is None else f"{spec.maximum:g}"
        text += f" in [{lo}, {hi}]"
    if spec.choices:
        text += f", one of {list(spec.choices)}"
    return text


def _type_ok(spec: ParamSpec, value: Any) -> bool:
    if spec.type == "bool":
        return isinstance(value, bool)
    if spec.type == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if spec.type == "double":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if spec.type == "string":
        return isinstance(value, str)
    if spec.type == "string_array":
        return isinstance(value, Sequence) and not isinstance(value, str) and all(isinstance(v, str) for v in value)
    if spec.type == "double_array":
        return isinstance(value, Sequence) and not isinstance(value, str) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    return False


def validate(node: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """Check a node's parameter values; returns them completed with defaults.

    Raises:
        InputError: unknown node, unknown parameter, wrong type, out of range, or a string that
            is not among the choices; the message names the parameter and what is valid.
    """
    if node not in NODE_PARAMETERS:
        raise InputError(f"Unknown node {node!r}. Valid nodes: {sorted(NODE_PARAMETERS)}")
    specs = {p.name: p for p in NODE_PARAMETERS[node]}
    unknown = sorted(set(values) - set(specs))
    if unknown:
        raise InputError(f"{node}: unknown parameters {unknown}. Valid parameters: {sorted(specs)}")
    out = defaults(node)
    for name, value in values.items():
        spec = specs[name]
        if value is None and spec.type.endswith("_array"):
            value = []
        if not _type_ok(spec, value):
            raise InputError(f"{node}: parameter {name!r} must be of type {spec.type} ({describe(spec)}), got {value!r}")
        if spec.type == "double":
            value = float(value)  # `rate:=500` is an integer to ROS
        elif spec.type == "double_array":
            value = [float(v) for v in value]
        if spec.type in ("integer", "double"):
            if not math.isfinite(float(value)):
                raise InputError(f"{node}: parameter {name!r} must be finite, got {value!r}")
            if spec.minimum is not None and value < spec.minimum:
                raise InputError(f"{node}: parameter {name!r} must be >= {spec.minimum}, got {value!r}")
            if spec.maximum is not None and value > spec.maximum:
                raise InputError(f"{node}: parameter {name!r} must be <= {spec.maximum}, got {value!r}")
        if spec.type == "double_array" and not all(math.isfinite(float(v)) for v in value):
            raise InputError(f"{node}: parameter {name!r} must hold finite numbers, got {value!r}")
        if spec.choices and value not in spec.choices:
            raise InputError(f"{node}: parameter {name!r} is {value!r}. Valid choices: {list(spec.choices)}")
        out[name] = list(value) if spec.type.endswith("_array") else value
    if len(out["gravity"]) != 3:
        raise InputError(f"{node}: parameter 'gravity' must hold 3 numbers [m/s^2], got {out['gravity']!r}")
    return out
