"""Robots described by Denavit-Hartenberg tables in YAML (standard DH or Khalil's modified DH).

The source documents describe robots this way (Khalil's Stäubli RX-90, Chen & Wang's geared
example). A table becomes the same :class:`LinkSpec`/:class:`JointSpec` lists as a URDF, so one
builder serves both, and :func:`dh_to_urdf` writes the equivalent URDF.

YAML format::

    name: rx90
    convention: modified          # 'modified' (Khalil, Craig) or 'standard'
    base_link: base_link
    links:
      - name: link1               # the link carried by the joint
        joint: joint1
        type: revolute            # revolute | continuous | prismatic
        alpha: 0.0                # modified: alpha_j, d_j, theta_j, r_j (Khalil)
        d: 0.0                    # standard: theta, d, a, alpha
        theta: 0.0                # constant offset added to the joint angle
        r: 0.0
        limits: {lower: -2.9, upper: 2.9, velocity: 4.0, effort: 150}
        mass: 10.0                # [kg]
        com: [0.0, 0.0, 0.1]      # in the DH frame of the link [m]
        inertia: [0.2, 0, 0, 0.2, 0, 0.05]   # xx xy xz yy yz zz about the COM [kg m^2]
        # or Khalil's standard parameters about O_j:
        # inertia_origin: [XX, XY, XZ, YY, YZ, ZZ]   ms: [MX, MY, MZ]
    tool: {name: tool0, xyz: [0, 0, 0.1], rpy: [0, 0, 0]}   # optional fixed frame
    accepted_model_issues:        # optional: issues of check_model known and meant (no warning)
      link3: {triangle_inequality: "the published parameter set"}

Khalil's modified DH: ``T_{j-1,j} = Rot(x, alpha_j) Trans(x, d_j) Rot(z, theta_j) Trans(z, r_j)``;
standard DH: ``T_{i-1,i} = Rot(z, theta_i) Trans(z, d_i) Trans(x, a_i) Rot(x, alpha_i)``.
"""

from __future__ import annotations

import math
import os
import re
from typing import Any

import numpy as np

from ..errors import ModelError
from ..spatial import homogeneous, rotation_about_axis, skew
from .checks import ACCEPTED_KEY, accepted_issues, warn_model_issues
from .robot_model import JointSpec, LinkSpec, RobotModel, build_model
from .sidecar import read_yaml

__all__ = ["load_dh_yaml", "dh_model", "dh_specs", "modified_dh_transform", "standard_dh_transform"]

_Z = np.array([0.0, 0.0, 1.0])
_X = np.array([1.0, 0.0, 0.0])
CONVENTIONS = ("modified", "standard")
#: The keys of a DH table's top level.
_TOP_KEYS = {"name", "convention", "base_link", "links", "tool", "gravity", ACCEPTED_KEY}
_LINK_KEYS = {
    "name", "joint", "type", "alpha", "d", "theta", "r", "a", "limits", "mass", "com",
    "inertia", "inertia_origin", "ms", "damping", "friction",
}


def _rot(axis: np.ndarray, angle: float) -> np.ndarray:
    return homogeneous(rotation_about_axis(axis, angle), np.zeros(3))


def _trans(axis: np.ndarray, dist: float) -> np.ndarray:
    return homogeneous(np.eye(3), axis * dist)


def modified_dh_transform(alpha: float, d: float, theta: float, r: float) -> np.ndarray:
    """Khalil's T_{j-1,j} = Rot(x, alpha) Trans(x, d) Rot(z, theta) Trans(z, r), (4, 4)."""
    return _rot(_X, alpha) @ _trans(_X, d) @ _rot(_Z, theta) @ _trans(_Z, r)


def standard_dh_transform(theta: float, d: float, a: float, alpha: float) -> np.ndarray:
    """Standard T_{i-1,i} = Rot(z, theta) Trans(z, d) Trans(x, a) Rot(x, alpha), (4, 4)."""
    return _rot(_Z, theta) @ _trans(_Z, d) @ _trans(_X, a) @ _rot(_X, alpha)


