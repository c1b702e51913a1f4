"""Entry points of the package and generators of hostile input for them (shared by
``test_fuzz_entry_points.py``, the CI-sized run, and ``bench/fuzz.py``, the long one).

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
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st

import robot_dynamics as rd
from robot_dynamics.errors import ModelWarning, RobotDynamicsError

#: Outcomes of one input.
ACCEPTED, REFUSED, RAW, NONFINITE, WRONG = "accepted", "refused", "raw exception", "silent non-finite", "wrong answer"


class WrongAnswer(AssertionError):
    """A target's own check found an accepted input whose answer is wrong (a silent defect)."""

EXTREME_FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 1e-300, -1e-300, 5e-324, 1e300, -1e300, 1e308, -1e308, math.inf, -math.inf,
                     math.nan, 1e18, 1e30, 2**53 + 1.0]),
    st.floats(-10.0, 10.0),
)
#: Over-long and non-encodable text: 300 and 5,000 characters (past a file name's 255 bytes and
#: a path's 4,096), and lone surrogates (no UTF-8 encoding), wherever a path or a name is taken.
LONG_TEXT = st.builds(lambda c, n: c * n, st.sampled_from(["x", "a/", "\u00e9", "."]), st.sampled_from([300, 5000]))
SURROGATE_TEXT = st.builds(lambda a, s, b: a + s + b, st.text(max_size=4),
                           st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), st.text(max_size=4))
ODD_TEXT = st.one_of(st.text(max_size=12), LONG_TEXT, SURROGATE_TEXT)
#: Huge integers (400 digits) and huge or infinite floats, for every numeric field.
HUGE = st.sampled_from([10**400, -(10**400), 10**20, 1e308, -1e308, 1e300, math.inf, -math.inf, math.nan, 5e-324, -1.0, 0])
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
    """Run ``call``; (outcome, detail). A hostile model that loads may well warn of its issues
    (a ModelWarning: a zeroed mass, a removed effort limit); that is the checks' job, not a defect."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", ModelWarning)
            result = call()
    except RobotDynamicsError as exc:
        return REFUSED, str(exc)[:120]
    except WrongAnswer as exc:
        return WRONG, str(exc)[:120]
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

URDF = """<robot name="{robot}"><link name="base"/>
<link name="a"><inertial><origin xyz="{cx} 0 0"/><mass value="{mass}"/>
  <inertia ixx="{ixx}" ixy="{ixy}" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<link name="b"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
<joint name="{j1}" type="{type}"><parent link="base"/><child link="a"/><axis xyz="{ax} 0 1"/>
  <limit lower="{lo}" upper="{hi}" effort="{effort}" velocity="{vel}"/><dynamics damping="{damp}" friction="{fric}"/></joint>
