"""URDF and xacro loading on the standard library's XML parser.

Geometry (visual, collision, meshes, ``package://`` URIs) is never resolved: dynamics does
not need it, and an unresolvable mesh must not stop a robot from loading. ros2_control
``<transmission>`` elements are kept as raw XML on the side for the drive-train layer.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelError
from .checks import warn_model_issues
from .robot_model import JOINT_TYPES, JointSpec, LinkSpec, RobotModel, build_model, origin_matrix

__all__ = ["parse_urdf", "load_urdf", "read_description"]

_UNSUPPORTED = {"floating", "planar"}


#: The <limit> attributes a description may mark as unlimited (``unlimited="effort velocity"``).
UNLIMITED = ("lower", "upper", "effort", "velocity")

def _floats(text: str | None, n: int, what: str, default: list[float]) -> np.ndarray:
    if text is None:
        return np.array(default, dtype=float)
    try:
        vals = [float(t) for t in text.split()]
    except ValueError:
        raise ModelError(f"{what}: expected {n} numbers, got {text!r}") from None
    if len(vals) != n or not all(np.isfinite(vals)):
        raise ModelError(f"{what}: expected {n} finite numbers, got {text!r}")
    if any(abs(v) > MAX_LENGTH for v in vals):
        raise ModelError(f"{what}: {text!r} is beyond {MAX_LENGTH:g} (m or rad) in magnitude, not a robot's dimension")
    return np.array(vals, dtype=float)


#: Physical ranges checked on load: lengths and angles [m, rad], masses [kg], mimic multipliers.
MAX_LENGTH = 1e4
MAX_MASS = 1e7
MAX_MULTIPLIER = 1e4
#: Smallest |multiplier| of a <mimic>: below it the joint does not move (write it as fixed).
MIN_MULTIPLIER = 1e-6


def _float_attr(elem: ET.Element, attr: str, what: str, default: float) -> float:
    text = elem.get(attr)
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        raise ModelError(f"{what}: attribute {attr!r} must be a number, got {text!r}") from None
    if np.isnan(value):
        raise ModelError(f"{what}: attribute {attr!r} is NaN")
    return value


def _origin(elem: ET.Element | None, what: str) -> np.ndarray:
    if elem is None:
        return np.eye(4)
    xyz = _floats(elem.get("xyz"), 3, f"{what} <origin xyz>", [0.0, 0.0, 0.0])
    rpy = _floats(elem.get("rpy"), 3, f"{what} <origin rpy>", [0.0, 0.0, 0.0])
    return origin_matrix(xyz, rpy)


def _parse_link(elem: ET.Element) -> LinkSpec:
    name = elem.get("name")
    if not name:
        raise ModelError("A <link> has no name attribute")
    inertial = elem.find("inertial")
    if inertial is None:
        return LinkSpec(name)  # massless by the URDF spec
    what = f"link {name!r}"
    mass_el = inertial.find("mass")
    mass = _float_attr(mass_el, "value", f"{what} <mass>", 0.0) if mass_el is not None else 0.0
    I = np.zeros((3, 3))
    in_el = inertial.find("inertia")
    if in_el is not None:
        g = {k: _float_attr(in_el, k, f"{what} <inertia>", 0.0) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        I = np.array(
            [[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]], [g["ixz"], g["iyz"], g["izz"]]]
        )
    T = _origin(inertial.find("origin"), f"{what} <inertial>")
    R = T[:3, :3]
    # The URDF inertia is about the COM in the inertial frame's axes: rotate into link axes.
    return LinkSpec(name, mass=mass, com=T[:3, 3].copy(), inertia=R @ I @ R.T)


def _parse_joint(elem: ET.Element) -> JointSpec:
    name = elem.get("name")
    if not name:
        raise ModelError("A <joint> has no name attribute")
    jtype = elem.get("type")
    what = f"joint {name!r}"
    if jtype in _UNSUPPORTED:
        raise ModelError(
            f"{what} has type {jtype!r}, which robot_dynamics does not model; "
            f"supported joint types: {list(JOINT_TYPES)} (model a floating base as six 1-dof joints)"
        )
    if jtype not in JOINT_TYPES:
        raise ModelError(f"{what} has type {jtype!r}; valid joint types: {list(JOINT_TYPES)}")
    parent, child = elem.find("parent"), elem.find("child")
    if parent is None or child is None or not parent.get("link") or not child.get("link"):
        raise ModelError(f"{what} needs <parent link=...> and <child link=...>")
    axis_el = elem.find("axis")
    axis = _floats(axis_el.get("xyz") if axis_el is not None else None, 3, f"{what} <axis>", [1.0, 0.0, 0.0])
    spec = JointSpec(name, jtype, parent.get("link", ""), child.get("link", ""), _origin(elem.find("origin"), what), axis)
    limit = elem.find("limit")
    if limit is not None:
        spec.effort = abs(_float_attr(limit, "effort", f"{what} <limit>", np.inf))
        spec.velocity = abs(_float_attr(limit, "velocity", f"{what} <limit>", np.inf))
        if jtype in ("revolute", "prismatic"):
            spec.lower = _float_attr(limit, "lower", f"{what} <limit>", 0.0)
            spec.upper = _float_attr(limit, "upper", f"{what} <limit>", 0.0)
            if spec.lower > spec.upper:
                raise ModelError(f"{what}: <limit> lower {spec.lower} is above upper {spec.upper}")
            if spec.lower == np.inf or spec.upper == -np.inf:
                raise ModelError(f"{what}: <limit> lower {spec.lower} / upper {spec.upper} leave no position")
            if spec.lower == spec.upper == 0.0 and limit.get("lower") is None and limit.get("upper") is None:
                spec.lower, spec.upper = -np.inf, np.inf
        # the limits a description written by this package marks as none (urdf_writer: URDF has no
        # unlimited value, so a placeholder stands in the attribute)
        for key in (limit.get("unlimited") or "").split():
            if key not in UNLIMITED:
                raise ModelError(f"{what}: <limit unlimited=...> names {key!r}; valid names: {list(UNLIMITED)}")
            if key in ("lower", "upper") and jtype not in ("revolute", "prismatic"):
                continue
            setattr(spec, key, -np.inf if key == "lower" else np.inf)
    dyn = elem.find("dynamics")
    if dyn is not None:
        spec.damping = _float_attr(dyn, "damping", f"{what} <dynamics>", 0.0)
        spec.friction = _float_attr(dyn, "friction", f"{what} <dynamics>", 0.0)
        if spec.damping < 0 or spec.friction < 0:
            raise ModelError(f"{what}: <dynamics> damping and friction must be >= 0")
        if not (np.isfinite(spec.damping) and np.isfinite(spec.friction)):
            raise ModelError(f"{what}: <dynamics> damping and friction must be finite")
    mimic = elem.find("mimic")
    if mimic is not None:
        target = mimic.get("joint")
        if not target:
            raise ModelError(f"{what}: <mimic> needs a joint attribute")
        spec.mimic = (
            target,
            _float_attr(mimic, "multiplier", f"{what} <mimic>", 1.0),
            _float_attr(mimic, "offset", f"{what} <mimic>", 0.0),
        )
        if not (abs(spec.mimic[1]) <= MAX_MULTIPLIER and abs(spec.mimic[2]) <= MAX_LENGTH):
            raise ModelError(f"{what}: <mimic> multiplier {spec.mimic[1]:g} / offset {spec.mimic[2]:g} out of range "
                             f"(|multiplier| <= {MAX_MULTIPLIER:g}, |offset| <= {MAX_LENGTH:g})")
        if abs(spec.mimic[1]) < MIN_MULTIPLIER:
            # q = 0 * q_target + offset: the joint never moves. Loading it as fixed would hide a
            # typo (a multiplier meant to be 1 or -1); the author is asked to say which it is.
            raise ModelError(
                f"{what}: <mimic> multiplier {spec.mimic[1]:g} makes the joint fixed (its position is always the "
                f"offset {spec.mimic[2]:g}); write it as a fixed joint (type=\"fixed\", the offset in its "
                f"<origin>), or give a multiplier with |multiplier| >= {MIN_MULTIPLIER:g}")
    return spec


def parse_urdf(text: str) -> tuple[str, list[LinkSpec], list[JointSpec], list[ET.Element]]:
    """Parse URDF text into (robot name, links, joints, <transmission> elements).

    Raises:
        ModelError: malformed XML or URDF.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ModelError(f"URDF text: character {exc.object[exc.start]!r} at position {exc.start} has no UTF-8 "
                         "encoding (a lone surrogate); expected UTF-8 text") from None
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ModelError(f"Malformed URDF XML: {exc}") from None
    if root.tag != "robot":
        raise ModelError(f"A URDF's root element must be <robot>, got <{root.tag}>")
    name = root.get("name") or "robot"
    links = [_parse_link(e) for e in root.findall("link")]
    joints = [_parse_joint(e) for e in root.findall("joint")]
    return name, links, joints, root.findall("transmission")


