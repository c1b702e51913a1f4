#!/usr/bin/env bash
# ROS 2 checks that run without ROS 2 installed, in their own virtualenv (.ci-venv-ros/),
# kept apart from the test environment because the typing packages shadow the real rclpy:
#   1. the .srv files of robot_dynamics_interfaces: syntax and field types (pytest);
#   2. colcon discovers the packages with their build types and dependencies (the bring-up
#      after the packages it launches), and the ament_python package installs launch/, rviz/,
#      config/, urdf/ and the node executables;
#   3. mypy type-checks robot_dynamics/ros against rclpy's sources (rclpy-intellisense), the
#      standard message classes (common-interfaces-intellisense) and stubs generated from the
#      real definitions of rcl_interfaces (rosbags' Humble store) and of our .srv files;
#   4. the GitHub Actions workflow (.github/workflows) against the workflow schema.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1
PY=${PYTHON:-python3}
VENV=.ci-venv-ros
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q \
  "mypy>=1.8" "rclpy-intellisense==1.2.0" "common-interfaces-intellisense==0.1.0" \
  "numpy>=1.24" "rosbags>=0.10" "PyYAML>=6.0" "pytest>=7.4" \
  "colcon-core" "colcon-ros" "colcon-python-setup-py" "colcon-package-information" \
  "check-jsonschema>=0.28"
SITE=$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

echo "-- .srv syntax and field types"
# The checker only needs rosbags and the standard library: load the test module by path.
"$VENV/bin/python" - <<'PY'
import importlib.util, sys, pathlib
root = pathlib.Path("robot_dynamics/robot_dynamics/ros")
spec = importlib.util.spec_from_file_location("robot_dynamics_ros_messages", root / "messages.py")
mod = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = mod
spec.loader.exec_module(mod)
bad = []
for name, path in mod.srv_files().items():
    try:
        parsed = mod.parse_srv(name, path.read_text(encoding="utf-8"))
    except Exception as exc:
        bad.append(f"{path}: {exc}")
        continue
    for key, (_, fields) in parsed.items():
        for field, node in fields:
            try:
                mod.message_class(key).__init__  # resolves every nested type
                mod._default(node)
            except Exception as exc:
                bad.append(f"{key}.{field}: {exc}")
if bad:
    print("\n".join(bad)); sys.exit(1)
print(f"{len(mod.srv_files())} .srv files parse and every field type resolves")
PY

echo "-- colcon: package discovery and the ament_python install tree"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$VENV/bin/colcon" list --base-paths . --names-only > "$work/names.txt"
"$VENV/bin/colcon" list --base-paths . > "$work/list.txt"
grep -q "^robot_dynamics_interfaces.*(ros.ament_cmake)" "$work/list.txt" \
  || { cat "$work/list.txt"; echo "robot_dynamics_interfaces is not discovered as ros.ament_cmake"; exit 1; }
grep -q "^robot_dynamics	.*(ros.ament_python)" "$work/list.txt" \
  || { cat "$work/list.txt"; echo "robot_dynamics is not discovered as ros.ament_python"; exit 1; }
grep -q "^robot_dynamics_bringup	.*(ros.ament_cmake)" "$work/list.txt" \
  || { cat "$work/list.txt"; echo "robot_dynamics_bringup is not discovered as ros.ament_cmake"; exit 1; }
# build order: the interfaces before the nodes that use them; the bring-up (arm.launch.py and the
# controllers' configuration) after the three packages it launches
"$VENV/bin/colcon" list --base-paths . --topological-order --names-only | tr '\n' ' ' \
  | grep -q "robot_dynamics_interfaces robot_dynamics" \
  || { echo "colcon does not order robot_dynamics_interfaces before robot_dynamics"; exit 1; }
"$VENV/bin/colcon" list --base-paths . --topological-order --names-only | tail -n 1 | grep -qx robot_dynamics_bringup \
  || { echo "colcon does not order robot_dynamics_bringup after the packages it depends on"; exit 1; }
# its CMake install (ament_cmake: built under ROS only, by .ci/ros.sh) puts both where ros2 launch looks
{ grep -q "install(DIRECTORY launch config DESTINATION share/" robot_dynamics_bringup/CMakeLists.txt \
    && [ -f robot_dynamics_bringup/launch/arm.launch.py ] && [ -f robot_dynamics_bringup/config/controllers.yaml ]; } \
  || { echo "robot_dynamics_bringup does not install launch/arm.launch.py and config/controllers.yaml"; exit 1; }
"$VENV/bin/colcon" --log-base "$work/log" build --base-paths robot_dynamics --build-base "$work/build" \
  --install-base "$work/install" > "$work/colcon.txt" 2>&1 \
  || { cat "$work/colcon.txt"; exit 1; }
share="$work/install/robot_dynamics/share/robot_dynamics"
lib="$work/install/robot_dynamics/lib/robot_dynamics"
missing=0
for f in "$share/launch/sim.launch.py" "$share/launch/dynamics.launch.py" "$share/rviz/robot_dynamics.rviz" \
         "$share/config/dynamics_node.yaml" "$share/config/trajectory_node.yaml" \
         "$share/config/controller_node.yaml" "$share/config/simulator_node.yaml" \
         "$share/urdf/puma560.urdf" \
         "$lib/dynamics" "$lib/trajectory" "$lib/controller" "$lib/simulator"; do
  [ -e "$f" ] || { echo "missing in the colcon install tree: ${f#"$work"/}"; missing=1; }
