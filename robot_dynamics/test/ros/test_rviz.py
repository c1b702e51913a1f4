"""rviz2 draws the arm: the shipped rviz config under a virtual display with software OpenGL.

Skipped where rclpy, rviz2 or robot_state_publisher (the C++ stack of ROS 2) are not built, or
where Xvfb and ImageMagick's ``import`` (the virtual display and its screenshot) are not
installed. For each robot with a description (the bundled robots of the geared and serial
examples), robot_state_publisher latches its URDF and publishes /tf for a joint state that a
probe node publishes; rviz2 starts with the shipped ``rviz/robot_dynamics.rviz`` and a
screenshot is taken; then the same with the RobotModel display off. The robot is drawn when,
inside rviz's 3D view (the area of the view's background colour), the two differ in thousands
of pixels, all of them around the arm's frames that the TF display draws in both, most of them
in the links' orange. Everything runs in a DDS domain of its own.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from ros_presence import executable, missing_ros

MISSING = missing_ros(modules=("rclpy",), packages=("rviz2", "robot_state_publisher"))
for _tool in ("xvfb-run", "import"):
    if not MISSING and shutil.which(_tool) is None:
        MISSING = f"{_tool} is not installed (Debian: xvfb, imagemagick)"
if not MISSING:
    import rclpy
    from ament_index_python.packages import get_package_share_directory
    from sensor_msgs.msg import JointState

    RVIZ = executable("rviz2", "rviz2")
    RSP = executable("robot_state_publisher", "robot_state_publisher")

from matplotlib.image import imread  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.model import robot_files  # noqa: E402

BACKGROUND = (48, 48, 48)  # the shipped config's "Background Color"
POSES = {"puma560": [0.3, -0.6, 0.4, 0.0, 0.5, 0.0], "three_dof_geared": [0.5, -0.7, 0.9]}
SHOTS = os.environ.get("ROBOT_DYNAMICS_SCREENSHOTS")  # keep the screenshots in this folder


def _config(tmp_path: Path, robot_model: bool) -> Path:
    """The shipped rviz config, with the RobotModel display on or off."""
    cfg = yaml.safe_load(Path(get_package_share_directory("robot_dynamics"), "rviz", "robot_dynamics.rviz").read_text())
    displays = cfg["Visualization Manager"]["Displays"]
    model = [d for d in displays if d["Class"] == "rviz_default_plugins/RobotModel"]
    assert len(model) == 1 and model[0]["Description Topic"]["Value"] == "/robot_description"
    assert any(d["Class"] == "rviz_default_plugins/TF" and d["Enabled"] for d in displays)
    model[0]["Enabled"] = robot_model
    path = tmp_path / f"rviz_{'on' if robot_model else 'off'}.rviz"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


_SCRIPT = r"""
"$RVIZ" -d "$1" -f "$2" --ros-args -r __node:=rviz_check > "$3.log" 2>&1 &
pid=$!
for i in $(seq 1 120); do grep -q "OpenGl version" "$3.log" && break; kill -0 $pid 2>/dev/null || break; sleep 0.5; done
sleep "$4"
import -window root "$3"
kill -INT $pid; wait $pid
"""


def _screenshot(config: Path, fixed_frame: str, png: Path, env: dict[str, str], settle: float = 8.0) -> np.ndarray:
    subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x900x24", "bash", "-c", _SCRIPT, "rviz",
                    str(config), fixed_frame, str(png), str(settle)],
                   env=env, timeout=180, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = Path(f"{png}.log").read_text(errors="replace")
    assert "OpenGl version" in log, log[-2000:]
    image = imread(str(png))
    return np.round(np.asarray(image)[..., :3] * 255).astype(int)


class _Robot:
    """robot_state_publisher with the robot's URDF and a probe publishing its joint state."""

    def __init__(self, robot: str, q, tmp_path: Path, env: dict[str, str], domain: int):
        model = rd.load_robot(robot)
        params = tmp_path / "rsp.yaml"
        params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {
            "robot_description": Path(robot_files(robot)[0]).read_text(encoding="utf-8")}}}))
        self.rsp = subprocess.Popen([RSP, "--ros-args", "--params-file", str(params)], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node("rviz_check_probe", context=self.context)
        self.pub = self.node.create_publisher(JointState, "/joint_states", 10)
        self.msg = JointState(name=list(model.joint_names), position=[float(x) for x in q])
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._publish, daemon=True)
        self.thread.start()

    def _publish(self):
        while not self.stop.is_set():
            self.msg.header.stamp = self.node.get_clock().now().to_msg()
            self.pub.publish(self.msg)
            time.sleep(0.1)

    def close(self):
        self.stop.set()
        self.thread.join()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self.rsp.terminate()
        try:
            self.rsp.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.rsp.kill()


