"""package.xml and setup.py declare every package the library imports, as rosdep and pip see them."""

from __future__ import annotations

import ast
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from repo_files import repository_file

PACKAGE = Path(__file__).resolve().parents[2]
LIBRARY = PACKAGE / "robot_dynamics"

# import name -> rosdep key in package.xml
ROSDEP = {
    "numpy": "python3-numpy",
    "scipy": "python3-scipy",
    "yaml": "python3-yaml",
    "numba": "python3-numba",
    "matplotlib": "python3-matplotlib",
    "sympy": "python3-sympy",
    "tqdm": "python3-tqdm",
    "xacro": "xacro",
    "rosbags": "python3-rosbags-pip",
    "ament_index_python": "ament_index_python",
    "rclpy": "rclpy",
    "rcl_interfaces": "rcl_interfaces",
    "std_msgs": "std_msgs",
    "sensor_msgs": "sensor_msgs",
    "trajectory_msgs": "trajectory_msgs",
    "robot_dynamics_interfaces": "robot_dynamics_interfaces",
    "control_msgs": "control_msgs",  # imported only where installed (the FollowJointTrajectory action)
    "launch": "launch",  # the launch files' actions (launch_support builds them)
    "launch_ros": "launch_ros",
    "pinocchio": "pinocchio",  # the optional comparison of `robot-dynamics bench`; a test_depend
}
# no rosdep key: installed with pip beside ROS (the README's install line and the workflow)
PIP_ONLY = {"dask": "dask[distributed]", "pyarrow": "pyarrow"}
# import name -> the distribution in setup.py's install_requires (the core, without ROS)
PIP = {"numpy": "numpy", "scipy": "scipy", "yaml": "PyYAML", "matplotlib": "matplotlib",
       "sympy": "sympy", "tqdm": "tqdm", "xacro": "xacro", "rosbags": "rosbags", **PIP_ONLY}
# import name -> (extra, distribution): optional paths (codegen's compiled customised model)
OPTIONAL = {"numba": ("fast", "numba")}
# the package's own compiled engine, built by setup.py beside the package
ENGINE = "_robot_dynamics_engine"


def imported_packages() -> dict[str, set[str]]:
    """Top-level non-standard-library imports of the library -> the files that import them."""
    found: dict[str, set[str]] = {}
    for path in LIBRARY.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("robot_dynamics", ENGINE):
                    found.setdefault(top, set()).add(str(path.relative_to(LIBRARY)))
    return found


def test_every_import_has_a_rosdep_key_or_a_pip_line():
    imports = imported_packages()
    unknown = sorted(set(imports) - set(ROSDEP) - set(PIP_ONLY))
    assert not unknown, f"imported but neither a rosdep key nor pip-only here: {unknown} ({[sorted(imports[u]) for u in unknown]})"
    root = ET.parse(PACKAGE / "package.xml").getroot()
    declared = {e.text for e in root if e.tag.endswith("depend")}
    missing = sorted(ROSDEP[m] for m in imports if m in ROSDEP and ROSDEP[m] not in declared)
    assert not missing, f"package.xml lacks {missing}"
    tests_only = {e.text for e in root if e.tag == "test_depend"}
    assert "pinocchio" in tests_only and "python3-hypothesis" in tests_only


def test_the_pip_only_packages_are_installed_by_the_readme_and_the_workflow():
    readme = repository_file("README.md").read_text(encoding="utf-8")
    workflow = repository_file(".github", "workflows", "ros.yml").read_text(encoding="utf-8")
    for name, dist in PIP_ONLY.items():
        assert name in imported_packages()
        assert re.search(rf"pip install [^\n]*{re.escape(dist)}", readme), f"README: no pip line installs {dist}"
        assert dist in workflow or f'"{dist}' in workflow, f"workflow: {dist} not installed"