#: Environment variable of the package map: ``name=dir`` entries, or folders to search for
#: packages (a folder with a package.xml, or whose subfolders have one), separated by ``os.pathsep``.
PACKAGE_PATH_ENV = "ROBOT_DYNAMICS_PACKAGE_PATH"


def _package_name(folder: Path) -> str:
    try:
        name = ET.parse(folder / "package.xml").getroot().findtext("name")
    except (ET.ParseError, OSError):
        name = None
    return (name or folder.name).strip()


def package_map(packages: Mapping[str, str | os.PathLike[str]] | None = None) -> dict[str, Path]:
    """The package folders ``$(find pkg)`` and ``package://pkg/`` resolve to.

    ``packages`` (name -> folder) first, then :data:`PACKAGE_PATH_ENV`: ``name=dir`` entries,
    or folders holding a ``package.xml`` (or whose subfolders hold one), named by the
    ``<name>`` of their package.xml.
    """
    found: dict[str, Path] = {}
    for entry in filter(None, os.environ.get(PACKAGE_PATH_ENV, "").split(os.pathsep)):
        if "=" in entry:
            name, _, folder = entry.partition("=")
            found[name.strip()] = Path(folder).expanduser()
            continue
        root = Path(entry).expanduser()
        for cand in [root, *sorted(p for p in root.glob("*") if p.is_dir())] if root.is_dir() else []:
            if (cand / "package.xml").is_file():
                found.setdefault(_package_name(cand), cand)
    for name, folder in (packages or {}).items():
        found[str(name)] = Path(folder).expanduser()
    return found


