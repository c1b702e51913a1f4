"""Message classes with the real ROS 2 field layout, without ROS: for tests and offline tools.

The nodes never use this module: they import the generated classes (``sensor_msgs.msg`` ...).
Tests use it to build objects that have exactly the fields of ``sensor_msgs/JointState``,
``trajectory_msgs/JointTrajectory``, ``std_msgs/Float64MultiArray`` and the services of
``robot_dynamics_interfaces`` and that construct like rclpy's classes (keyword arguments,
every field defaulted). The field definitions come from the ``rosbags`` type store (the
message definitions of ROS 2 Humble) and from this repository's ``.srv`` files, parsed by
rosbags' message-definition parser.
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "INTERFACES_PACKAGE",
    "SERVICE_NAMES",
    "interfaces_directory",
    "message_class",
    "parse_srv",
    "service_class",
    "srv_files",
]

INTERFACES_PACKAGE = "robot_dynamics_interfaces"
SERVICE_NAMES = ("InverseDynamics", "ForwardDynamics", "MassMatrix", "TrajectoryEffort", "Linearize", "PlanTrajectory",
                 "TimeOptimal")

# rosidl primitive types and their Python default values (rosidl_generator_py).
PRIMITIVE_DEFAULTS: dict[str, Any] = {
    "bool": False,
    "byte": b"\x00",
    "char": 0,
    "float32": 0.0,
    "float64": 0.0,
    "int8": 0,
    "uint8": 0,
    "int16": 0,
    "uint16": 0,
    "int32": 0,
    "uint32": 0,
    "int64": 0,
    "uint64": 0,
    "string": "",
    "wstring": "",
}


def interfaces_directory() -> Path:
    """Folder of the interfaces package (holding ``srv/``): source tree or ament prefix."""
    here = Path(__file__).resolve()
    candidates = [here.parents[3] / INTERFACES_PACKAGE]  # repository root beside robot_dynamics/
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        if prefix:
            candidates.append(Path(prefix) / "share" / INTERFACES_PACKAGE)
    for d in candidates:
        if (d / "srv").is_dir():
            return d
    raise FileNotFoundError(f"{INTERFACES_PACKAGE}/srv not found; looked in {[str(c) for c in candidates]}")


def srv_files() -> dict[str, Path]:
    """``{service name: .srv path}`` of the interfaces package."""
    return {p.stem: p for p in sorted((interfaces_directory() / "srv").glob("*.srv"))}


def _split_srv(text: str) -> tuple[str, str]:
    parts = re.split(r"^---\s*$", text, flags=re.MULTILINE)
    if len(parts) != 2:
        raise ValueError(f"a .srv file needs exactly one '---' separator line, found {len(parts) - 1}")
    return parts[0], parts[1]


def parse_srv(name: str, text: str) -> dict[str, Any]:
    """Parse a .srv text into rosbags field definitions of ``<name>_Request``/``_Response``.

    Returns:
        ``{full type name: (constants, fields)}`` for the request and the response.

    Raises:
        ValueError / rosbags.typesys.TypesysError: syntax errors.
    """
    from rosbags.typesys import get_types_from_msg

    request, response = _split_srv(text)
    types: dict[str, Any] = {}
    types.update(get_types_from_msg(request, f"{INTERFACES_PACKAGE}/srv/{name}_Request"))
    types.update(get_types_from_msg(response, f"{INTERFACES_PACKAGE}/srv/{name}_Response"))
    return types


@lru_cache(maxsize=1)
def _fielddefs() -> dict[str, Any]:
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    defs: dict[str, Any] = {_short(k): v for k, v in store.fielddefs.items()}
    for name, path in srv_files().items():
        for full, definition in parse_srv(name, path.read_text(encoding="utf-8")).items():
            defs[_short(full)] = definition
    return defs


def _short(full: str) -> str:
    """``pkg/srv/msg/X`` or ``pkg/msg/X`` -> ``pkg/X``, the key this module uses."""
    parts = full.split("/")
    return f"{parts[0]}/{parts[-1]}"


def _default(node: tuple[Any, Any]) -> Any:
    kind, arg = node
    kind = int(kind)
    if kind == 1:  # BASE
        return PRIMITIVE_DEFAULTS[arg[0]]
    if kind == 2:  # NAME: nested message
        return message_class(arg)()
    if kind == 3:  # ARRAY (fixed size)
        sub, size = arg
        return [_default(sub) for _ in range(size)]
    return []  # SEQUENCE (bounded or not)


class _Message:
    """Base of the generated classes: keyword construction, all fields defaulted, repr, ==."""

    __slots__: tuple[str, ...] = ()
    _fields: tuple[tuple[str, Any], ...] = ()
    _type: str = ""

    def __init__(self, **kwargs: Any):
        names = {n for n, _ in self._fields}
        unknown = set(kwargs) - names
        if unknown:
            raise AssertionError(f"Invalid arguments passed to constructor: {sorted(unknown)}")
        for n, node in self._fields:
            setattr(self, n, kwargs[n] if n in kwargs else _default(node))

    def get_fields_and_field_types(self) -> dict[str, str]:
        return {n: str(node) for n, node in self._fields}

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(
            _eq(getattr(self, n), getattr(other, n)) for n, _ in self._fields
        )

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n, _ in self._fields)
        return f"{self._type}({inner})"


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)) or hasattr(a, "__array__"):
        return len(a) == len(b) and all(_eq(x, y) for x, y in zip(a, b))
    return bool(a == b)


@lru_cache(maxsize=None)
def message_class(type_name: str) -> type:
    """A class with the fields of ``type_name`` (``"sensor_msgs/msg/JointState"`` or ``"sensor_msgs/JointState"``)."""
    key = _short(type_name)
    defs = _fielddefs()
    if key not in defs:
        raise KeyError(f"Unknown message type {type_name!r}")
    constants, fields = defs[key]
    namespace: dict[str, Any] = {
        "__slots__": tuple(n for n, _ in fields),
        "_fields": tuple(fields),
        "_type": key,
    }
    for cname, _ctype, cvalue in constants:
        namespace[cname] = cvalue
    return type(key.split("/")[-1], (_Message,), namespace)


class _Service:
    Request: type
    Response: type


@lru_cache(maxsize=None)
def service_class(name: str) -> type:
    """A service type with ``.Request`` and ``.Response`` classes, like rclpy's generated ones."""
    return type(
        name,
        (_Service,),
        {
            "Request": message_class(f"{INTERFACES_PACKAGE}/{name}_Request"),
            "Response": message_class(f"{INTERFACES_PACKAGE}/{name}_Response"),
        },
    )