def test_setup_py_requires_what_the_core_imports_and_the_extras_what_they_import():
    """The core's imports are in install_requires; a module behind an extra (studies: dask,
    pyarrow; symbolic: sympy) is in that extra and not in the default install, and in the test
    extra so that the suite covers it."""
    from robot_dynamics._extras import EXTRAS

    setup = (PACKAGE / "setup.py").read_text(encoding="utf-8")
    requires = setup[setup.index("install_requires") : setup.index("extras_require")]
    extras = setup[setup.index("extras_require") :]
    optional = {module: extra for extra, modules in EXTRAS.items() for module in modules}

    def extra_list(name: str) -> str:
        found = re.search(rf'"{name}": \[(.*?)\],', extras, re.S)  # "dask[distributed]" holds a "]"
        assert found, f"setup.py has no extra {name!r}"
        return found.group(1)

    for name in imported_packages():
        if name not in PIP:
            continue
        if name in optional:
            assert f'"{PIP[name]}' in extra_list(optional[name]), f"extra {optional[name]!r} lacks {PIP[name]}"
            assert f'"{PIP[name]}' in extra_list("test"), f"the test extra lacks {PIP[name]}"
            assert f'"{PIP[name]}' not in requires, f"{PIP[name]} belongs to the {optional[name]!r} extra"
        else:
            assert f'"{PIP[name]}' in requires, f"setup.py install_requires lacks {PIP[name]} (imported as {name})"


def test_numba_is_optional_and_the_engine_is_built_by_setup_py():
    setup = (PACKAGE / "setup.py").read_text(encoding="utf-8")
    requires = setup[setup.index("install_requires") : setup.index("ext_modules")]
    extras = setup[setup.index("extras_require") :]
    for name, (extra, dist) in OPTIONAL.items():
        assert f'"{dist}' not in requires, f"{dist} is optional: not in install_requires"
        assert re.search(rf'"{extra}": \[[^\]]*"{dist}', extras), f"setup.py: extra {extra!r} lacks {dist}"
    assert f'"{ENGINE}"' in setup and "ext_modules=[ENGINE]" in setup
    pyproject = (PACKAGE / "pyproject.toml").read_text(encoding="utf-8")
    assert "setuptools" in pyproject and "numpy" in pyproject  # pip's isolated build compiles the engine
    # one list: src/engine/engine.cmake names the library's sources and flags once, for its
    # CMakeLists.txt (robot_dynamics_control's library) and for setup.py, which writes no copy
    engine = PACKAGE / "src" / "engine"
    cmake = (engine / "engine.cmake").read_text(encoding="utf-8")
    library = re.search(r"^set\(RD_ENGINE_SOURCES ([^)]*)\)", cmake, re.M)
    assert library, "src/engine/engine.cmake: RD_ENGINE_SOURCES, the engine's C library sources, not found"
    names = [Path(name).stem for name in library.group(1).split()]
    assert names and "algorithms" in names and "model" in names
    assert 'include("${CMAKE_CURRENT_LIST_DIR}/engine.cmake")' in (engine / "CMakeLists.txt").read_text(encoding="utf-8")
    assert '"engine.cmake"' in setup and 'ENGINE_BUILD["RD_ENGINE_SOURCES"]' in setup
    assert 'ENGINE_BUILD["RD_ENGINE_FLAGS"]' in setup and "-ffp-contract" not in setup, "setup.py: a second flag set"
    sources = [*re.findall(r'"(src/engine/[^"{]+)"', setup), *(f"src/engine/{name}.c" for name in names)]
    for source in sources:
        assert (PACKAGE / source).is_file(), source
    for name in ("module", "module_batch", "module_path", "module_observer", "module_task"):  # the extension's CPython side, not the library's
        assert f'"{name}.c"' in setup and name not in names
    # one source: every C file of the engine but the Python module's is in the library both builds compile
    on_disk = {p.stem for p in engine.glob("*.c")} - {"module", "module_batch", "module_path", "module_observer", "module_task"}
    assert on_disk == set(names), f"src/engine/*.c {sorted(on_disk)} against RD_ENGINE_SOURCES {sorted(names)}"
    root = ET.parse(PACKAGE / "package.xml").getroot()
    assert "python3-dev" in {e.text for e in root if e.tag == "build_depend"}
