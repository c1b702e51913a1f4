#!/usr/bin/env bash
# The packages on a real ROS 2, Humble or Jazzy, as a ROS user builds them:
#   bash .ci/ros.sh humble|jazzy
# 1. ROS 2 built from source with its C++ stack (rclcpp, robot_state_publisher, ros2_control with
#    joint_state_broadcaster, the effort controllers and joint_trajectory_controller,
#    topic_based_ros2_control, rviz2): ../shared/ros2-<distro>-cpp, which builds the minimal
#    ../shared/ros2-<distro> first, cached in ~/.cache (Humble about 20 min on 2 cores the first
#    time plus about 40 min for its C++ stack, Jazzy about 6 min plus about 23 min; a prebuilt pack
#    in ../shared/ros2-prebuilt is unpacked instead when one matches; seconds afterwards). Jazzy is
#    built against numpy 2 (the numpy line of .ci/constraints-jazzy.txt), Humble against numpy 1.
#    RVIZ=0 leaves rviz2 out of either (test_rviz.py then skips, naming rviz2).
# 2. The Python dependencies pip-installed into its environment under the distribution's
#    constraints file, .ci/constraints-<distro>.txt (numpy, pyarrow, pin, pytest bounds).
# 3. A workspace as a user makes it: the repository copied whole into src/ (its tracked and
#    untracked-but-not-ignored files, what a clone of the work tree holds), nothing beside it.
# 4. `colcon build` and `colcon test` of every package of the repository (robot_dynamics_interfaces,
#    robot_dynamics, robot_dynamics_control and robot_dynamics_bringup): the whole pytest suite with
#    real rclpy, the rclpy node tests, the launch_testing tests of sim.launch.py and of the
#    bring-up's arm.launch.py (ros2_control: the controllers, their switch, the stop behaviour, the
#    limits, a hardware that cannot load, Ctrl-C), robot_state_publisher's /tf, rviz2's screenshot
#    and the C++ packages' ctest tests (gtest, pytest and launch_testing).
# Fails on any test failure; prints the time of each stage, the counts (per package: pytest's
# build/<pkg>/pytest.xml and ctest's build/<pkg>/test_results/<pkg>/*.xml) and every skip reason.
# RESULTS=<folder> also writes <folder>/skipped-<distro>.txt (test id<TAB>reason) for .ci/run.
set -euo pipefail
distro=${1:-}
case $distro in
  humble) cache=$HOME/.cache/ros2-humble ;;
  jazzy) cache=$HOME/.cache/ros2-jazzy-numpy2 ;;  # its own folder: a numpy-1 build is another
  *) echo "usage: .ci/ros.sh humble|jazzy (got '${distro}')" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
repo=$PWD
constraints=$repo/.ci/constraints-$distro.txt
DISTRO=$(echo "$distro" | tr '[:lower:]' '[:upper:]')
sources_var=ROS2_${DISTRO}_SOURCES
sources=${!sources_var:-$repo/../shared/ros2-$distro}
# The distribution with its C++ stack (rclcpp, robot_state_publisher, ros2_control,
# topic_based_ros2_control, rviz2): ../shared/ros2-<distro>-cpp builds the minimal distribution
# first, then adds the stack into the same install (cached afterwards). ROS2_<DISTRO>_SOURCES
# names another source folder (its build.sh is run the same way).
if [ -z "${!sources_var:-}" ] && [ -f "$repo/../shared/ros2-$distro-cpp/build.sh" ]; then
  sources=$repo/../shared/ros2-$distro-cpp
  # RVIZ=0 leaves rviz2 and rviz_default_plugins out (test_rviz.py then skips, naming rviz2); the
  # rest is the C++ build scripts' default list.
  if [ "${RVIZ:-1}" = 0 ]; then
    export TARGETS="robot_state_publisher rclcpp_components rclcpp_lifecycle rclcpp_action tf2_ros \
      controller_manager joint_state_broadcaster forward_command_controller effort_controllers \
      ros2controlcli topic_based_ros2_control joint_trajectory_controller"
  fi
