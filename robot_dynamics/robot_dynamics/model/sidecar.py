"""The YAML sidecar beside a URDF: per-joint friction, rotor inertia and limits.

Format (every key optional; joints are matched by name)::

    joints:
      shoulder:
        viscous: 0.8          # Fv [N m s/rad] (Khalil [7.27])
        coulomb: 1.2          # Fc [N m]
        static_friction: 1.8  # Fst [N m] >= Fc, with stribeck (Khalil [7.26])
        stribeck: 25.0        # B [s/rad]: Fst - Fc decays as exp(-|qd| B)
        rotor_inertia: 2.0e-4 # Jm, motor-side [kg m^2]
        gear_ratio: 62.6      # N = qm_dot / q_dot, so Ia = N^2 Jm (Khalil [7.29])
        # or directly, joint side:  armature: 0.78
        limits: {lower: -2.7, upper: 2.7, velocity: 3.0, effort: 97.6}
    accepted_model_issues:    # issues of check_model known and meant: the loaders do not warn
      link3: {triangle_inequality: "the published parameter set"}

Other top-level sections (the drive train of geared mechanisms) are handed to the handlers
registered in :data:`SECTION_HANDLERS`; an unknown section is an error naming the valid ones.
The whole file is validated before a new model is returned: nothing is applied half.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ..errors import ModelError
from .checks import ACCEPTED_KEY, accepted_issues
from .robot_model import RobotModel

__all__ = ["apply_sidecar", "read_yaml", "SECTION_HANDLERS", "JOINT_KEYS"]

JOINT_KEYS = ("viscous", "coulomb", "static_friction", "stribeck", "rotor_inertia", "gear_ratio", "armature", "limits")
LIMIT_KEYS = ("lower", "upper", "velocity", "effort")

#: Handlers of further top-level sections: name -> f(model, section, whole_document) -> model.
SECTION_HANDLERS: dict[str, Callable[[RobotModel, Any, dict[str, Any]], RobotModel]] = {}


def read_yaml(source: str | os.PathLike[str] | dict[str, Any], what: str = "YAML file") -> dict[str, Any]:
    """Read a YAML mapping from a path (or pass a dict through); ModelError when it is not one."""
    if isinstance(source, dict):
        return source
    path = Path(source)
    if not is_file(path, what, "a YAML file"):
        raise ModelError(f"{what} not found: {str(path)[:200]!r}; expected the path of a YAML file")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ModelError(f"Malformed {what} {path.name!r},{where}: {problem}") from None
    except UnicodeDecodeError:
        raise ModelError(f"{what} {path.name!r} is not UTF-8 text") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ModelError(f"{what} {path.name!r} must hold a mapping at the top level")
    return data


#: The longest path the loaders look up; a longer one is refused before the file system is asked.
MAX_PATH_CHARS = 4096


def is_file(path: str | os.PathLike[str], what: str, expected: str) -> bool:
    """Whether ``path`` names an existing file; ModelError (naming ``what`` and ``expected``) for a
    path the file system cannot take: longer than a path or one of its names may be, or not
    encodable as a file name (a lone surrogate, a NUL character)."""
    text = os.fspath(path)
    shown = f"{text[:60]!r}{'...' if len(text) > 60 else ''}"
    if len(text) > MAX_PATH_CHARS:
        raise ModelError(f"{what} not found: the path {shown} has {len(text)} characters, more than a path may have "
                         f"({MAX_PATH_CHARS}); expected the path of {expected}")
    try:
        return Path(text).is_file()
    except (OSError, ValueError) as exc:  # ENAMETOOLONG; UnicodeEncodeError and NUL are ValueErrors
        reason = ("a name in it is longer than the file system allows (255 bytes)" if isinstance(exc, OSError)
                  else "it cannot be encoded as a file name (a lone surrogate or NUL character)")
        raise ModelError(f"{what} not found: cannot look up the path {shown}: {reason}; expected the path of {expected}") from None


#: The largest magnitude of a number in the YAML (a friction, an inertia, a ratio, a stiffness):
#: anything beyond it is a typo, refused before it overflows a computation later.
MAX_VALUE = 1e12


def yaml_float(value: Any, where: str, too_large: str = "") -> float:
    """A YAML number (not a bool) as a float; ModelError naming ``where`` otherwise, ``too_large``
    ending the message of an integer beyond a double."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ModelError(f"{where}: expected a number, got {value!r}")
    try:
        return float(value)
    except OverflowError:  # a YAML integer with hundreds of digits
        raise ModelError(f"{where}: {str(value)[:20]}... is too large for a number{too_large}") from None