# -- typing stubs for the type check of the nodes (.ci/ros_checks.sh) -------------------------

_PY_TYPES = {
    "bool": "bool",
    "byte": "bytes",
    "char": "int",
    "float32": "float",
    "float64": "float",
    "string": "str",
    "wstring": "str",
}


def _py_type(node: tuple[Any, Any], package: str) -> str:
    kind, arg = node
    kind = int(kind)
    if kind == 1:
        return _PY_TYPES.get(arg[0], "int")
    if kind == 2:
        pkg, name = _short(arg).split("/")
        return name if pkg == package else f"_{pkg}.{name}"
    inner = _py_type(arg[0], package)
    if inner == "float":
        return "Sequence[float]"  # rclpy accepts any sequence and returns array.array('d')
    return f"list[{inner}]"


def _deps(fields: Any) -> set[str]:
    out = set()
    for _, node in fields:
        while int(node[0]) in (3, 4):
            node = node[1][0]
        if int(node[0]) == 2:
            out.add(_short(node[1]).split("/")[0])
    return out


def write_stubs(out_dir: str | os.PathLike[str], packages: dict[str, list[str]]) -> list[Path]:
    """Write ``.pyi`` stubs of message and service classes, rclpy style, for a type checker.

    Args:
        out_dir: stub root (put it on MYPYPATH).
        packages: ``{"rcl_interfaces/msg": [names], "robot_dynamics_interfaces/srv": [names]}``;
            an empty list means every type of that package known here.

    Returns:
        The files written.
    """
    defs = _fielddefs()
    written: list[Path] = []
    for key, names in packages.items():
        package, sub = key.split("/")
        if sub == "srv":
            chosen = names or sorted({k.split("/")[1].rsplit("_", 1)[0] for k in defs
                                      if k.startswith(package + "/") and k.endswith("_Request")})
            types = [f"{n}_{part}" for n in chosen for part in ("Request", "Response")]
        else:
            types = names or sorted(k.split("/")[1] for k in defs if k.startswith(package + "/"))
        deps: set[str] = set()
        body: list[str] = []
        for t in types:
            constants, fields = defs[f"{package}/{t}"]
            deps |= _deps(fields)
            body.append(f"class {t}:")
            for cname, ctype, _ in constants:
                body.append(f"    {cname}: {_PY_TYPES.get(ctype, 'int')}")
            for fname, node in fields:
                body.append(f"    {fname}: {_py_type(node, package)}")
            args = ", ".join(f"{fname}: {_py_type(node, package)} = ..." for fname, node in fields)
            body.append(f"    def __init__(self{', *, ' + args if args else ''}) -> None: ...")
            body.append("")
        if sub == "srv":
            # rclpy's generated service class holds Request and Response as nested classes.
            nested: list[str] = []
            for n in chosen:
                nested.append(f"class {n}:")
                for part in ("Request", "Response"):
                    nested.append(f"    class {part}({n}_{part}):")
                    nested.append("        pass")
                nested.append("")
            body += nested
        deps.discard(package)
        header = ["from typing import Sequence", ""] + [f"import {d}.msg as _{d}" for d in sorted(deps)] + [""]
        root = Path(out_dir) / package
        (root / sub).mkdir(parents=True, exist_ok=True)
        for path, text in ((root / "__init__.pyi", ""), (root / sub / "__init__.pyi", "\n".join(header + body))):
            if not path.exists() or path.parent.name == sub:
                path.write_text(text, encoding="utf-8")
                written.append(path)
    return written