fi
stages=()
stage_start=$(date +%s)
stage_done() {  # name: record the seconds since the last stage
  local now; now=$(date +%s)
  stages+=("$(printf '%-34s %5d s' "$distro: $1" $((now - stage_start)))")
  echo "   ($1: $((now - stage_start)) s)"
  stage_start=$now
}

echo "-- ROS 2 ${distro} from source"
# The numpy the message packages are compiled against is the constraints file's numpy line.
NUMPY_SPEC=$(sed -n 's/[[:space:]]*#.*//; /^numpy[<>=!~ ]/p' "$constraints" | head -n 1)
[ -n "$NUMPY_SPEC" ] || { echo "$constraints has no numpy line" >&2; exit 2; }
export NUMPY_SPEC
if [ -f "$sources/build.sh" ]; then
  bash "$sources/build.sh" "$cache" 2>&1 | tail -n 3
elif [ -f "$cache/env.sh" ]; then
  echo "no ROS 2 ${distro} sources at $sources (set $sources_var): using the build in $cache"
else
  echo "no ROS 2 ${distro} sources at $sources (set $sources_var) and none built in $cache: skipping"
  exit 0
fi
stage_done "ROS 2 build (cached after the first)"

# rviz2's screenshot test needs a virtual display, Mesa's software OpenGL and ImageMagick's
# `import` (Debian packages; CI runs as root). Without rviz2 the test skips and they are not needed.
if [ -d "$cache/install/share/rviz2" ] && ! { command -v xvfb-run && command -v import; } > /dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    xvfb xauth libgl1-mesa-dri imagemagick > /dev/null
fi

# gtest for robot_dynamics_control's C++ tests (ament_cmake_gtest finds Debian's; the ROS builds
# here have no gtest_vendor). Its CMake fails rather than skip them when gtest is missing.
if ! dpkg -s libgtest-dev > /dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libgtest-dev > /dev/null
fi

set +u  # the ROS setup scripts read unset variables
# shellcheck disable=SC1090,SC1091
source "$cache/env.sh"
set -u
export PIP_DISABLE_PIP_VERSION_CHECK=1
echo "-- Python dependencies under .ci/constraints-$distro.txt"
python3 -m pip install -q -c "$constraints" \
  "scipy>=1.10" "numba>=0.59" "PyYAML>=6.0" "xacro>=2.0" "matplotlib>=3.7" "rosbags>=0.11" \
  "sympy>=1.12" "tqdm>=4.66" "dask[distributed]>=2024.1" pyarrow "hypothesis>=6.90" pin pytest \
  "mcap-ros2-support>=0.5" "example-robot-data>=4.0" 2>&1 | grep -v -e '^WARNING: Location' || true
python3 - <<'PY'
import importlib.metadata as md
import rclpy
names = ("numpy", "scipy", "numba", "pyarrow", "pin", "pytest")
print(", ".join(f"{n} {md.version(n)}" for n in names), f"| rclpy from {rclpy.__file__}")
PY
stage_done "pip install (constraints)"

# A DDS domain of its own: nodes left running on this machine do not talk into the tests
export ROS_DOMAIN_ID=$((RANDOM % 100 + 1))
ws=$(mktemp -d)
trap '[ -n "${KEEP_WS:-}" ] || rm -rf "$ws"' EXIT
echo "-- workspace $ws: the repository in src/robot_dynamics_repo"
mkdir -p "$ws/src/robot_dynamics_repo"
if git -C "$repo" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  git -C "$repo" ls-files -z --cached --others --exclude-standard \
    | tar -C "$repo" --null --ignore-failed-read -T - -cf - 2> /dev/null \
    | tar -C "$ws/src/robot_dynamics_repo" -xf -
else
  cp -r "$repo/." "$ws/src/robot_dynamics_repo/"