def resolve_package(name: str, packages: Mapping[str, Path]) -> Path:
    """The folder of package ``name``: the map, else the ament index of a sourced ROS 2.

    Raises:
        ModelError: unknown package; the message says how to give it.
    """
    if name in packages:
        folder = packages[name]
        if not folder.is_dir():
            raise ModelError(f"package {name!r} maps to {str(folder)!r}, which is not a folder")
        return folder
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(name))
    except Exception:  # noqa: BLE001 - no ROS, or the package is not installed there
        pass
    raise ModelError(f"package {name!r} not found: give --package {name}=DIR (Python: packages={{{name!r}: DIR}}) "
                     f"or set {PACKAGE_PATH_ENV}; known packages: {sorted(packages)}")


def resolve_uri(uri: str, packages: Mapping[str, Path]) -> str:
    """``package://pkg/rest`` and ``file://path`` as file-system paths; other strings unchanged."""
    if uri.startswith("package://"):
        name, _, rest = uri[len("package://"):].partition("/")
        return str(resolve_package(name, packages) / rest)
    if uri.startswith("file://"):
        return uri[len("file://"):]
    return uri


@contextmanager
def _xacro_resolving(packages: Mapping[str, Path]) -> Iterator[Any]:
    """xacro with ``$(find pkg)``, ``package://`` and ``file://`` resolved through ``packages``
    (xacro itself asks ament_index_python, which needs a sourced ROS 2)."""
    import xacro
    import xacro.substitution_args as subst

    def find(pkg: str) -> str:
        return str(resolve_package(pkg, packages))

    saved = (subst._eval_find, subst._eval_dict.get("find"), xacro.abs_filename_spec)
    original_abs = xacro.abs_filename_spec
    subst._eval_find = find
    subst._eval_dict["find"] = find
    xacro.abs_filename_spec = lambda spec: original_abs(resolve_uri(spec, packages))
    try:
        yield xacro
    finally:
        subst._eval_find, subst._eval_dict["find"], xacro.abs_filename_spec = saved


