"""The .srv files of robot_dynamics_interfaces: syntax, field types, and the package around them."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from robot_dynamics.ros.messages import (
    PRIMITIVE_DEFAULTS,
    SERVICE_NAMES,
    interfaces_directory,
    parse_srv,
    service_class,
    srv_files,
)

# rosidl's naming rules (rosidl_adapter/parser.py): field names lower snake case, no double
# underscore, no trailing underscore; type names CamelCase.
FIELD_NAME = re.compile(r"^(?!.*__)(?!.*_$)[a-z][a-z0-9_]*$")
TYPE_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*$")

# What each service must offer (issue 6): request fields and response fields with their types.
EXPECTED = {
    "InverseDynamics": (
        {"joint_names": "string[]", "positions": "float64[]", "velocities": "float64[]",
         "accelerations": "float64[]", "wrench_link": "string", "wrench": "geometry_msgs/Wrench"},
        {"joint_names": "string[]", "efforts": "float64[]", "actuator_efforts": "float64[]",
         "success": "bool", "message": "string"},
    ),
    "ForwardDynamics": (
        {"joint_names": "string[]", "positions": "float64[]", "velocities": "float64[]",
         "efforts": "float64[]", "actuator_efforts": "bool"},
        {"joint_names": "string[]", "accelerations": "float64[]", "success": "bool", "message": "string"},
    ),
    "MassMatrix": (
        {"joint_names": "string[]", "positions": "float64[]"},
        {"joint_names": "string[]", "mass_matrix": "float64[]", "size": "uint32", "success": "bool",
         "message": "string"},
    ),
    "TrajectoryEffort": (
        {"trajectory": "trajectory_msgs/JointTrajectory"},
        {"trajectory": "trajectory_msgs/JointTrajectory", "peak_efforts": "float64[]",
         "effort_limits": "float64[]", "feasible": "bool", "violating_joints": "string[]",
         "success": "bool", "message": "string"},
    ),
    "Linearize": (
        {"joint_names": "string[]", "positions": "float64[]", "velocities": "float64[]", "efforts": "float64[]",
         "dt": "float64"},
        {"joint_names": "string[]", "a": "float64[]", "a_rows": "uint32", "a_cols": "uint32", "b": "float64[]",
         "b_rows": "uint32", "b_cols": "uint32", "success": "bool", "message": "string"},
    ),
    "PlanTrajectory": (
        {"joint_names": "string[]", "start_positions": "float64[]", "goal_positions": "float64[]",
         "profile": "string", "duration": "float64", "max_velocities": "float64[]",
         "max_accelerations": "float64[]", "sample_period": "float64", "execute": "bool"},
        {"trajectory": "trajectory_msgs/JointTrajectory", "duration": "float64", "success": "bool",
         "message": "string"},
    ),
    "TimeOptimal": (  # issue 45
        {"path": "trajectory_msgs/JointTrajectory", "max_velocities": "float64[]", "max_accelerations": "float64[]",
         "max_efforts": "float64[]", "max_actuator_efforts": "float64[]", "grid_points": "uint32",
         "sample_period": "float64"},
        {"trajectory": "trajectory_msgs/JointTrajectory", "duration": "float64", "peak_torque_ratio": "float64",
         "success": "bool", "message": "string"},
    ),
}


def _type_string(node) -> str:
    kind, arg = node
    kind = int(kind)
    if kind == 1:
        return arg[0]
    if kind == 2:
        pkg, *_, name = arg.split("/")
        return f"{pkg}/{name}"
    if kind == 3:
        return f"{_type_string(arg[0])}[{arg[1]}]"
    return f"{_type_string(arg[0])}[]" if not arg[1] else f"{_type_string(arg[0])}[<={arg[1]}]"


def _known_types() -> set[str]:
    from rosbags.typesys import Stores, get_typestore

    return {"/".join((k.split("/")[0], k.split("/")[-1])) for k in get_typestore(Stores.ROS2_HUMBLE).fielddefs}


def check_srv(name: str, text: str) -> tuple[list[dict[str, str]], list[str]]:
    """Parse a .srv text; returns ([request fields, response fields], problems found)."""
    problems: list[str] = []
    try:
        parsed = parse_srv(name, text)
    except Exception as exc:  # rosbags' TypesysError or our ValueError: a syntax error
        return [], [f"syntax: {exc}"]
    known = _known_types()
    out = []
    for suffix in ("_Request", "_Response"):
        (key,) = [k for k in parsed if k.endswith(name + suffix)]
        constants, fields = parsed[key]
        types = {f: _type_string(node) for f, node in fields}
        for field, typ in types.items():
            if not FIELD_NAME.match(field):
                problems.append(f"{name}{suffix}.{field}: not a valid rosidl field name")
            base = typ.split("[")[0]
            if base not in PRIMITIVE_DEFAULTS and base not in known:
                problems.append(f"{name}{suffix}.{field}: unknown type {typ}")
        out.append(types)
    return out, problems


def _fields(name):
    fields, problems = check_srv(name, srv_files()[name].read_text(encoding="utf-8"))
    assert problems == []
    return fields


def test_every_service_has_a_file():
    assert sorted(srv_files()) == sorted(SERVICE_NAMES)
    for name in srv_files():
        assert TYPE_NAME.match(name), name


@pytest.mark.parametrize("name", SERVICE_NAMES)
def test_srv_fields_and_types(name):
    request, response = _fields(name)
    assert (request, response) == EXPECTED[name]


@pytest.mark.parametrize(
    "text, problem",
    [
        ("float64 x\n", "separator"),  # no '---'
        ("float64 x\n---\nfloat64 y\n---\nint8 z\n", "separator"),
        ("flaot64 x\n---\n", "unknown type"),  # a typo in a primitive type
        ("float64 x\n---\ngeometry_msgs/Wrenchh w\n", "unknown type"),
        ("float64 1x\n---\n", "syntax"),
        ("float64 Position\n---\n", "not a valid rosidl field name"),
        ("float64 joint__x\n---\n", "not a valid rosidl field name"),
    ],
)
def test_checker_rejects_broken_definitions(text, problem):
    _, problems = check_srv("Broken", text)
    assert any(problem in p for p in problems), problems


def test_cmake_and_package_xml_list_everything():
    root = interfaces_directory()
    cmake = (root / "CMakeLists.txt").read_text(encoding="utf-8")
    for name in SERVICE_NAMES:
        assert f'"srv/{name}.srv"' in cmake
    assert "rosidl_generate_interfaces(${PROJECT_NAME}" in cmake
    pkg = ET.parse(root / "package.xml").getroot()
    assert pkg.get("format") == "3"
    assert pkg.findtext("name") == "robot_dynamics_interfaces"
    assert pkg.findtext("member_of_group") == "rosidl_interface_packages"
    assert pkg.find("export/build_type").text == "ament_cmake"
    buildtool = {e.text for e in pkg.findall("buildtool_depend")}
    assert {"ament_cmake", "rosidl_default_generators"} <= buildtool
    depends = {e.text for e in pkg.findall("depend")}
    used = {t.split("/")[0] for name in SERVICE_NAMES for f in _fields(name) for t in f.values() if "/" in t}
    assert used <= depends, f"message packages used by the .srv files but not depended on: {used - depends}"
    for pkg_name in used:
        assert pkg_name in cmake  # find_package + DEPENDENCIES


def test_request_response_objects_construct_like_rclpy():
    srv = service_class("InverseDynamics")
    req = srv.Request(positions=[0.1, 0.2])
    assert req.velocities == [] and req.wrench_link == "" and req.wrench.force.x == 0.0
    res = srv.Response()
    assert res.success is False and res.message == ""


def test_typing_stubs_follow_the_definitions(tmp_path):
    # The stubs the CI type check uses are generated from the same definitions.
    import ast

    from robot_dynamics.ros.messages import write_stubs

    files = write_stubs(tmp_path, {"robot_dynamics_interfaces/srv": [], "rcl_interfaces/msg": ["ParameterDescriptor"]})
    srv = (tmp_path / "robot_dynamics_interfaces" / "srv" / "__init__.pyi").read_text()
    tree = ast.parse(srv)
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    for name in SERVICE_NAMES:
        nested = {c.name for c in classes[name].body if isinstance(c, ast.ClassDef)}
        assert nested == {"Request", "Response"}
        for part, fields in zip(("Request", "Response"), EXPECTED[name]):
            annotated = {a.target.id: ast.unparse(a.annotation) for a in classes[f"{name}_{part}"].body
                         if isinstance(a, ast.AnnAssign)}
            assert set(annotated) == set(fields)
            for field, typ in fields.items():
                if typ == "float64[]":
                    assert annotated[field] == "Sequence[float]"
                elif typ == "string[]":
                    assert annotated[field] == "list[str]"
    rcl = (tmp_path / "rcl_interfaces" / "msg" / "__init__.pyi").read_text()
    assert "class ParameterDescriptor:" in rcl and "    dynamic_typing: bool" in rcl
    assert len(files) == 4