def _number(value: Any, where: str, *, minimum: float | None = None, finite: bool = True) -> float:
    v = yaml_float(value, where)
    if np.isnan(v):
        raise ModelError(f"{where}: NaN is not a valid value")
    if finite and not np.isfinite(v):
        raise ModelError(f"{where}: must be a finite number, got {v}")
    if np.isfinite(v) and abs(v) > MAX_VALUE:
        raise ModelError(f"{where}: {v:g} is beyond any physical value here (|x| <= {MAX_VALUE:g})")
    if minimum is not None and v < minimum:
        raise ModelError(f"{where}: must be >= {minimum}, got {v}")
    return v


def _property_arrays(model: RobotModel) -> dict[str, np.ndarray]:
    """Writable copies of the model's per-joint properties that a sidecar may set, each (nq,),
    keyed as the sidecar names them."""
    return {
        "viscous": model.viscous.copy(),
        "coulomb": model.coulomb.copy(),
        # Khalil [7.26]; NaN: not given here (the model's value, else Fst = Fc, B = 0 below)
        "static_friction": (np.full(model.nq, np.nan) if model.static_friction is None
                            else np.asarray(model.static_friction, float).copy()),
        "stribeck": (np.full(model.nq, np.nan) if model.stribeck is None
                     else np.asarray(model.stribeck, float).copy()),
        "rotor_inertia": model.rotor_inertia.copy(),
        "lower": model.lower.copy(),
        "upper": model.upper.copy(),
        "velocity": model.velocity_limit.copy(),
        "effort": model.effort_limit.copy(),
    }


def _apply_friction(arrays: dict[str, np.ndarray], i: int, props: dict[str, Any], where: str) -> None:
    """Joint i's viscous Fv, Coulomb Fc and static Fst + Stribeck B friction (Khalil [7.26], [7.27])."""
    if "viscous" in props:
        arrays["viscous"][i] = _number(props["viscous"], f"{where}.viscous", minimum=0.0)
    if "coulomb" in props:
        arrays["coulomb"][i] = _number(props["coulomb"], f"{where}.coulomb", minimum=0.0)
    if ("static_friction" in props) != ("stribeck" in props):
        raise ModelError(f"{where}: give 'static_friction' (Fst) and 'stribeck' (B) together (Khalil [7.26])")
    if "static_friction" in props:
        fst = _number(props["static_friction"], f"{where}.static_friction", minimum=0.0)
        if fst < arrays["coulomb"][i]:
            raise ModelError(f"{where}.static_friction: must be >= coulomb ({arrays['coulomb'][i]}), got {fst}")
        arrays["static_friction"][i] = fst
        arrays["stribeck"][i] = _number(props["stribeck"], f"{where}.stribeck", minimum=0.0)


def _apply_rotor_inertia(arrays: dict[str, np.ndarray], i: int, props: dict[str, Any], where: str) -> None:
    """Joint i's rotor inertia Ia [kg m^2 or kg]: the armature, or N^2 Jm from the motor side."""
    if "armature" in props and ("rotor_inertia" in props or "gear_ratio" in props):
        raise ModelError(f"{where}: give either 'armature' or 'rotor_inertia' (+ 'gear_ratio'), not both")
    if "armature" in props:
        arrays["rotor_inertia"][i] = _number(props["armature"], f"{where}.armature", minimum=0.0)
    elif "rotor_inertia" in props or "gear_ratio" in props:
        jm = _number(props.get("rotor_inertia", 0.0), f"{where}.rotor_inertia", minimum=0.0)
        ratio = _number(props.get("gear_ratio", 1.0), f"{where}.gear_ratio")
        if ratio == 0.0:
            raise ModelError(f"{where}.gear_ratio: must be non-zero")
        arrays["rotor_inertia"][i] = ratio**2 * jm  # Khalil [7.29]: Ia = N^2 Jm


