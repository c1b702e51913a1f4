"""Entry points of the package and generators of hostile input for them (shared by
``test_fuzz.py``, the CI-sized run, and ``bench/fuzz.py``, the long one).

The rule every target is held to: an input is accepted and every number that comes back is
finite, or it is refused with the package's own error (a ``RobotDynamicsError``; the CLI: exit
2 and one line). Anything else, a raw Python exception or a silent NaN, is a defect.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st

import robot_dynamics as rd
from robot_dynamics.errors import RobotDynamicsError

#: Outcomes of one input.
ACCEPTED, REFUSED, RAW, NONFINITE = "accepted", "refused", "raw exception", "silent non-finite"

EXTREME_FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e300, -1e300, 1e308, -1e308, math.inf, -math.inf,
                     math.nan, 1e18, 1e30, 2**53 + 1.0]),
    st.floats(-10.0, 10.0),
)
ANY_SCALAR = st.one_of(
    EXTREME_FLOATS,
    st.integers(min_value=-(10**400), max_value=10**400),
    st.text(max_size=12),
    st.none(),
    st.booleans(),
    st.complex_numbers(max_magnitude=1e3),
)


def finite_everywhere(value: Any) -> bool:
    """True when every number reachable in ``value`` (arrays, tuples, dataclass fields) is finite."""
    if value is None or isinstance(value, (str, bytes, bool)):
        return True
    if isinstance(value, (int, float, np.floating, np.integer)):
        return bool(np.isfinite(float(value)))
    if isinstance(value, np.ndarray):
        return value.dtype.kind not in "fc" or bool(np.all(np.isfinite(value)))
    if isinstance(value, (list, tuple)):
        return all(finite_everywhere(v) for v in value)
    if isinstance(value, dict):
        return all(finite_everywhere(v) for v in value.values())
    return True


def outcome(call: Callable[[], Any]) -> tuple[str, str]:
    """Run ``call``; (outcome, detail)."""
    try:
        with np.errstate(all="ignore"):
            result = call()
    except RobotDynamicsError as exc:
        return REFUSED, str(exc)[:120]
    except Exception as exc:  # noqa: BLE001 - what the fuzzing looks for
        return RAW, f"{type(exc).__name__}: {str(exc)[:120]}"
    if not finite_everywhere(result):
        return NONFINITE, repr(result)[:120]
    return ACCEPTED, ""


# -- the models the targets use (loaded once) ---------------------------------------------------

_MODELS: dict[str, rd.RobotModel] = {}


def model(name: str) -> rd.RobotModel:
    if name not in _MODELS:
        _MODELS[name] = rd.load_robot(name)
    return _MODELS[name]


# -- 1. URDF text ------------------------------------------------------------------------------

URDF = """<robot name="r"><link name="base"/>
<link name="a"><inertial><origin xyz="{cx} 0 0"/><mass value="{mass}"/>
  <inertia ixx="{ixx}" ixy="{ixy}" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<link name="b"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<joint name="j1" type="{type}"><parent link="base"/><child link="a"/><axis xyz="{ax} 0 1"/>
  <limit lower="{lo}" upper="{hi}" effort="{effort}" velocity="{vel}"/><dynamics damping="{damp}" friction="{fric}"/></joint>
<joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="{ox} 0 0" rpy="{roll} 0 0"/>
  <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/>{mimic}</joint></robot>"""
URDF_FIELDS = {"cx": "0.1", "mass": "1", "ixx": "0.1", "ixy": "0", "type": "revolute", "ax": "0", "lo": "-1",
               "hi": "1", "effort": "10", "vel": "1", "damp": "0", "fric": "0", "ox": "0.5", "roll": "0", "mimic": ""}


def _attr_text(v: Any) -> str:
    return v if isinstance(v, str) else repr(v)


urdf_inputs = st.fixed_dictionaries(
    {},
    optional={k: st.one_of(ANY_SCALAR.map(_attr_text), st.sampled_from(["", " ", "1 2", "nan", "inf", "-inf", "1e309",
                                                                        "fixed", "prismatic", "continuous", "planar"]))
              for k in URDF_FIELDS if k != "mimic"}
    | {"mimic": st.sampled_from(["", '<mimic joint="j1"/>', '<mimic joint="j1" multiplier="inf"/>',
                                 '<mimic joint="nope"/>', '<mimic joint="j2"/>', '<mimic joint="j1" multiplier="1e308" offset="nan"/>'])},
)


def urdf_target(fields: dict[str, str]) -> Any:
    text = URDF.format(**{**URDF_FIELDS, **{k: v.replace('"', "'").replace("<", "").replace("&", "") for k, v in fields.items()}})
    m = rd.load_urdf(text)
    q = np.full(m.nq, 0.3)
    return rd.rnea(m, q, q, q), rd.aba(m, q, q, q), rd.crba(m, q)


# -- 1b. real descriptions, mutated ------------------------------------------------------------

def _real_descriptions() -> dict[str, str]:
    """The bundled robots' URDF text, and a few of example-robot-data's when it is installed."""
    import sysconfig
    from pathlib import Path

    from robot_dynamics.model.registry import robot_files

    texts = {name: robot_files(name)[0].read_text(encoding="utf-8") for name in ("puma560", "iiwa14", "rx90")}
    erd = Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
    for rel in ("ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf",
                "double_pendulum_description/urdf/double_pendulum.urdf"):
        if (erd / rel).is_file():
            texts[rel] = (erd / rel).read_text(encoding="utf-8")
    return texts


_REAL: dict[str, str] = {}
_ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')
_ELEMENT = re.compile(r"<(inertial|mass|inertia|origin|axis|limit|dynamics|mimic|joint|link|parent|child)\b[^>]*?/?>")

real_urdf_inputs = st.tuples(
    st.integers(0, 5),  # which description
    st.sampled_from(["replace", "replace", "replace", "delete", "duplicate", "truncate"]),
    st.integers(0, 10**6),  # where
    st.one_of(ANY_SCALAR.map(_attr_text), st.sampled_from(["", "nan", "-1", "0", "1e309", "1 2", "a b c", "fixed",
                                                           "prismatic", "floating", "base_link", "-0.0 0 0"])),
)


def real_urdf_target(args: tuple[int, str, int, str]) -> Any:
    """A real URDF with one attribute value replaced, one element deleted or duplicated, or cut short."""
    if not _REAL:
        _REAL.update(_real_descriptions())
    which, op, where, value = args
    names = sorted(_REAL)
    text = _REAL[names[which % len(names)]]
    if op == "replace":
        spots = list(_ATTRIBUTE.finditer(text))
        m = spots[where % len(spots)]
        clean = value.replace('"', "'").replace("<", "").replace("&", "")
        text = text[: m.start(2)] + clean + text[m.end(2) :]
    elif op in ("delete", "duplicate"):
        spots = list(_ELEMENT.finditer(text))
        m = spots[where % len(spots)]
        text = text[: m.start()] + (m.group(0) * 2 if op == "duplicate" else "") + text[m.end() :]
    else:
        text = text[: where % len(text)]
    model_ = rd.load_urdf(text)
    q = np.full(model_.nq, 0.3)
    return rd.rnea(model_, q, q, q), rd.aba(model_, q, q, q), rd.crba(model_, q)


# -- 2. joint-properties / drive-train YAML ------------------------------------------------------

JOINT_KEYS = ["viscous", "coulomb", "static_friction", "stribeck", "rotor_inertia", "gear_ratio", "armature", "limits", "lowr"]
sidecar_inputs = st.fixed_dictionaries({"joints": st.dictionaries(
    st.sampled_from(["joint1", "joint2", "joint9", ""]),
    st.one_of(st.dictionaries(st.sampled_from(JOINT_KEYS), st.one_of(ANY_SCALAR, st.dictionaries(
        st.sampled_from(["lower", "upper", "velocity", "effort", "x"]), ANY_SCALAR, max_size=3)), max_size=4),
        ANY_SCALAR),
    max_size=3)}, optional={"elastic": ANY_SCALAR, "inputs": ANY_SCALAR})


def sidecar_target(doc: dict[str, Any]) -> Any:
    m = rd.model.apply_sidecar(model("puma560"), doc)
    q = np.full(6, 0.2)
    return rd.rnea(m, q, q, q), rd.aba(m, q, q, q)


# -- 3. DH tables ----------------------------------------------------------------------------------

DH_KEYS = ["alpha", "d", "theta", "r", "mass", "com", "inertia", "type", "lower", "upper", "damping", "name", "joint"]
dh_inputs = st.lists(st.dictionaries(st.sampled_from(DH_KEYS), st.one_of(ANY_SCALAR, st.lists(EXTREME_FLOATS, max_size=7)),
                                     max_size=8), min_size=0, max_size=3)


def dh_target(links: list[dict[str, Any]]) -> Any:
    base = {"alpha": 0.0, "d": 0.3, "theta": 0.0, "r": 0.0, "mass": 1.0, "com": [0.1, 0, 0],
            "inertia": [0.01, 0, 0, 0.01, 0, 0.01]}
    full = [{**base, "name": f"l{i}", "joint": f"j{i}", **link} for i, link in enumerate(links)]
    m = rd.load_dh_yaml({"name": "fuzz", "convention": "modified", "links": full})
    q = np.full(m.nq, 0.2)
    return rd.rnea(m, q, q, q), rd.aba(m, q, q, q)


# -- 4. dynamics functions -----------------------------------------------------------------------

ARRAYS = st.one_of(
    st.lists(EXTREME_FLOATS, min_size=6, max_size=6),
    st.lists(EXTREME_FLOATS, min_size=0, max_size=8),
    st.lists(st.lists(EXTREME_FLOATS, min_size=6, max_size=6), min_size=1, max_size=3),
    ANY_SCALAR,
    st.lists(st.complex_numbers(max_magnitude=2.0), min_size=6, max_size=6),
)
FUNCTIONS = ["rnea", "aba", "crba", "gravity_torques", "coriolis_matrix", "frame_pose", "jacobian",
             "mechanical_energy", "jacobian_dot_qdot"]
dynamics_inputs = st.tuples(st.sampled_from(FUNCTIONS), ARRAYS, ARRAYS, ARRAYS, st.sampled_from(["puma560", "three_dof_geared", "iiwa14"]))


def dynamics_target(args: tuple[str, Any, Any, Any, str]) -> Any:
    name, a, b, c, robot = args
    m = model(robot)
    if robot != "puma560":
        a, b, c = (np.resize(np.asarray(x, dtype=object), m.nq).tolist() if isinstance(x, list) and len(x) == 6 else x
                   for x in (a, b, c))
    f = getattr(rd, name)
    if name in ("crba", "gravity_torques"):
        return f(m, a)
    if name in ("frame_pose", "jacobian"):
        return f(m, a, m.end_effector)
    if name in ("coriolis_matrix", "mechanical_energy"):
        return f(m, a, b)
    if name == "jacobian_dot_qdot":
        return f(m, a, b, m.end_effector)
    return f(m, a, b, c)


# -- 5. trajectories -------------------------------------------------------------------------------

trajectory_inputs = st.tuples(
    st.sampled_from(["linear", "cubic", "quintic", "bang_bang", "trapezoidal", "continuous_acceleration", "double_s", "sine"]),
    ARRAYS, ARRAYS, st.one_of(st.none(), ARRAYS), st.one_of(st.none(), ARRAYS), st.one_of(st.none(), EXTREME_FLOATS))


def trajectory_target(args: tuple[Any, ...]) -> Any:
    profile, start, goal, kv, ka, duration = args
    from robot_dynamics.trajectory import plan

    traj = plan(profile, start, goal, kv, ka, duration=duration)
    return traj.sample(np.linspace(0.0, min(traj.duration, 1e6), 5)), traj.duration


# -- 6. controllers --------------------------------------------------------------------------------

controller_inputs = st.tuples(
    st.sampled_from(["pid", "pd_gravity", "computed_torque", "task_pid", "task_computed_torque", "lqr"]),
    st.one_of(st.none(), ARRAYS), st.one_of(st.none(), ARRAYS), EXTREME_FLOATS,
    st.lists(st.tuples(ARRAYS, ARRAYS), min_size=1, max_size=3))


def controller_target(args: tuple[Any, ...]) -> Any:
    from robot_dynamics.control import Reference, build_controller

    name, kp, kd, omega, states = args
    m = model("puma560")
    ctrl = build_controller(m, name, kp=kp, kd=kd, omega=omega)
    ref = Reference(np.full(6, 0.1), np.zeros(6), np.zeros(6))
    outs = []
    for k, (q, qd) in enumerate(states):
        out = ctrl.update(0.001 * k, q, qd, ref)  # update never raises: faults are statuses
        outs.append(out.tau)
    return outs


# -- 7. ROS node logic (no rclpy) -------------------------------------------------------------------

PUMA_JOINTS = ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6"]
ros_inputs = st.tuples(st.one_of(st.permutations(PUMA_JOINTS),
                                 st.lists(st.sampled_from(PUMA_JOINTS + ["x", ""]), max_size=7)),
                       st.one_of(ARRAYS, st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6)),
                       st.one_of(ARRAYS, st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6)),
                       EXTREME_FLOATS, st.sampled_from(["", "quintic", "trapezoidal", "nope"]))


def ros_target(args: tuple[Any, ...]) -> Any:
    from robot_dynamics.ros.messages import message_class, service_class
    from robot_dynamics.ros.motion import TrajectoryStreamer

    names, positions, goal, duration, profile = args
    JointState = message_class("sensor_msgs/JointState")
    Plan = service_class("robot_dynamics_interfaces/PlanTrajectory")
    Point = message_class("trajectory_msgs/JointTrajectoryPoint")
    s = TrajectoryStreamer(model("puma560"))

    def floats(x: Any) -> list[float]:
        try:
            return [float(v) for v in np.ravel(np.asarray(x, dtype=float))][:8]
        except Exception:  # noqa: BLE001 - a message field takes floats only
            return []

    s.on_joint_state(JointState(name=list(names), position=floats(positions)))
    d = float(duration) if isinstance(duration, float) else 0.0
    res = s.handle_plan(Plan.Request(goal_positions=floats(goal), duration=d, profile=profile, execute=True),
                        Plan.Response(), Point, now=0.0)
    if not res.success:
        raise rd.InputError(res.message)  # a refusal, in the node's words
    return list(res.trajectory.points[-1].positions) if res.trajectory.points else []


# -- 8. the command line -----------------------------------------------------------------------------

CLI_COMMANDS = {
    "torque": ["--q", "--qd", "--qdd"], "accel": ["--q", "--qd", "--tau"], "mass-matrix": ["--q"],
    "trajectory": ["--goal", "--duration", "--rate", "--velocity", "--profile"], "urdf": [], "info": [],
}
cli_inputs = st.tuples(st.sampled_from(sorted(CLI_COMMANDS)), st.lists(st.tuples(st.sampled_from(
    ["--q", "--qd", "--qdd", "--tau", "--goal", "--duration", "--rate", "--velocity", "--profile", "--robot", "--json", "--bogus"]),
    st.one_of(ANY_SCALAR.map(str), st.lists(EXTREME_FLOATS, min_size=1, max_size=7).map(lambda v: ",".join(map(repr, v))))),
    max_size=3))


def cli_target(args: tuple[str, list[tuple[str, str]]]) -> Any:
    from robot_dynamics.cli import main

    command, options = args
    # files go into a folder of their own, for the subcommands that write any (--out)
    argv = [command, "--out", _CLI_OUT] if command in _writers() else [command]
    for opt, value in options:
        argv += [opt] if opt == "--json" else [f"{opt}={value}"]
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own refusal of an unknown option: exit 2, one usage line
            code = exc.code if isinstance(exc.code, int) else 1
    text = err.getvalue()
    lines = [line for line in text.split("\n") if line.strip()]  # the user's own control characters stay inside
    usage = bool(lines) and lines[0].startswith("usage:")  # argparse's refusal: its usage, then one line
    errors = [line for line in lines if ": error: " in line]
    if code == 2 and len(errors) == 1 and (len(lines) == 1 or usage):
        raise rd.InputError(errors[0])
    if code != 0:
        raise AssertionError(f"exit {code}: {err.getvalue()[-300:]}")
    text = out.getvalue()
    numeric = command in ("torque", "accel", "mass-matrix", "trajectory")  # no optional fields: null is a NaN
    if "nan" in text.lower().split() or (numeric and "null" in text):
        return [math.nan]
    return []


_CLI_OUT = "robot_dynamics_fuzz_out"


@functools.cache
def _writers() -> frozenset[str]:
    """The subcommands that take --out (only those may be given it)."""
    from robot_dynamics.cli import build_parser, subcommand_parser

    parser = build_parser()
    return frozenset(c for c in CLI_COMMANDS
                     if any("--out" in a.option_strings for a in subcommand_parser(parser, c)._actions))

#: name -> (strategy, target)
TARGETS: dict[str, tuple[Any, Callable[[Any], Any]]] = {
    "urdf": (urdf_inputs, urdf_target),
    "real URDFs, mutated": (real_urdf_inputs, real_urdf_target),
    "drive-train YAML": (sidecar_inputs, sidecar_target),
    "DH YAML": (dh_inputs, dh_target),
    "dynamics functions": (dynamics_inputs, dynamics_target),
    "trajectories": (trajectory_inputs, trajectory_target),
    "controllers": (controller_inputs, controller_target),
    "ROS node logic": (ros_inputs, ros_target),
    "CLI": (cli_inputs, cli_target),
}
