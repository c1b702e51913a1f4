"""A study: one closed-loop simulation per point of a grid or a random design, as data.

YAML (the same keys as the :class:`Study` object)::

    name: computed_torque_payload
    robot: puma560                 # or  urdf: arm.urdf   (drivetrain: arm.yaml optional)
    controller: {type: computed_torque, omega: 20.0, xi: 1.0}
    motion: {profile: quintic, duration: 1.0, settle: 0.3}   # start / goal optional
    simulation: {control_rate: 500.0, integrator: rk4}
    axes:
      payload: {link: link6, grid: [0.0, 2.0, 4.0]}          # kg at a link of the plant
      mass_error: {uniform: [-0.3, 0.3]}                     # of the controller's model
    samples: 8                     # draws of the random axes, crossed with the grids
    seed: 0

Every point is one :func:`robot_dynamics.simulation.simulate` run; its values of the axes and
its metrics form one row of the result table. Random values are drawn from a generator seeded
by (study seed, sample, axis), so a study gives the same points however it is executed.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..control.base import DEFAULT_OMEGA
from ..errors import InputError, RobotDynamicsError
from ..model.robot_model import RobotModel

__all__ = ["Axis", "Study", "load_study", "AXES", "CONTROLLERS", "DISTRIBUTIONS"]

#: What an axis may vary, and what it means for the point's run.
AXES = {
    "payload": "mass [kg] added at the origin of `link` of the plant (not known to the controller)",
    "mass_error": "relative error e of the controller's model: link masses and inertias x (1 + e)",
    "omega": "closed-loop bandwidth of the controller [rad/s]",
    "xi": "damping ratio of the controller",
    "friction_scale": "factor on the plant's joint friction (viscous, Coulomb, static)",
    "gear_ratio_scale": "factor s on every gear ratio: rotor inertias x s^2, effort limits x s (plant and controller)",
    "position_noise": "std of the position measurement noise [rad or m]",
    "velocity_noise": "std of the velocity measurement noise [rad/s or m/s]",
    "disturbance": "std [N m] of a constant joint torque disturbance drawn for the point",
    "goal_delta": "displacement of every joint in the move [rad or m] (clipped to the limits)",
    "seed": "seed of the point's noise and disturbance",
}
CONTROLLERS = ("computed_torque", "pd_gravity", "pid")
DISTRIBUTIONS = ("grid", "uniform", "normal", "loguniform", "choice")
_SECTIONS = ("name", "robot", "urdf", "drivetrain", "controller", "motion", "simulation", "axes", "samples", "seed")
_MOTION = ("profile", "duration", "settle", "start", "goal")
_SIMULATION = ("control_rate", "integrator", "substeps", "coulomb_smoothing")


@dataclass(frozen=True)
class Axis:
    """One varied quantity.

    Attributes:
        name: one of :data:`AXES`.
        kind: one of :data:`DISTRIBUTIONS`; ``grid`` and ``choice`` list values, the others
            take two parameters (``uniform``/``loguniform``: low, high; ``normal``: mean, std).
        values: the grid values, the choices, or the two parameters.
        link: the link of a ``payload`` axis.
    """

    name: str
    kind: str
    values: tuple[float, ...]
    link: str | None = None

    @property
    def random(self) -> bool:
        return self.kind != "grid"

    def draw(self, rng: np.random.Generator) -> float:
        """One random value (random axes only)."""
        a = self.values
        if self.kind == "uniform":
            return float(rng.uniform(a[0], a[1]))
        if self.kind == "normal":
            return float(rng.normal(a[0], a[1]))
        if self.kind == "loguniform":
            return float(np.exp(rng.uniform(np.log(a[0]), np.log(a[1]))))
        return float(a[int(rng.integers(0, len(a)))])  # choice


@dataclass(frozen=True)
class Study:
    """A parameter study (see the module docstring for the YAML form).

    Attributes:
        name: names the result folder.
        robot: a bundled robot name (when ``urdf`` is None).
        urdf, drivetrain: a description file (URDF, xacro or DH YAML) and its joint YAML.
        controller: ``{"type": ..., "omega": ..., "xi": ...}``.
        motion: ``{"profile", "duration", "settle", "start", "goal"}``.
        simulation: keyword arguments of :func:`robot_dynamics.simulation.simulate` (control_rate,
            integrator, substeps, coulomb_smoothing).
        axes: the varied quantities, in order (the grid axes' product is in this order).
        samples: draws of the random axes per grid point (1 without random axes).
        seed: seed of the random draws.
        base_dir: folder the relative paths of the file are resolved against.
    """

    name: str
    robot: str = "puma560"
    urdf: str | None = None
    drivetrain: str | None = None
    controller: dict[str, Any] = field(default_factory=lambda: {"type": "computed_torque", "omega": DEFAULT_OMEGA, "xi": 1.0})
    motion: dict[str, Any] = field(default_factory=lambda: {"profile": "quintic", "duration": 1.0, "settle": 0.3})
    simulation: dict[str, Any] = field(default_factory=lambda: {"control_rate": 500.0, "integrator": "rk4"})
    axes: tuple[Axis, ...] = ()
    samples: int = 1
    seed: int = 0
    base_dir: str = "."

    def to_dict(self) -> dict[str, Any]:
        """The study as plain data (what a worker receives, and what the dataset records)."""
        d = asdict(self)
        d["axes"] = [asdict(a) for a in self.axes]
        return d

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Study:
        """Inverse of :meth:`to_dict`."""
        d = dict(d)
        d["axes"] = tuple(Axis(a["name"], a["kind"], tuple(a["values"]), a.get("link")) for a in d["axes"])
        return Study(**d)

    def fingerprint(self) -> str:
        """A hash of everything that decides the rows (a resumed study must match it)."""
        d = self.to_dict()
        d.pop("base_dir")
        return hashlib.sha256(json.dumps(d, sort_keys=True, default=str).encode()).hexdigest()[:16]

    @property
    def n_points(self) -> int:
        n = self.samples
        for a in self.axes:
            if not a.random:
                n *= len(a.values)
        return n


def _number(value: Any, where: str, *, minimum: float | None = None, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: expected a number, got {value!r}")
    v = float(value)
    if not np.isfinite(v):
        raise InputError(f"{where}: expected a finite number, got {value!r}")
    if positive and v <= 0:
        raise InputError(f"{where}: expected a number > 0, got {value!r}")
    if minimum is not None and v < minimum:
        raise InputError(f"{where}: expected a number >= {minimum}, got {value!r}")
    return v


def _keys(section: Any, valid: tuple[str, ...], where: str) -> dict[str, Any]:
    if not isinstance(section, dict):
        raise InputError(f"{where}: expected a mapping with keys {list(valid)}, got {section!r}")
    for key in section:
        if key not in valid:
            raise InputError(f"{where}.{key}: unknown key. Valid keys: {list(valid)}")
    return dict(section)


def _axis(name: str, spec: Any) -> Axis:
    where = f"axes.{name}"
    if name not in AXES:
        raise InputError(f"{where}: unknown axis. Valid axes: {list(AXES)}")
    if isinstance(spec, list):
        spec = {"grid": spec}
    spec = _keys(spec, DISTRIBUTIONS + (("link",) if name == "payload" else ()), where)
    kinds = [k for k in spec if k in DISTRIBUTIONS]
    if len(kinds) != 1:
        raise InputError(f"{where}: give exactly one of {list(DISTRIBUTIONS)}")
    kind = kinds[0]
    raw = spec[kind]
    if not isinstance(raw, list) or not raw:
        raise InputError(f"{where}.{kind}: expected a list of numbers, got {raw!r}")
    values = tuple(_number(v, f"{where}.{kind}") for v in raw)
    if kind in ("uniform", "loguniform", "normal") and len(values) != 2:
        raise InputError(f"{where}.{kind}: expected two numbers ({'mean, std' if kind == 'normal' else 'low, high'}), got {raw!r}")
    if kind in ("uniform", "loguniform") and not values[0] < values[1]:
        raise InputError(f"{where}.{kind}: expected low < high, got {raw!r}")
    if kind == "loguniform" and values[0] <= 0:
        raise InputError(f"{where}.loguniform: bounds must be > 0, got {raw!r}")
    if kind == "normal" and values[1] < 0:
        raise InputError(f"{where}.normal: the std must be >= 0, got {raw!r}")
    link = None
    if name == "payload":
        link = spec.get("link")
        if not isinstance(link, str) or not link:
            raise InputError(f"{where}.link: name the link that carries the payload")
    nonneg = ("payload", "position_noise", "velocity_noise", "disturbance", "seed")
    positive = ("omega", "xi", "friction_scale", "gear_ratio_scale")
    if kind in ("grid", "choice", "uniform", "loguniform"):
        if name in nonneg and min(values) < 0:
            raise InputError(f"{where}: values must be >= 0 ({AXES[name]}), got {raw!r}")
        if name in positive and min(values) <= 0 and kind != "uniform":
            raise InputError(f"{where}: values must be > 0 ({AXES[name]}), got {raw!r}")
        if name in positive and kind == "uniform" and values[0] <= 0:
            raise InputError(f"{where}: values must be > 0 ({AXES[name]}), got {raw!r}")
        if name == "mass_error" and min(values) <= -1:
            raise InputError(f"{where}: a relative error must be > -1, got {raw!r}")
    if name == "seed" and (kind != "grid" or any(v != int(v) for v in values)):
        raise InputError(f"{where}: expected a grid of integer seeds, got {spec!r}")
    return Axis(name, kind, values, link)


def _read_source(source: str | os.PathLike[str] | dict[str, Any]) -> tuple[Any, str]:
    """The parsed study and the folder its relative paths are resolved against ("." for a mapping)."""
    import yaml

    if isinstance(source, dict):
        return source, "."
    path = Path(source)
    if not path.is_file():
        raise InputError(f"study file not found: {str(path)!r}")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        raise InputError(f"study file {path.name!r} is not valid YAML{where}") from None
    return data, str(path.resolve().parent)


def _robot_fields(data: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
    """The checked ``name``, ``robot``, ``urdf`` and ``drivetrain`` of the study."""
    name = data.get("name", "study")
    if not isinstance(name, str) or not name or any(c in name for c in "/\\\0") or name in (".", ".."):
        raise InputError(f"name: expected a plain name for the result folder, got {name!r}")
    robot = data.get("robot", "puma560")
    urdf = data.get("urdf")
    drivetrain = data.get("drivetrain")
    for key, v in (("robot", robot), ("urdf", urdf), ("drivetrain", drivetrain)):
        if v is not None and not isinstance(v, str):
            raise InputError(f"{key}: expected a name or a path, got {v!r}")
    return name, robot, urdf, drivetrain


def _controller(data: dict[str, Any]) -> dict[str, Any]:
    """The ``controller`` section with its defaults: type, omega [rad/s], xi."""
    ctrl = _keys(data.get("controller", {"type": "computed_torque"}), ("type", "omega", "xi"), "controller")
    ctype = ctrl.get("type", "computed_torque")
    if ctype not in CONTROLLERS:
        raise InputError(f"controller.type: expected one of {list(CONTROLLERS)}, got {ctype!r}")
    return {"type": ctype, "omega": _number(ctrl.get("omega", DEFAULT_OMEGA), "controller.omega", positive=True),
            "xi": _number(ctrl.get("xi", 1.0), "controller.xi", positive=True)}


def _motion(data: dict[str, Any]) -> dict[str, Any]:
    """The ``motion`` section with its defaults: profile, duration and settle [s], start, goal."""
    mot = _keys(data.get("motion", {}), _MOTION, "motion")
    motion = {
        "profile": mot.get("profile", "quintic"),
        "duration": _number(mot.get("duration", 1.0), "motion.duration", positive=True),
        "settle": _number(mot.get("settle", 0.3), "motion.settle", minimum=0.0),
        "start": None,
        "goal": None,
    }
    from ..trajectory import PROFILES

    if motion["profile"] not in PROFILES:
        raise InputError(f"motion.profile: expected one of {list(PROFILES)}, got {motion['profile']!r}")
    for key in ("start", "goal"):
        if mot.get(key) is not None:
            v = mot[key]
            if not isinstance(v, list):
                raise InputError(f"motion.{key}: expected a list of joint positions, got {v!r}")
            motion[key] = [_number(x, f"motion.{key}") for x in v]
    return motion


def _simulation(data: dict[str, Any], motion: dict[str, Any]) -> dict[str, Any]:
    """The ``simulation`` section with its defaults, the ticks of one point bounded."""
    sim = _keys(data.get("simulation", {}), _SIMULATION, "simulation")
    from ..simulation import INTEGRATORS

    simulation = {
        "control_rate": _number(sim.get("control_rate", 500.0), "simulation.control_rate", positive=True),
        "integrator": sim.get("integrator", "rk4"),
        "substeps": int(_number(sim.get("substeps", 1), "simulation.substeps", minimum=1)),
        "coulomb_smoothing": _number(sim.get("coulomb_smoothing", 0.0), "simulation.coulomb_smoothing", minimum=0.0),
    }
    if simulation["integrator"] not in INTEGRATORS:
        raise InputError(f"simulation.integrator: expected one of {list(INTEGRATORS)}, got {simulation['integrator']!r}")
    if simulation["control_rate"] > 20_000 or (motion["duration"] + motion["settle"]) * simulation["control_rate"] > 1e7:
        raise InputError("simulation.control_rate: at most 20 kHz and 10^7 ticks per point")
    return simulation


def _design(data: dict[str, Any]) -> tuple[tuple[Axis, ...], int, int]:
    """The checked ``axes``, ``samples`` (8 with random axes, else 1) and ``seed``."""
    axes_raw = data.get("axes", {})
    if not isinstance(axes_raw, dict):
        raise InputError(f"axes: expected a mapping of axis names to values. Valid axes: {list(AXES)}")
    axes = tuple(_axis(k, v) for k, v in axes_raw.items())
    random_axes = any(a.random for a in axes)
    samples = data.get("samples", 8 if random_axes else 1)
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise InputError(f"samples: expected an integer >= 1, got {samples!r}")
    if not random_axes and samples != 1:
        raise InputError("samples: only random axes (uniform, normal, loguniform, choice) are sampled; leave samples out")
    seed = data.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"seed: expected an integer >= 0, got {seed!r}")
    return axes, samples, seed


def load_study(source: str | os.PathLike[str] | dict[str, Any]) -> Study:
    """A :class:`Study` from a YAML file (or an already parsed mapping), fully validated.

    Raises:
        InputError: the field that is wrong and the valid choices, in one line.
    """
    raw, base = _read_source(source)
    data = _keys(raw, _SECTIONS, "study")
    name, robot, urdf, drivetrain = _robot_fields(data)
    controller = _controller(data)
    motion = _motion(data)
    simulation = _simulation(data, motion)
    axes, samples, seed = _design(data)
    study = Study(name, robot, urdf, drivetrain, controller, motion, simulation, axes, samples, seed, base)
    if study.n_points > 1_000_000:
        raise InputError(f"the study has {study.n_points} points; at most 1,000,000 per study")
    _check_robot(study)
    return study


_MODELS: dict[tuple[Any, ...], RobotModel] = {}


def base_model(study: Study) -> RobotModel:
    """The study's robot, loaded once per process."""
    from ..model import apply_sidecar, load_dh_yaml, load_robot, load_urdf

    key = (study.robot, study.urdf, study.drivetrain, study.base_dir)
    model = _MODELS.get(key)
    if model is None:
        drivetrain = None if study.drivetrain is None else str(Path(study.base_dir, study.drivetrain))
        if study.urdf is not None:
            path = Path(study.base_dir, study.urdf)
            model = load_dh_yaml(path, drivetrain=drivetrain) if path.suffix in (".yaml", ".yml") else load_urdf(path, drivetrain=drivetrain)
        else:
            model = load_robot(study.robot)
            if drivetrain is not None:
                model = apply_sidecar(model, drivetrain)
        _MODELS.clear()  # one robot per process at a time: models hold compiled layouts
        _MODELS[key] = model
    return model


def _check_robot(study: Study) -> None:
    """Load the robot once here so that a bad name, file, link or start/goal is refused up front."""
    try:
        model = base_model(study)
    except InputError:
        raise
    except RobotDynamicsError as exc:
        raise InputError(f"robot: {exc}") from None
    for a in study.axes:
        if a.link is not None and a.link not in model.frame_names:
            raise InputError(f"axes.payload.link: unknown link {a.link!r}. Valid links: {list(model.frame_names)}")
    for key in ("start", "goal"):
        v = study.motion[key]
        if v is not None and len(v) != model.nq:
            raise InputError(f"motion.{key}: expected {model.nq} values ordered as {list(model.joint_names)}, got {len(v)}")