done
[ "$missing" -eq 0 ] || exit 1
entry_points=$(find "$work/install/robot_dynamics/lib" -path "*robot_dynamics*.egg-info/entry_points.txt" | head -n 1)
for exe in dynamics trajectory controller simulator; do
  grep -q "'console_scripts', '$exe'" "$lib/$exe" \
    && grep -q "^$exe = robot_dynamics.ros.${exe}_node:main" "$entry_points" \
    || { echo "lib/robot_dynamics/$exe does not start robot_dynamics.ros.${exe}_node:main"; exit 1; }
done
echo "install tree: launch files, rviz config, node configs, urdf and the 4 node executables are in place"
# the engine as the CMake package robot_dynamics_engine (share/robot_dynamics_engine), as
# robot_dynamics_control finds it: a project of its own finds it in the install tree and links it
engine="$work/install/robot_dynamics/share/robot_dynamics_engine"
for f in "$engine/cmake/robot_dynamics_engineConfig.cmake" "$engine/CMakeLists.txt" "$engine/engine.cmake" \
         "$engine/engine.h"; do
  [ -e "$f" ] || { echo "missing in the colcon install tree: ${f#"$work"/}"; exit 1; }
done
if command -v cmake > /dev/null; then
  mkdir -p "$work/consumer"
  printf '%s\n' 'cmake_minimum_required(VERSION 3.16)' 'project(consumer LANGUAGES C)' \
    'find_package(robot_dynamics_engine REQUIRED)' 'add_executable(consumer main.c)' \
    'target_link_libraries(consumer robot_dynamics_engine::robot_dynamics_engine)' > "$work/consumer/CMakeLists.txt"
  printf '%s\n' '#include <robot_dynamics_engine/engine.h>' \
    'int main(void) { rd_model_size z; char err[128]; return rd_model_text_size("x", &z, err, sizeof err) == RD_OK; }' \
    > "$work/consumer/main.c"
  { cmake -S "$work/consumer" -B "$work/consumer/build" -DCMAKE_PREFIX_PATH="$work/install/robot_dynamics" \
      && cmake --build "$work/consumer/build" && "$work/consumer/build/consumer"; } > "$work/consumer.txt" 2>&1 \
    || { cat "$work/consumer.txt"; echo "find_package(robot_dynamics_engine) from the install tree failed"; exit 1; }
  echo "install tree: find_package(robot_dynamics_engine) builds and links the engine"
fi

echo "-- mypy: robot_dynamics/ros against the rclpy and message sources"
stubs="$VENV/stubs"
rm -rf "$stubs"
# rclpy-intellisense and common-interfaces-intellisense ship sources without py.typed: mark
# them so that mypy reads them.
for pkg in rclpy builtin_interfaces std_msgs sensor_msgs trajectory_msgs geometry_msgs common_interfaces; do
  [ -d "$SITE/$pkg" ] && touch "$SITE/$pkg/py.typed"
done
"$VENV/bin/python" - "$stubs" <<'PY'
import importlib.util, sys, pathlib
root = pathlib.Path("robot_dynamics/robot_dynamics/ros")
spec = importlib.util.spec_from_file_location("robot_dynamics_ros_messages", root / "messages.py")
mod = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = mod
spec.loader.exec_module(mod)
files = mod.write_stubs(sys.argv[1], {"rcl_interfaces/msg": [], "robot_dynamics_interfaces/srv": []})
print(f"generated {len(files)} stub files")
PY
cat > "$VENV/mypy.ini" <<'INI'
[mypy]
python_version = 3.10
warn_unused_ignores = True
warn_redundant_casts = True
check_untyped_defs = True
disallow_untyped_defs = True
no_implicit_optional = True

[mypy-robot_dynamics.*]
# Only the ROS layer is checked here; the core is the library's own business.
ignore_errors = True
follow_imports = silent

[mypy-robot_dynamics.ros.*]
ignore_errors = False
follow_imports = normal

[mypy-rclpy.*,common_interfaces.*,builtin_interfaces.*,std_msgs.*,sensor_msgs.*,trajectory_msgs.*,geometry_msgs.*]
ignore_errors = True

[mypy-launch,launch.*,launch_ros,launch_ros.*]
# launch is not installed here, and MYPYPATH's robot_dynamics/ holds our launch/ folder: skip it
follow_imports = skip
ignore_missing_imports = True

[mypy-rclpy.impl.implementation_singleton,rclpy._rclpy_pybind11,rcl_interfaces.srv,rosgraph_msgs.*,ament_index_python.*,scipy.*,yaml.*,xacro.*,matplotlib.*,tqdm.*,sympy.*,rosbags.*,numba.*,mcap.*,mcap_ros2.*]
ignore_missing_imports = True
INI
MYPYPATH="$stubs:robot_dynamics" "$VENV/bin/mypy" --config-file "$VENV/mypy.ini" \
  --cache-dir "$VENV/mypy-cache" -p robot_dynamics.ros

echo "-- the GitHub Actions workflow against its schema (Humble and Jazzy containers)"
"$VENV/bin/check-jsonschema" --builtin-schema vendor.github-workflows .github/workflows/*.yml
echo "ROS 2 checks passed"
