"""robot_dynamics: an ament_python package that pip installs too.

colcon builds it as a ROS 2 package (data files land under share/robot_dynamics, node
executables under lib/robot_dynamics); ``pip install ./robot_dynamics`` installs the library
and the ``robot-dynamics`` command, which need no ROS.
"""

import os
import tempfile
from glob import glob
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

PACKAGE = "robot_dynamics"
HERE = Path(__file__).resolve().parent


def share(subdir: str, pattern: str = "*") -> tuple[str, list[str]]:
    """One data_files entry: every file of ``subdir`` matching ``pattern`` into share/."""
    files = sorted(p for p in glob(f"{subdir}/{pattern}") if Path(p).is_file())
    return (f"share/{PACKAGE}/{subdir}", files)


def long_description() -> str:
    """The repository's README, above this folder; an sdist has no folder above it, but its
    PKG-INFO holds the README it was made with (the metadata's body), so a wheel built from
    the sdist keeps the project's description."""
    readme = HERE.parent / "README.md"
    if readme.is_file():
        return readme.read_text(encoding="utf-8")
    pkg_info = HERE / "PKG-INFO"
    if pkg_info.is_file():
        from email.parser import Parser

        body = Parser().parsestr(pkg_info.read_text(encoding="utf-8")).get_payload()
        return body if isinstance(body, str) else ""
    return ""


class BuildEngine(build_ext):
    """Builds the engine (plain C99): with OpenMP for the batches when the compiler has it
    (gcc's -fopenmp, libgomp), serial batches otherwise, rather than failing."""

    def build_extensions(self) -> None:
        import numpy

        openmp = self._has_openmp()
        for ext in self.extensions:
            ext.include_dirs.append(numpy.get_include())
            if openmp:
                ext.extra_compile_args.append("-fopenmp")
                ext.extra_link_args.append("-fopenmp")
        if not openmp:
            print("robot_dynamics: no OpenMP in this compiler: batches run in one thread")
        super().build_extensions()

    def _has_openmp(self) -> bool:
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "omp.c")
            with open(src, "w") as f:
                f.write("#include <omp.h>\nint main(void) { return omp_get_max_threads() > 0 ? 0 : 1; }\n")
            try:
                objects = self.compiler.compile([src], output_dir=tmp, extra_postargs=["-fopenmp"])
                self.compiler.link_executable(objects, "omp", output_dir=tmp, extra_postargs=["-fopenmp"])
            except Exception:  # noqa: BLE001 - any compiler or linker failure: no OpenMP
                return False
        return True


def engine_build() -> dict[str, list[str]]:
    """The engine library's sources, headers and flags, as src/engine/engine.cmake lists them once
    for both builds (its CMakeLists.txt includes that file): ``{"RD_ENGINE_SOURCES": [...],
    "RD_ENGINE_HEADERS": [...], "RD_ENGINE_FLAGS": [...]}`` from its ``set(NAME words...)`` lines."""
    import re

    text = (HERE / ENGINE_DIR / "engine.cmake").read_text(encoding="utf-8")
    text = re.sub(r"#[^\n]*", "", text)
    return {m[1]: m[2].split() for m in re.finditer(r"\bset\(\s*(\w+)\s+([^)]*)\)", text)}


ENGINE_DIR = "src/engine"
ENGINE_BUILD = engine_build()
#: The CPython side of the extension, which the engine library (robot_dynamics_engine) leaves out.
MODULE_SOURCES = ("module.c", "module_batch.c", "module_path.c", "module_observer.c", "module_task.c")
MODULE_HEADERS = ("module.h",)

# The engine: a top-level private module installed beside the package, so that the package is
# importable from its source tree (the test suite's pythonpath) with the installed engine.
ENGINE = Extension(
    "_robot_dynamics_engine",
    sources=[f"{ENGINE_DIR}/{name}" for name in (*MODULE_SOURCES, *ENGINE_BUILD["RD_ENGINE_SOURCES"])],
    depends=[f"{ENGINE_DIR}/{name}" for name in (*ENGINE_BUILD["RD_ENGINE_HEADERS"], *MODULE_HEADERS, "engine.cmake")],
    extra_compile_args=list(ENGINE_BUILD["RD_ENGINE_FLAGS"]),
)