def _vec(entry: dict[str, Any], key: str, n: int, where: str) -> np.ndarray | None:
    if key not in entry:
        return None
    v = entry[key]
    if not isinstance(v, (list, tuple)) or len(v) != n:
        raise ModelError(f"{where}.{key}: expected a list of {n} numbers, got {v!r}")
    try:
        arr = np.array([float(x) for x in v])
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{where}.{key}: expected a list of {n} numbers, got {v!r}") from None
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"{where}.{key}: values must be finite")
    return arr


def _num(entry: dict[str, Any], key: str, where: str, default: float = 0.0) -> float:
    v = entry.get(key, default)
    try:
        x = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan
    except OverflowError:  # an integer beyond a double
        x = math.inf
    if not math.isfinite(x):
        raise ModelError(f"{where}.{key}: expected a finite number, got {str(v)[:40]}")
    if abs(x) > 1e4 and key != "mass":
        raise ModelError(f"{where}.{key}: {x:g} is beyond 1e4 (m or rad), not a robot's dimension")
    return x


def _sym(v: np.ndarray) -> np.ndarray:
    xx, xy, xz, yy, yz, zz = v
    return np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def _link_inertia(entry: dict[str, Any], where: str) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, com, inertia about com) in the DH frame of the link."""
    mass = _num(entry, "mass", where)
    if mass < 0:
        raise ModelError(f"{where}.mass: must be >= 0, got {mass}")
    com = _vec(entry, "com", 3, where)
    inertia = _vec(entry, "inertia", 6, where)
    inertia_o = _vec(entry, "inertia_origin", 6, where)
    ms = _vec(entry, "ms", 3, where)
    if inertia_o is not None or ms is not None:
        if inertia is not None or com is not None:
            raise ModelError(f"{where}: give either 'com' + 'inertia' or 'ms' + 'inertia_origin', not both")
        ms = np.zeros(3) if ms is None else ms
        if mass == 0 and np.any(ms):
            raise ModelError(f"{where}.ms: a massless link cannot have a first moment of mass")
        com = ms / mass if mass > 0 else np.zeros(3)
        J_o = _sym(np.zeros(6) if inertia_o is None else inertia_o)
        C = skew(com)
        # Khalil's J_j is about O_j: J_o = I_c - m [c]x^2, so I_c = J_o + m [c]x^2.
        return mass, com, J_o + mass * C @ C
    return mass, np.zeros(3) if com is None else com, _sym(np.zeros(6) if inertia is None else inertia)


_NAME = re.compile(r"[A-Za-z0-9_.\-/]+")


def _urdf_name(value: Any, where: str) -> str:
    """A name the URDF written from the table can hold: letters, digits and ``_ . - /``."""
    text = str(value)
    if not _NAME.fullmatch(text):
        raise ModelError(f"{where}: {text[:40]!r} is not a valid name (use letters, digits and _ . - /, not empty)")
    return text


def _dh_header(data: dict[str, Any]) -> tuple[str, str, str, list[Any]]:
    """``(convention, name, base_link, rows)`` of a DH document, its top-level keys checked."""
    unknown_top = sorted(str(k) for k in set(data) - _TOP_KEYS)
    if unknown_top:
        raise ModelError(f"unknown top-level keys {unknown_top}. Valid keys: {sorted(_TOP_KEYS)}")
    convention = data.get("convention", "modified")
    if convention not in CONVENTIONS:
        raise ModelError(f"convention: {convention!r} is not valid. Valid conventions: {list(CONVENTIONS)}")
    name = _urdf_name(data.get("name", "robot"), "name")
    base = _urdf_name(data.get("base_link", "base_link"), "base_link")
    entries = data.get("links")
    if not isinstance(entries, list) or not entries:
        raise ModelError("links: expected a non-empty list of DH rows")
    return convention, name, base, entries


def _row_names(entry: Any, k: int, where: str) -> tuple[str, str, str]:
    """``(link name, joint name, joint type)`` of DH row ``k``, its keys checked."""
    if not isinstance(entry, dict):
        raise ModelError(f"{where}: expected a mapping")
    unknown = set(entry) - _LINK_KEYS
    if unknown:
        raise ModelError(f"{where}: unknown keys {sorted(unknown)}. Valid keys: {sorted(_LINK_KEYS)}")
    lname = _urdf_name(entry.get("name", f"link{k + 1}"), f"{where}.name")
    jname = _urdf_name(entry.get("joint", f"joint{k + 1}"), f"{where}.joint")
    jtype = entry.get("type", "revolute")
    if jtype not in ("revolute", "continuous", "prismatic"):
        raise ModelError(f"{where}.type: {jtype!r} is not valid. Valid types: ['revolute', 'continuous', 'prismatic']")
    return lname, jname, jtype


def _row_transforms(
    entry: dict[str, Any], where: str, convention: str, pending: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(origin, T_body_dh)`` of a DH row, each (4, 4): the joint origin in the previous body
    and the row's DH frame in the body frame.

    Modified DH: the row's transform is the joint origin, the body frame is the DH frame.
    Standard DH: the origin is ``pending`` (the previous row's constant transform) and the
    row's transform places the DH frame in the body (joint) frame.
    """
    if convention == "modified":
        origin = modified_dh_transform(
            _num(entry, "alpha", where), _num(entry, "d", where), _num(entry, "theta", where), _num(entry, "r", where)
        )
        return origin, np.eye(4)
    T_body_dh = standard_dh_transform(
        _num(entry, "theta", where), _num(entry, "d", where), _num(entry, "a", where), _num(entry, "alpha", where)
    )
    return pending, T_body_dh