def _view_box(image: np.ndarray) -> tuple[slice, slice]:
    """Rows and columns of rviz's 3D view: where the background colour is."""
    mask = np.all(image == BACKGROUND, axis=-1)
    rows, cols = np.flatnonzero(mask.mean(axis=1) > 0.2), np.flatnonzero(mask.mean(axis=0) > 0.2)
    assert rows.size and cols.size, "no 3D view with the config's background colour in the screenshot"
    return slice(rows[0], rows[-1] + 1), slice(cols[0], cols[-1] + 1)


@pytest.mark.parametrize("robot", sorted(POSES))
def test_rviz_draws_the_robot(robot, tmp_path):
    if MISSING:
        pytest.skip(MISSING)
    # a domain of its own, not the suite's (its nodes would otherwise see this test's /tf)
    domain = random.Random().choice([d for d in range(1, 101) if str(d) != os.environ.get("ROS_DOMAIN_ID", "0")])
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), LIBGL_ALWAYS_SOFTWARE="1", RVIZ=RVIZ)
    env.pop("DISPLAY", None)
    model = rd.load_robot(robot)
    arm = _Robot(robot, POSES[robot], tmp_path, env, domain)
    try:
        on = _screenshot(_config(tmp_path, True), model.base_link, tmp_path / "on.png", env)
        off = _screenshot(_config(tmp_path, False), model.base_link, tmp_path / "off.png", env)
    finally:
        arm.close()
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        shutil.copy(tmp_path / "on.png", Path(SHOTS) / f"rviz_{robot}.png")
    assert on.shape == off.shape and on.shape[0] >= 800
    rows, cols = _view_box(off)
    changed = np.any(np.abs(on - off) > 24, axis=-1)[rows, cols]
    view = changed.size
    assert changed.sum() > 0.005 * view, f"{robot}: the robot covers {changed.sum()} pixels of a {view}-pixel view"
    # where the arm is: the TF display's frames (red, green and blue axes, yellow links), drawn in
    # both shots; every changed pixel of the view lies near them
    arm = _arm_box(off[rows, cols], margin=40)
    near = changed[arm].sum()
    assert near >= 0.98 * changed.sum(), f"{robot}: {changed.sum() - near} changed pixels away from the arm's frames"
    # and it is the robot: most changed pixels take the orange of the bundled URDFs' material
    r, g, b = (on[rows, cols][changed][:, k] for k in range(3))
    orange = np.mean((r > g) & (g > b) & (r - b > 60))
    assert orange > 0.5, f"{robot}: only {orange:.0%} of the changed pixels are the links' orange"


def _arm_box(view: np.ndarray, margin: int) -> tuple[slice, slice]:
    """Rows and columns around the saturated pixels of the 3D view (the TF display's frames)."""
    saturated = view.max(axis=-1) - view.min(axis=-1) > 80
    rows, cols = np.flatnonzero(saturated.any(axis=1)), np.flatnonzero(saturated.any(axis=0))
    assert rows.size and cols.size, "no TF frames in the 3D view"
    return (slice(max(rows[0] - margin, 0), rows[-1] + margin + 1),
            slice(max(cols[0] - margin, 0), cols[-1] + margin + 1))
