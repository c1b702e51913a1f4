#!/usr/bin/env bash
# The packages on a real ROS 2 Humble: build Humble from ../shared/ros2-humble (cached in
# ~/.cache/ros2-humble, about 20 minutes the first time on 2 cores, instant afterwards), install
# the Python dependencies into its environment, then `colcon build` both packages and
# `colcon test` them: the whole pytest suite with real rclpy, the rclpy node tests and the
# launch_testing test of sim.launch.py. Fails on any test failure.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
humble=${ROS2_HUMBLE_SOURCES:-$repo/../shared/ros2-humble}
cache=$HOME/.cache/ros2-humble
if [ -f "$humble/build.sh" ]; then
  bash "$humble/build.sh" | tail -n 3
elif [ -f "$cache/env.sh" ]; then
  echo "no ROS 2 Humble sources at $humble: using the Humble already built in $cache"
else
  echo "no ROS 2 Humble sources at $humble and none built in $cache: skipping the real-ROS checks"
  exit 0
fi
set +u  # the ROS setup scripts read unset variables
# shellcheck disable=SC1090,SC1091
source "$cache/env.sh"
set -u
export PIP_DISABLE_PIP_VERSION_CHECK=1
python3 -m pip install -q -c .ci/ros-humble-constraints.txt \
  "scipy>=1.10" "numba>=0.59" "PyYAML>=6.0" "xacro>=2.0" "matplotlib>=3.7" "rosbags>=0.11" \
  "sympy>=1.12" "tqdm>=4.66" "dask[distributed]>=2024.1" pyarrow "hypothesis>=6.90" pin \
  "mcap-ros2-support>=0.5" "example-robot-data>=4.0" 2>&1 | grep -v -e '^WARNING: Location' || true
python3 -c "import numba, numpy, rclpy; print(f'numpy {numpy.__version__}, numba {numba.__version__}, rclpy from {rclpy.__file__}')"

# A DDS domain of its own: nodes left running on this machine do not talk into the tests
export ROS_DOMAIN_ID=$((RANDOM % 100 + 1))
ws=$(mktemp -d)
trap '[ -n "${KEEP_WS:-}" ] || rm -rf "$ws"' EXIT; echo "workspace $ws"
mkdir -p "$ws/src"
cp -r "$repo/robot_dynamics" "$repo/robot_dynamics_interfaces" "$ws/src/"
cp -r "$repo/README.md" "$repo/.github" "$ws/src/"  # the doc and manifest tests read them
cd "$ws"
colcon build --packages-up-to robot_dynamics --event-handlers console_cohesion- summary+ > build.log 2>&1 \
  || { cat build.log; exit 1; }
tail -n 2 build.log
set +u
# shellcheck disable=SC1091
source install/setup.bash
set -u
colcon test --packages-select robot_dynamics_interfaces robot_dynamics --event-handlers console_direct- \
  --pytest-args -q -p no:cacheprovider > test.log 2>&1 || true
# colcon test-result exits 1 on a failure: keep going (set -e, pipefail) to name the failures
{ colcon test-result --all || true; } | tail -n 5
if ! colcon test-result > /dev/null 2>&1; then
  python3 - build/*/pytest.xml <<'PY'
import sys
import xml.etree.ElementTree as ET
for path in sys.argv[1:]:
    for case in ET.parse(path).getroot().iter("testcase"):
        for bad in case.findall("failure") + case.findall("error"):
            print(f"FAILED {case.get('classname')}::{case.get('name')}")
            print((bad.text or bad.get("message") or "")[-4000:])
PY
  echo "colcon test: failures under real ROS 2 Humble"
  exit 1
fi
echo "colcon test under ROS 2 Humble passed"