def _apply_limits(arrays: dict[str, np.ndarray], i: int, props: dict[str, Any], where: str) -> None:
    """Joint i's position [rad or m], velocity and effort limits; .inf for no limit."""
    limits = props.get("limits") or {}
    if not isinstance(limits, dict):
        raise ModelError(f"{where}.limits: expected a mapping of {list(LIMIT_KEYS)}")
    for lk, lv in limits.items():
        if lk not in LIMIT_KEYS:
            raise ModelError(f"{where}.limits.{lk}: unknown key. Valid keys: {list(LIMIT_KEYS)}")
        value = _number(lv, f"{where}.limits.{lk}", finite=False)
        if lk in ("velocity", "effort") and not value > 0.0:
            raise ModelError(f"{where}.limits.{lk}: must be > 0 (.inf for no limit), got {value}")
        if (lk == "lower" and value == np.inf) or (lk == "upper" and value == -np.inf):
            raise ModelError(f"{where}.limits.{lk}: {value} leaves the joint no position; expected a number, "
                             f"or {'-' if lk == 'lower' else ''}.inf for no limit")
        arrays[lk][i] = value
    if arrays["lower"][i] > arrays["upper"][i]:
        raise ModelError(f"{where}.limits: lower {arrays['lower'][i]} is above upper {arrays['upper'][i]}")


def _static_friction(arrays: dict[str, np.ndarray]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``(static_friction, stribeck)`` of the model, each (nq,), or None when no joint has [7.26]."""
    static, stribeck = None, None
    if np.any(np.isfinite(arrays["static_friction"])):
        # joints without [7.26] keep [7.27]: Fst = Fc makes the static excess vanish
        given = np.isfinite(arrays["static_friction"])
        static = np.where(given, arrays["static_friction"], arrays["coulomb"])
        stribeck = np.where(given, arrays["stribeck"], 0.0)
    return static, stribeck


def apply_sidecar(model: RobotModel, source: str | os.PathLike[str] | dict[str, Any]) -> RobotModel:
    """Return a new model with the sidecar's joint properties (and other sections) applied.

    Raises:
        ModelError: unknown section, unknown joint, unknown key, wrong type or sign; the message
            names the field and the valid choices.
    """
    data = read_yaml(source, "drive-train YAML")
    valid_sections = ["joints", *SECTION_HANDLERS, ACCEPTED_KEY]
    for key in data:
        if key not in valid_sections:
            raise ModelError(f"Unknown section {key!r} in the drive-train YAML. Valid sections: {valid_sections}")

    arrays = _property_arrays(model)
    joints = data.get("joints") or {}
    if not isinstance(joints, dict):
        raise ModelError("Section 'joints' must map joint names to their properties")
    for jname, props in joints.items():
        if jname not in model.joint_names:
            raise ModelError(
                f"joints.{jname}: unknown joint. Valid joints: {list(model.joint_names)}"
            )
        if not isinstance(props, dict):
            raise ModelError(f"joints.{jname}: expected a mapping of {list(JOINT_KEYS)}")
        i = model.joint_index(jname)
        for key in props:
            if key not in JOINT_KEYS:
                raise ModelError(f"joints.{jname}.{key}: unknown key. Valid keys: {list(JOINT_KEYS)}")
        where = f"joints.{jname}"
        _apply_friction(arrays, i, props, where)
        _apply_rotor_inertia(arrays, i, props, where)
        _apply_limits(arrays, i, props, where)

    static, stribeck = _static_friction(arrays)
    new = model.replace(
        viscous=arrays["viscous"],
        coulomb=arrays["coulomb"],
        static_friction=static,
        stribeck=stribeck,
        rotor_inertia=arrays["rotor_inertia"],
        lower=arrays["lower"],
        upper=arrays["upper"],
        velocity_limit=arrays["velocity"],
        effort_limit=arrays["effort"],
    )
    for key, handler in SECTION_HANDLERS.items():
        if key in data:
            new = handler(new, data[key], data)
    if ACCEPTED_KEY in data:  # names checked against the model as the dynamics see it
        new = new.replace(accepted_issues=accepted_issues(new, data[ACCEPTED_KEY]))
    return new