def _apply_limits(spec: JointSpec, limits: Any, where: str, jtype: str) -> None:
    """Set the row's ``limits`` mapping on ``spec`` [rad or m, /s, N m or N]; a revolute joint
    without lower and upper becomes continuous."""
    if not isinstance(limits, dict):
        raise ModelError(f"{where}.limits: expected a mapping of lower, upper, velocity, effort")
    unknown_limits = set(limits) - {"lower", "upper", "velocity", "effort"}
    if unknown_limits:
        raise ModelError(f"{where}.limits: unknown keys {sorted(unknown_limits)}. Valid keys: "
                         "['effort', 'lower', 'upper', 'velocity']")
    for key in ("lower", "upper", "velocity", "effort"):
        if key in limits:
            setattr(spec, key, _num(limits, key, f"{where}.limits"))
    for key in ("velocity", "effort"):
        if key in limits and not getattr(spec, key) > 0.0:
            raise ModelError(f"{where}.limits.{key}: must be > 0 (leave it out for no limit), got {limits[key]}")
    if ("lower" in limits) != ("upper" in limits):
        raise ModelError(f"{where}.limits: give both lower and upper, or neither (a revolute joint without them "
                         "is continuous)")
    if "lower" in limits and jtype == "continuous":
        raise ModelError(f"{where}: a continuous joint has no position limits (URDF ignores them); "
                         "remove limits.lower and limits.upper, or make it type: revolute")
    if "lower" in limits and spec.lower > spec.upper:
        raise ModelError(f"{where}.limits: lower {spec.lower} is above upper {spec.upper}")
    if "lower" not in limits:
        if jtype == "prismatic":
            raise ModelError(f"{where}.limits: a prismatic joint needs lower and upper [m] (a URDF has no "
                             "unlimited prismatic joint)")
        spec.type = "continuous"  # what its URDF says too: no position limits
        spec.lower, spec.upper = -np.inf, np.inf