fi
cd "$ws"
# every package of the repository (colcon finds them under src/: robot_dynamics_interfaces,
# robot_dynamics, robot_dynamics_control, robot_dynamics_bringup), in dependency order
packages=$(colcon list --names-only | tr '\n' ' ')
echo "packages: $packages"
export MAKEFLAGS=${MAKEFLAGS:--j2}
colcon build --event-handlers console_cohesion- summary+ > build.log 2>&1 \
  || { cat build.log; exit 1; }
tail -n 2 build.log
stage_done "colcon build"

set +u
# shellcheck disable=SC1091
source install/setup.bash
set -u
# --pytest-args reach the ament_python package's pytest; the ament_cmake packages run ctest
# (their gtest and ament_add_pytest_test tests write build/<pkg>/test_results/<pkg>/*.xml)
colcon test --event-handlers console_direct- --pytest-args -q -p no:cacheprovider > test.log 2>&1 || true
stage_done "colcon test"
# colcon test-result exits 1 on a failure: keep going (set -e, pipefail) to name the failures
{ colcon test-result --all || true; } | tail -n 3
status=0
colcon test-result > /dev/null 2>&1 || status=1
python3 - "$distro" "${RESULTS:-}" build <<'PY'
"""Counts and skip reasons from the test result files of every package: pytest's junit XML of
an ament_python package (build/<pkg>/pytest.xml) and what ctest's tests of an ament_cmake package
write (build/<pkg>/test_results/<pkg>/*.xml: gtest's XML, ament_add_pytest_test's junit XML)."""
import collections
import glob
import os
import sys
import xml.etree.ElementTree as ET

distro, results, build = sys.argv[1:4]
paths = sorted(glob.glob(os.path.join(build, "*", "pytest.xml"))
               + glob.glob(os.path.join(build, "*", "test_results", "**", "*.xml"), recursive=True))
if not paths:
    sys.exit(f"no test results under {build}/ (colcon test wrote none)")
counts = collections.Counter()
per_package = collections.defaultdict(collections.Counter)
skipped = []
for path in paths:
    package = os.path.relpath(path, build).split(os.sep)[0]
    kind = "pytest" if os.path.basename(path) == "pytest.xml" or path.endswith(".xunit.xml") else "gtest"
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        bad = case.findall("failure") + case.findall("error")
        skip = case.find("skipped")
        # gtest: GTEST_SKIP gives result="skipped" (and a <skipped> element from 1.11 on), a
        # DISABLED_ test status="notrun"
        gtest_skip = case.get("result") in ("skipped", "suppressed") or case.get("status") == "notrun"
        if bad:
            outcome = "failed"
            print(f"FAILED {package}: {name}")
            print((bad[0].text or bad[0].get("message") or "")[-4000:])
        elif skip is not None or gtest_skip:
            outcome = "skipped"
            message = (skip.get("message") or skip.text or "") if skip is not None else ""
            if not message and gtest_skip:
                message = "disabled (DISABLED_ prefix)" if case.get("status") == "notrun" else "GTEST_SKIP"
            skipped.append((name, message.strip().splitlines()[0] if message.strip() else ""))
        else:
            outcome = "passed"
        counts[outcome] += 1
        per_package[f"{package} ({kind})"][outcome] += 1
print(f"{distro}: {sum(counts.values())} tests, {counts['passed']} passed, {counts['failed']} failed, "
      f"{counts['skipped']} skipped")
for what, c in sorted(per_package.items()):
    print(f"  {what}: {sum(c.values())} tests, {c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped")
for reason, n in collections.Counter(r for _, r in skipped).most_common():
    print(f"  skipped {n:3d}: {reason}")
if results:
    os.makedirs(results, exist_ok=True)
    with open(os.path.join(results, f"skipped-{distro}.txt"), "w", encoding="utf-8") as f:
        f.writelines(f"{name}\t{reason}\n" for name, reason in sorted(skipped))
PY
printf '%s\n' "${stages[@]}"
if [ "$status" -ne 0 ]; then
  echo "colcon test: failures under real ROS 2 ${distro}"
  exit 1
fi
echo "colcon test under ROS 2 ${distro} passed"