def read_description(
    source: str | os.PathLike[str],
    mappings: dict[str, str] | None = None,
    packages: Mapping[str, str | os.PathLike[str]] | None = None,
) -> str:
    """Read a URDF file, expanding xacro when the file is xacro (``.xacro`` or xacro namespace).

    Args:
        source: a file path (``package://`` and ``file://`` accepted).
        mappings: xacro arguments (``name:=value``) when the file is xacro.
        packages: package name -> folder for ``$(find pkg)`` and ``package://`` (see
            :func:`package_map`; :data:`PACKAGE_PATH_ENV` adds to it).
    """
    from .sidecar import is_file

    pmap = package_map(packages)
    path = Path(resolve_uri(os.fspath(source), pmap))
    if not is_file(path, "Robot description", "a .urdf or .xacro file"):
        raise ModelError(f"Robot description file not found: {str(path)[:200]!r} (expected a .urdf or .xacro file)")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ModelError(f"{path.name!r} is not UTF-8 text (expected a .urdf or .xacro file)") from None
    if path.suffix == ".xacro" or "xmlns:xacro" in text:
        with _xacro_resolving(pmap) as xacro:
            try:
                doc = xacro.process_file(str(path), mappings=mappings or {})
            except ModelError:
                raise
            except Exception as exc:  # xacro raises its own XacroException and xml errors
                message = " ".join(str(exc).split())
                raise ModelError(f"xacro could not expand {path.name!r}: {message}") from None
        text = doc.toxml()
    return text


def load_urdf(
    source: str | os.PathLike[str],
    drivetrain: str | os.PathLike[str] | dict[str, Any] | None = None,
    *,
    xacro_args: dict[str, str] | None = None,
    packages: Mapping[str, str | os.PathLike[str]] | None = None,
    strict: bool = False,
) -> RobotModel:
    """Load a robot from a URDF or xacro file, or from URDF text.

    Args:
        source: path of a ``.urdf``/``.xacro`` file, or the URDF XML text itself (as in the
            ``robot_description`` parameter).
        drivetrain: optional YAML path (or an already parsed dict) with joint properties
            (friction, rotor inertia, limits) and the drive train.
        xacro_args: xacro arguments when ``source`` is a xacro file.
        packages: package name -> folder, for ``$(find pkg)`` and ``package://`` in xacro files
            and in ``source`` (without ROS 2; :data:`PACKAGE_PATH_ENV` adds to it).
        strict: refuse any link whose inertia tensor is indefinite beyond 1e-9 of its own
            scale (by default inertias are judged after fixed links are lumped, relative to
            the robot's scale, and round-off is accepted with a warning).

    Returns:
        The immutable :class:`RobotModel`.

    Raises:
        ModelError: missing file, malformed XML, unsupported joint types, broken tree.

    Warns:
        ModelWarning: one per issue of :func:`~robot_dynamics.model.check_model` that the
            drive-train YAML does not declare accepted (a massless moving link, an inertia that
            is not positive definite or breaks the triangle inequality, a joint without effort
            limit), naming the link or joint.
    """
    model = _load_urdf(source, drivetrain, xacro_args=xacro_args, packages=packages, strict=strict)
    warn_model_issues(model)
    return model


def _load_urdf(
    source: str | os.PathLike[str], drivetrain: str | os.PathLike[str] | dict[str, Any] | None = None, **options: Any
) -> RobotModel:
    """:func:`load_urdf` without its warnings (for the loaders that warn themselves); ``options``:
    its keyword arguments ``xacro_args``, ``packages`` and ``strict``."""
    if isinstance(source, str) and source.lstrip().startswith("<"):
        text = source
    else:
        text = read_description(source, options.get("xacro_args"), options.get("packages"))
    name, links, joints, transmissions = parse_urdf(text)
    model = build_model(name, links, joints, description=text, strict=bool(options.get("strict", False)))
    if transmissions:
        model = model.replace(transmissions=tuple(ET.tostring(t, encoding="unicode") for t in transmissions))
    if drivetrain is not None:
        from .sidecar import apply_sidecar

        model = apply_sidecar(model, drivetrain)
    return model