def _tool_frame(tool: Any, flange: np.ndarray, prev: str, convention: str) -> tuple[LinkSpec, JointSpec] | None:
    """The fixed frame after the last row: the ``tool`` entry placed from ``flange`` (4, 4),
    else for standard DH the last DH frame as ``flange``; None for modified DH without a tool."""
    if tool is not None:
        if not isinstance(tool, dict):
            raise ModelError("tool: expected a mapping with name, xyz, rpy")
        unknown_tool = sorted(str(k) for k in set(tool) - {"name", "xyz", "rpy"})
        if unknown_tool:
            raise ModelError(f"tool: unknown keys {unknown_tool}. Valid keys: ['name', 'rpy', 'xyz']")
        from .robot_model import origin_matrix

        xyz = _vec(tool, "xyz", 3, "tool")
        rpy = _vec(tool, "rpy", 3, "tool")
        T_tool = flange @ origin_matrix(np.zeros(3) if xyz is None else xyz, np.zeros(3) if rpy is None else rpy)
        tname = _urdf_name(tool.get("name", "tool0"), "tool.name")
        return LinkSpec(tname), JointSpec(f"{tname}_joint", "fixed", prev, tname, T_tool)
    if convention == "standard":
        # keep the last DH frame (the flange) reachable as a frame
        return LinkSpec("flange"), JointSpec("flange_joint", "fixed", prev, "flange", flange)
    return None


def dh_specs(data: dict[str, Any]) -> tuple[str, list[LinkSpec], list[JointSpec]]:
    """Turn a parsed DH YAML document into (name, links, joints) specs."""
    convention, name, base, entries = _dh_header(data)
    links = [LinkSpec(base)]
    joints: list[JointSpec] = []
    prev = base
    # For standard DH the body frame is the joint frame (frame i-1 moved by q); the constant
    # part of row i becomes the origin of the next joint, and the inertia is carried over.
    pending = np.eye(4)
    for k, entry in enumerate(entries):
        where = f"links[{k}]"
        lname, jname, jtype = _row_names(entry, k, where)
        mass, com, I_c = _link_inertia(entry, where)
        origin, T_body_dh = _row_transforms(entry, where, convention, pending)
        if convention == "standard":
            pending = T_body_dh
        R, p = T_body_dh[:3, :3], T_body_dh[:3, 3]
        links.append(LinkSpec(lname, mass, R @ com + p, R @ I_c @ R.T))
        spec = JointSpec(jname, jtype, prev, lname, origin, _Z.copy())
        _apply_limits(spec, entry.get("limits") or {}, where, jtype)
        spec.damping = _num(entry, "damping", where)
        spec.friction = _num(entry, "friction", where)
        joints.append(spec)
        prev = lname
    flange = pending if convention == "standard" else np.eye(4)
    frame = _tool_frame(data.get("tool"), flange, prev, convention)
    if frame is not None:
        links.append(frame[0])
        joints.append(frame[1])
    return name, links, joints


def load_dh_yaml(
    source: str | os.PathLike[str] | dict[str, Any],
    drivetrain: str | os.PathLike[str] | dict[str, Any] | None = None,
) -> RobotModel:
    """Load a robot from a DH/modified-DH YAML table (see the module docstring).

    Args:
        source: YAML path or parsed dict.
        drivetrain: optional joint-properties / drive-train YAML, as for :func:`load_urdf`.

    Warns:
        ModelWarning: as :func:`load_urdf`, for each issue that neither the table's nor the
            drive-train YAML's ``accepted_model_issues`` declares.
    """
    model = dh_model(source, drivetrain)
    warn_model_issues(model)
    return model


def dh_model(
    source: str | os.PathLike[str] | dict[str, Any],
    drivetrain: str | os.PathLike[str] | dict[str, Any] | None = None,
) -> RobotModel:
    """:func:`load_dh_yaml` without its warnings: for models built from tables in code (Khalil's
    general robot), which have no effort limits to give."""
    data = read_yaml(source, "DH YAML")
    name, links, joints = dh_specs(data)
    from .urdf_writer import specs_to_urdf

    gravity = _vec(data, "gravity", 3, "gravity")
    model = build_model(
        name, links, joints, description=specs_to_urdf(name, links, joints),
        **({"gravity": gravity} if gravity is not None else {}),
    )
    if ACCEPTED_KEY in data:
        model = model.replace(accepted_issues=accepted_issues(model, data[ACCEPTED_KEY]))
    if drivetrain is not None:
        from .sidecar import apply_sidecar

        model = apply_sidecar(model, drivetrain)
    return model