def engine_package() -> list[tuple[str, list[str]]]:
    """data_files of the CMake package robot_dynamics_engine (share/robot_dynamics_engine): the
    library's sources and headers with the CMakeLists.txt and engine.cmake that build them, and
    cmake/robot_dynamics_engineConfig.cmake, which find_package reads (robot_dynamics_control)."""
    names = [*ENGINE_BUILD["RD_ENGINE_SOURCES"], *ENGINE_BUILD["RD_ENGINE_HEADERS"], "CMakeLists.txt", "engine.cmake"]
    return [("share/robot_dynamics_engine", [f"{ENGINE_DIR}/{name}" for name in names]),
            ("share/robot_dynamics_engine/cmake", [f"{ENGINE_DIR}/cmake/robot_dynamics_engineConfig.cmake"])]


setup(
    name=PACKAGE,
    version="0.1.0",
    description="Robot dynamics from URDF + YAML: inverse/direct dynamics, drive trains, "
    "trajectories, controllers, ROS 2 nodes",
    long_description=long_description(),
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    python_requires=">=3.10",
    packages=find_packages(exclude=["test", "test.*"]),
    package_data={PACKAGE: ["py.typed"]},
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        share("launch", "*.launch.py"),
        share("urdf"),
        share("config"),
        share("rviz"),
        *engine_package(),
    ],
    install_requires=[
        "numpy>=1.24",
        "scipy>=1.10",
        "PyYAML>=6.0",
        "xacro>=2.0",
        "matplotlib>=3.7",
        "rosbags>=0.11",
        "tqdm>=4.66",
    ],
    ext_modules=[ENGINE],
    cmdclass={"build_ext": BuildEngine},
    extras_require={
        # the optional compiled paths of the generated customised model (codegen)
        "fast": ["numba>=0.59"],
        # studies on Dask (robot-dynamics sweep, robot_dynamics.study): Parquet datasets
        "studies": ["dask[distributed]>=2024.1", "pyarrow>=14"],
        # closed forms: the gear train's M_s and C_s, Khalil's grouping rules, operation counts
        "symbolic": ["sympy>=1.12"],
        # what the test suite imports, each for the tests named; every optional module is here
        # too, so that CI (pip install "./robot_dynamics[test]") runs every test instead of
        # skipping those of an extra (test_package_manifest.py checks it)
        "test": [
            "dask[distributed]>=2024.1",  # test_studies.py: studies on a local Dask cluster
            "pyarrow>=14",  # test_studies.py: the Parquet datasets
            "sympy>=1.12",  # test_drivetrain_symbolic, test_base_parameters, test_stewart_opcount/_lagrange
            "pytest>=7.4",
            "hypothesis>=6.90",  # test_fuzz_entry_points.py, test_spatial.py, the property tests
            "pin>=3.0",  # Pinocchio, the peer library of every cross-check (peer.py)
            "mcap-ros2-support>=0.5",  # test_recordings.py: the MCAP recordings decoded independently of rosbags
            "example-robot-data>=4.0",  # test_example_robot_data.py, test_fuzz_entry_points.py: published URDFs
            "numba>=0.59",  # test_codegen.py: the generated model's compiled paths (skipped without it)
            # test_bench_time_optimal.py: the peer of bench/bench_time_optimal.py (skipped without it); its
            # wheels are Linux x86_64 only, and elsewhere pip would compile an older sdist
            "toppra>=0.6; platform_system == 'Linux' and platform_machine == 'x86_64' and python_version < '3.14'",
        ],
        # the documentation site (bash docs/build.sh: the tutorials run, t07 on a Dask cluster)
        # and its browser test (docs/test_site.py)
        "docs": [
            "dask[distributed]>=2024.1",
            "pyarrow>=14",
            "sphinx>=7.2",
            "furo>=2024.1",
            "sphinx-gallery>=0.16",
            "myst-parser>=3.0",
            "selenium>=4.15",
            "pytest>=7.4",
        ],
    },
    zip_safe=False,
    entry_points={
        "console_scripts": [
            "robot-dynamics = robot_dynamics.cli:main",
            "dynamics = robot_dynamics.ros.dynamics_node:main",
            "trajectory = robot_dynamics.ros.trajectory_node:main",
            "controller = robot_dynamics.ros.controller_node:main",
            "simulator = robot_dynamics.ros.simulator_node:main",
        ],
    },
)