<joint name="j2" type="revolute"><parent link="a"/><child link="b"/><origin xyz="{ox} 0 0" rpy="{roll} 0 0"/>
  <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/>{mimic}</joint></robot>"""
MIMIC = '<mimic joint="{j1}" multiplier="{multiplier}" offset="{offset}"/>'
URDF_FIELDS = {"cx": "0.1", "mass": "1", "ixx": "0.1", "ixy": "0", "type": "revolute", "ax": "0", "lo": "-1",
               "hi": "1", "effort": "10", "vel": "1", "damp": "0", "fric": "0", "ox": "0.5", "roll": "0", "mimic": "", "robot": "r", "j1": "j1",
               "multiplier": "1", "offset": "0"}
URDF_NAMES = ("robot", "j1")


def _attr_text(v: Any) -> str:
    return v if isinstance(v, str) else repr(v)


NUMERIC_TEXT = st.one_of(ANY_SCALAR.map(_attr_text), HUGE.map(_attr_text), st.sampled_from(["0", "-0", "0.0", "1e-320"]))
urdf_inputs = st.one_of(st.fixed_dictionaries(
    {},
    optional={k: st.one_of(ANY_SCALAR.map(_attr_text), st.sampled_from(["", " ", "1 2", "nan", "inf", "-inf", "1e309",
                                                                        "fixed", "prismatic", "continuous", "planar"]))
              for k in URDF_FIELDS if k not in ("mimic", *URDF_NAMES)}
    | {k: ODD_TEXT for k in URDF_NAMES}
    | {"mimic": st.sampled_from(["", MIMIC, '<mimic joint="nope"/>', '<mimic joint="j2"/>'])},
), st.fixed_dictionaries({"mimic": st.just(MIMIC), "multiplier": NUMERIC_TEXT, "offset": NUMERIC_TEXT}))


def urdf_target(fields: dict[str, str]) -> Any:
    clean = {k: v.replace('"', "'").replace("<", "").replace("&", "") for k, v in fields.items() if k != "mimic"}
    values = {**URDF_FIELDS, **clean}
    values["mimic"] = fields.get("mimic", "").format(**values)
    m = rd.load_urdf(URDF.format(**values))
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

#: Ragged, nested and mixed sequences, wherever an array is taken.
RAGGED = st.one_of(
    st.lists(st.lists(EXTREME_FLOATS, min_size=0, max_size=7), min_size=2, max_size=3),
    st.lists(st.one_of(EXTREME_FLOATS, st.lists(EXTREME_FLOATS, max_size=3)), min_size=1, max_size=7),
    st.recursive(st.floats(-1.0, 1.0), lambda c: st.lists(c, min_size=1, max_size=3), max_leaves=12),
    st.lists(st.one_of(st.floats(-1.0, 1.0), st.text(max_size=3), st.none(), st.integers(-(10**400), 10**400)),
             min_size=6, max_size=6),
)
ARRAYS = st.one_of(
    st.lists(EXTREME_FLOATS, min_size=6, max_size=6),
    RAGGED,
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


#: The derivatives and the linearisation: the same arrays, and any sampling period.
derivative_inputs = st.tuples(st.sampled_from(["rnea_derivatives", "aba_derivatives", "linearize"]), ARRAYS, ARRAYS, ARRAYS,
                              st.sampled_from(["puma560", "three_dof_geared", "iiwa14"]),
                              st.one_of(st.none(), ANY_SCALAR, st.sampled_from([1e-3, 1e300, 5e-324, -1e-3])))


def derivative_target(args: tuple[str, Any, Any, Any, str, Any]) -> Any:
    name, a, b, c, robot, dt = args
    out = dynamics_target((name, a, b, c, robot)) if name != "linearize" else None
    if name == "linearize":
        m = model(robot)
        if robot != "puma560":
            a, b, c = (np.resize(np.asarray(x, dtype=object), m.nq).tolist() if isinstance(x, list) and len(x) == 6 else x
                       for x in (a, b, c))
        out = rd.linearize(m, a, b, c, dt=dt)
    return out


# -- 5. trajectories -------------------------------------------------------------------------------

PROFILE_NAMES = ["linear", "cubic", "quintic", "bang_bang", "trapezoidal", "continuous_acceleration", "double_s", "sine"]
HUGE_FLOATS = st.sampled_from([1e300, -1e300, 1e308, 1e150, 1e-300, 5e-324, 1.0])
trajectory_inputs = st.one_of(
    st.tuples(st.sampled_from(PROFILE_NAMES), ARRAYS, ARRAYS, st.one_of(st.none(), ARRAYS), st.one_of(st.none(), ARRAYS),
              st.one_of(st.none(), EXTREME_FLOATS)),
    # huge displacements, limits and durations, every one finite
    st.tuples(st.sampled_from(PROFILE_NAMES), st.lists(HUGE_FLOATS, min_size=1, max_size=1),
              st.lists(HUGE_FLOATS, min_size=1, max_size=1), st.one_of(st.none(), HUGE_FLOATS),
              st.one_of(st.none(), HUGE_FLOATS), st.one_of(st.none(), HUGE_FLOATS)))


def trajectory_target(args: tuple[Any, ...]) -> Any:
    profile, start, goal, kv, ka, duration = args
    from robot_dynamics.trajectory import plan

    traj = plan(profile, start, goal, kv, ka, duration=duration)
    return traj.sample(np.linspace(0.0, traj.duration, 5)), traj.duration  # the whole motion, however long


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

    names, positions, goal, duration, profile, *period = args
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
    res = s.handle_plan(Plan.Request(goal_positions=floats(goal), duration=d, profile=profile, execute=True,
                                     sample_period=float(period[0]) if period else 0.0),
                        Plan.Response(), Point, now=0.0)
    if not res.success:
        refused(res.message)  # a refusal, in the node's words
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
        argv += [opt] if opt in ("--json", "--no-plot", "--no-bag") else [f"{opt}={value}"]
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
    text = out.getvalue()
    if code == 1 and command == "simulate" and "PLANT DIVERGED" in text:
        return []  # a result, documented: the run happened and the plant diverged (a rate too slow for the gains)
    if code != 0:
        raise AssertionError(f"exit {code}: {err.getvalue()[-300:]}")
    numeric = command in ("torque", "accel", "mass-matrix", "trajectory")  # no optional fields: null is a NaN
    if "nan" in text.lower().split() or (numeric and "null" in text):
        return [math.nan]
    return []


_CLI_OUT = "robot_dynamics_fuzz_out"

# -- 9. the bundled YAML files, mutated: every numeric field, unknown keys, deleted keys -----------

def _config(name: str) -> Any:
    from pathlib import Path

    import yaml

    here = Path(__file__).resolve().parents[1] / "config" / name
    return yaml.safe_load(here.read_text(encoding="utf-8"))


#: (file, how it is loaded): joint properties and drive train on their robot, DH tables alone.
YAML_FILES = (("puma560_drivetrain.yaml", "puma560"), ("three_dof_geared_drivetrain.yaml", "three_dof_geared"),
              ("rx90_drivetrain.yaml", "rx90"), ("puma560_dh.yaml", None), ("rx90_dh.yaml", None),
              ("stanford_dh.yaml", None), ("th8_dh.yaml", None))
_YAML: dict[str, Any] = {}


def _spots(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every (path, value) inside a YAML document, mappings and lists included."""
    out = [(path, doc)]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _spots(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _spots(v, path + (i,))
    return out


yaml_inputs = st.tuples(
    st.integers(0, len(YAML_FILES) - 1), st.sampled_from(["replace", "replace", "replace", "delete", "unknown key"]),
    st.integers(0, 10**6), st.one_of(HUGE, ANY_SCALAR, RAGGED, st.lists(EXTREME_FLOATS, max_size=7)))


def check_model(m: rd.RobotModel, *, from_description: bool) -> None:
    """A loaded model's own consistency: limits ordered and positive; the URDF it writes (DH
    tables) says the same limits."""
    lo, hi = np.asarray(m.lower), np.asarray(m.upper)
    if np.any(lo > hi) or np.any(lo == np.inf) or np.any(hi == -np.inf) or np.any(np.isnan(lo) | np.isnan(hi)):
        raise WrongAnswer(f"limits accepted as lower {lo} upper {hi}")
    for what in ("velocity_limit", "effort_limit"):
        v = np.asarray(getattr(m, what))
        if np.any(~(v > 0)):
            raise WrongAnswer(f"{what} accepted as {v}")
    if from_description:
        back = rd.load_urdf(m.description)
        if not (np.array_equal(back.lower, lo) and np.array_equal(back.upper, hi)):
            raise WrongAnswer(f"its URDF says limits {back.lower}..{back.upper}, the model {lo}..{hi}")


def bare(robot: str) -> rd.RobotModel:
    """A bundled robot from its URDF alone (``load_robot`` applies its YAML already)."""
    key = f"{robot} (bare)"
    if key not in _MODELS:
        from robot_dynamics.model.registry import robot_files

        _MODELS[key] = rd.load_urdf(robot_files(robot)[0])
    return _MODELS[key]


def yaml_target(args: tuple[int, str, int, Any]) -> Any:
    import copy

    which, op, where, value = args
    name, robot = YAML_FILES[which]
    if name not in _YAML:
        _YAML[name] = _config(name)
    doc = copy.deepcopy(_YAML[name])
    spots = [(p, v) for p, v in _spots(doc) if p]
    if op == "unknown key":
        spots = [(p, v) for p, v in _spots(doc) if isinstance(v, dict)]
    path, old = spots[where % len(spots)]
    parent = doc
    for k in path[:-1] if op != "unknown key" else path:
        parent = parent[k]
    if op == "replace":
        parent[path[-1]] = value
    elif op == "delete":
        del parent[path[-1]]
    else:
        parent["tool_frame_x"] = value
    m = rd.load_dh_yaml(doc) if robot is None else rd.model.apply_sidecar(bare(robot), doc)
    if op == "unknown key":
        raise WrongAnswer(f"an unknown key at {list(path)} was accepted")
    check_model(m, from_description=robot is None)
    q = np.full(m.nq, 0.2)
    return rd.rnea(m, q, q, q), rd.aba(m, q, q, q), rd.crba(m, q)


# -- 10. paths and names: over-long and non-encodable text wherever one is taken --------------------

PATH_TAKERS = ["load_urdf", "load_urdf drivetrain", "load_dh_yaml", "apply_sidecar", "CLI info --urdf",
               "CLI info --drivetrain", "CLI torque --robot", "ROS urdf_path", "ROS drivetrain", "ROS robot",
               "frame name", "profile name", "load_robot"]
path_inputs = st.tuples(st.sampled_from(PATH_TAKERS), ODD_TEXT)


def path_target(args: tuple[str, str]) -> Any:
    from robot_dynamics.model.registry import robot_files
    from robot_dynamics.ros.logic import load_model_from_parameters

    taker, text = args
    puma = str(robot_files("puma560")[0])
    if taker == "load_urdf":
        return rd.load_urdf(text).nq
    if taker == "load_urdf drivetrain":
        return rd.load_urdf(puma, drivetrain=text).nq
    if taker == "load_dh_yaml":
        return rd.load_dh_yaml(text).nq
    if taker == "apply_sidecar":
        return rd.model.apply_sidecar(model("puma560"), text).nq
    if taker.startswith("CLI"):
        command, option = taker.split()[1:]
        return cli_target((command, [(option, text)]))
    if taker.startswith("ROS"):
        return load_model_from_parameters({"robot": "puma560", taker.split()[1]: text}).nq
    if taker == "frame name":
        return rd.frame_pose(model("puma560"), np.zeros(6), text)
    if taker == "profile name":
        from robot_dynamics.trajectory import plan

        return plan(text, [0.0], [1.0], duration=1.0).duration
    return rd.load_robot(text).nq


# -- 11. samplers: products of huge durations and rates wherever they size work -------------------

#: Durations and rates: huge, tiny, invalid, and small sane ones. Their products are either
#: refused by a documented maximum or small (the CLI's simulations stop at --max-ticks, 20,000
#: by default: a longer run is asked for explicitly, which these inputs never do).
SIZES = st.one_of(st.sampled_from([1e300, 1e10, 1e6, 5e-324, 1e-300, 0.0, -0.0, -1.0, math.inf, -math.inf, math.nan,
                                   1.0, 0.01, 10**400, -(10**400)]), st.floats(-10.0, 10.0))
SAMPLERS = ["sample_table", "peaks", "task_space_to_joint", "ROS PlanTrajectory", "CLI trajectory", "CLI simulate"]
sampler_inputs = st.tuples(st.sampled_from(SAMPLERS), SIZES, SIZES)


def sampler_target(args: tuple[str, Any, Any]) -> Any:
    from robot_dynamics.trajectory import cartesian_motion, peaks, plan, sample_table, task_space_to_joint

    which, duration, rate = args
    if which == "sample_table":
        return sample_table(plan("quintic", [0.0, 0.0], [1.0, 1.0], duration=duration), rate)[0][-1]
    if which == "peaks":
        return peaks(plan("quintic", [0.0, 0.0], [1.0, 1.0], duration=duration), rate)
    if which == "task_space_to_joint":
        m = model("puma560")
        q0 = np.array([0.0, -0.8, 0.8, 0.0, 0.6, 0.0])
        T0 = rd.frame_pose(m, q0, m.end_effector)
        T1 = T0.copy()
        T1[:3, 3] += [0.02, 0.0, 0.0]
        motion = cartesian_motion(T0, T1, 0.25, 1.0, 1.0, 2.0, duration=duration)
        return task_space_to_joint(m, motion, q0, rate=rate).q[-1]
    if which == "ROS PlanTrajectory":
        period = 1.0 / rate if isinstance(rate, float) and rate != 0.0 else 0.0
        return ros_target((tuple(PUMA_JOINTS), [0.0] * 6, [0.3] * 6, duration if isinstance(duration, float) else 0.0,
                           "quintic", period))
    if which == "CLI trajectory":
        return cli_target(("trajectory", [("--duration", str(duration)), ("--rate", str(rate)), ("--no-plot", "")]))
    return cli_target(("simulate", [("--move-time", str(duration)), ("--settle", "0"), ("--rate", str(rate)),
                                    ("--no-bag", ""), ("--no-plot", "")]))


# -- 12. ROS parameters: every robot-source parameter, any value --------------------------------

ros_param_inputs = st.tuples(st.sampled_from(["robot_description", "urdf_path", "robot", "drivetrain", "gravity"]),
                             st.one_of(ODD_TEXT, ARRAYS, ANY_SCALAR, st.lists(ODD_TEXT, max_size=3)))


def ros_param_target(args: tuple[str, Any]) -> Any:
    from robot_dynamics.ros.logic import load_model_from_parameters

    name, value = args
    return load_model_from_parameters({"robot": "puma560", name: value}).gravity


# -- 13. ROS messages: repeated and oversize name lists in every message -----------------------------

NAME_LISTS = st.one_of(
    st.permutations(PUMA_JOINTS),
    st.lists(st.sampled_from(PUMA_JOINTS + ["x", ""]), max_size=8),
    st.builds(lambda k, n: [PUMA_JOINTS[k]] * n, st.integers(0, 5), st.sampled_from([2, 1000, 100_000])),
    st.builds(lambda n: PUMA_JOINTS + [f"extra{i}" for i in range(n)], st.sampled_from([10, 100_000])),
    st.lists(ODD_TEXT, max_size=3),
)
MESSAGES = ["InverseDynamics", "ForwardDynamics", "MassMatrix", "TrajectoryEffort", "Linearize", "gravity compensation",
            "TrajectoryStreamer joint state", "ControlLoop joint state", "ControlLoop reference", "SimulatedPlant command"]
message_inputs = st.tuples(st.sampled_from(MESSAGES), NAME_LISTS, st.sampled_from(["match", "six", "empty"]))
_SERVICES: dict[str, Any] = {}


def message_target(args: tuple[str, list[str], str]) -> Any:
    from robot_dynamics.ros.logic import DynamicsServices
    from robot_dynamics.ros.messages import message_class, service_class
    from robot_dynamics.ros.motion import ControlLoop, SimulatedPlant, TrajectoryStreamer

    which, names, sizing = args
    m = model("puma560")
    values = [0.1] * (len(names) if sizing == "match" else 6 if sizing == "six" else 0)
    if "dyn" not in _SERVICES:
        _SERVICES["dyn"] = DynamicsServices(m)
    dyn = _SERVICES["dyn"]
    JointState = message_class("sensor_msgs/JointState")
    Point = message_class("trajectory_msgs/JointTrajectoryPoint")
    Trajectory = message_class("trajectory_msgs/JointTrajectory")

    def answered(res: Any) -> Any:
        if not res.success:
            refused(res.message)
        return [list(getattr(res, f, [])) for f in ("efforts", "accelerations", "mass_matrix", "peak_efforts", "a", "b")]

    if which in ("InverseDynamics", "ForwardDynamics", "MassMatrix", "Linearize"):
        srv = service_class(f"robot_dynamics_interfaces/{which}")
        req = srv.Request(joint_names=list(names), positions=values)
        if which in ("ForwardDynamics", "Linearize"):
            req.efforts = values
        handler = {"InverseDynamics": dyn.inverse_dynamics, "ForwardDynamics": dyn.forward_dynamics,
                   "MassMatrix": dyn.mass_matrix, "Linearize": dyn.linearize}[which]
        return answered(handler(req, srv.Response()))
    if which == "TrajectoryEffort":
        srv = service_class("robot_dynamics_interfaces/TrajectoryEffort")
        pts = [Point(positions=values, time_from_start=message_class("builtin_interfaces/Duration")(sec=k))
               for k in range(2)]
        req = srv.Request(trajectory=Trajectory(joint_names=list(names), points=pts))
        return answered(dyn.trajectory_effort(req, srv.Response(), Point))
    state = JointState(name=list(names), position=values, velocity=values)
    if which == "gravity compensation":
        ok, tau, status = dyn.gravity_compensation(state)
        if not ok:
            refused(status)
        return tau
    if which == "TrajectoryStreamer joint state":
        ok, status = TrajectoryStreamer(m).on_joint_state(state)
    elif which == "ControlLoop joint state":
        ok, status = _loop(m, PUMA_JOINTS).on_joint_state(state, 0.0)
    elif which == "ControlLoop reference":
        ok, status = _loop(m, PUMA_JOINTS).on_reference(Trajectory(joint_names=list(names), points=[Point(positions=values)]))
    else:  # the command's joint order is a parameter: the plant and the loop take it at start-up
        plant = SimulatedPlant(m, None, list(names))
        _loop(m, list(names))
        Multi = message_class("std_msgs/Float64MultiArray")
        ok, status = plant.on_command(Multi(data=values), 0.0)
    if not ok:
        refused(status)
    return []


def refused(message: str) -> None:
    """A node's answer success=false: a refusal in its own words, or a bug it caught ("internal error")."""
    if message.startswith("internal error"):
        raise RuntimeError(message)
    raise rd.InputError(message)


def _loop(m: rd.RobotModel, joints: list[str]) -> Any:
    from robot_dynamics.control import build_controller
    from robot_dynamics.ros.motion import ControlLoop

    return ControlLoop(m, build_controller(m, "computed_torque"), joints)


# -- 14. the command line's own sizes and plots (simulate: offsets, gains, times) --------------------

SIM_OPTIONS = ["--offset", "--move-time", "--settle", "--rate", "--omega", "--xi", "--noise", "--mass-error", "--tf-every"]
simulate_inputs = st.lists(st.tuples(st.sampled_from(SIM_OPTIONS), st.one_of(SIZES, st.text(max_size=6), st.none(),
                                                                              st.complex_numbers(max_magnitude=1e3)).map(str)),
                           min_size=1, max_size=2)


def simulate_target(options: list[tuple[str, str]]) -> Any:
    base = {"--move-time": "0.05", "--settle": "0", "--rate": "200"}
    base.update(dict(options))
    return cli_target(("simulate", [*base.items(), ("--no-bag", "")]))


@functools.cache
def _writers() -> frozenset[str]:
    """The subcommands that take --out (only those may be given it)."""
    import argparse

    from robot_dynamics.cli import build_parser

    # argparse's own tree, walked here (not through the CLI's helpers) so the target runs on
    # older versions of the package too (bench/fuzz.py is run on the code before a fix).
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))  # noqa: SLF001
    return frozenset(c for c in CLI_COMMANDS
                     if any("--out" in a.option_strings for a in sub.choices[c]._actions))  # noqa: SLF001

#: name -> (strategy, target)
TARGETS: dict[str, tuple[Any, Callable[[Any], Any]]] = {
    "urdf": (urdf_inputs, urdf_target),
    "real URDFs, mutated": (real_urdf_inputs, real_urdf_target),
    "drive-train YAML": (sidecar_inputs, sidecar_target),
    "DH YAML": (dh_inputs, dh_target),
    "dynamics functions": (dynamics_inputs, dynamics_target),
    "derivatives": (derivative_inputs, derivative_target),
    "trajectories": (trajectory_inputs, trajectory_target),
    "controllers": (controller_inputs, controller_target),
    "ROS node logic": (ros_inputs, ros_target),
    "CLI": (cli_inputs, cli_target),
    "YAML files, mutated": (yaml_inputs, yaml_target),
    "paths and names": (path_inputs, path_target),
    "samplers": (sampler_inputs, sampler_target),
    "ROS parameters": (ros_param_inputs, ros_param_target),
    "ROS messages": (message_inputs, message_target),
    "CLI simulate": (simulate_inputs, simulate_target),
}
