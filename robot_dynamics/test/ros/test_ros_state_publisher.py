"""The real robot_state_publisher on every bundled robot: its /tf equals rd.frame_pose.

Skipped where rclpy is missing, or robot_state_publisher (the C++ stack of ROS 2) is not built
(the minimal ROS 2 builds the tests also run on have no rclcpp). For each bundled robot the
test starts robot_state_publisher with the robot's URDF, publishes stamped joint states at
random positions within the limits and composes the chain from the base link to each leaf
frame out of /tf (at the joint state's stamp) and /tf_static: each pose equals
``rd.frame_pose`` at those positions to 1e-9. Its topics are remapped into a namespace of
the test, so nothing else on the DDS domain mixes in.
"""

from __future__ import annotations

import subprocess
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml

from ros_presence import executable, missing_ros

MISSING = missing_ros(modules=("rclpy", "tf2_msgs"), packages=("robot_state_publisher",))
if not MISSING:
    import rclpy
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    RSP = executable("robot_state_publisher", "robot_state_publisher")

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.model import robot_files  # noqa: E402

from tf_tree import TfRecord, stamp_key  # noqa: E402

NS = "/rsp_check"


def _leaves(model) -> list[str]:
    """Links that are no joint's parent in the URDF: the tips of the tree, and the end effector."""
    root = ET.fromstring(model.description)
    links = {link.get("name") for link in root.findall("link")}
    parents = {j.find("parent").get("link") for j in root.findall("joint")}
    return sorted((links - parents) | {model.end_effector})


def _random_positions(model, rng) -> np.ndarray:
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    return rng.uniform(lo, hi)


@pytest.fixture(scope="module")
def ros_node():
    if MISSING:
        pytest.skip(MISSING)
    rclpy.init()
    node = rclpy.create_node("rsp_check_probe")
    yield node
    node.destroy_node()
    rclpy.try_shutdown()


@pytest.mark.parametrize("robot", rd.list_robots())
def test_robot_state_publisher_tf_equals_frame_pose(robot, ros_node, tmp_path):
    model = rd.load_robot(robot)
    urdf, _ = robot_files(robot)
    params = tmp_path / "rsp.yaml"
    params.write_text(yaml.safe_dump({"/**": {"ros__parameters": {
        "robot_description": open(urdf, encoding="utf-8").read()}}}), encoding="utf-8")
    record = TfRecord()
    latched = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
    subs = [ros_node.create_subscription(TFMessage, f"{NS}/tf", record.on_tf, 100),
            ros_node.create_subscription(TFMessage, f"{NS}/tf_static", record.on_static, latched)]
    pub = ros_node.create_publisher(JointState, f"{NS}/joint_states", 10)
    proc = subprocess.Popen(
        [RSP, "--ros-args", "-r", "__node:=rsp_check", "--params-file", str(params),
         "-r", f"joint_states:={NS}/joint_states", "-r", f"/tf:={NS}/tf", "-r", f"/tf_static:={NS}/tf_static"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    rng = np.random.default_rng(7)
    states = [_random_positions(model, rng) for _ in range(3)]
    sent: dict[tuple[int, int], np.ndarray] = {}
    tips = _leaves(model)
    checked = 0
    try:
        deadline = time.monotonic() + 30.0
        pending = list(states)
        while pending and time.monotonic() < deadline:
            assert proc.poll() is None, f"robot_state_publisher exited: {proc.stderr.read()}"
            msg = JointState()
            msg.header.stamp = ros_node.get_clock().now().to_msg()
            msg.name = list(model.joint_names)
            msg.position = [float(x) for x in pending[0]]
            sent[stamp_key(msg.header.stamp)] = pending[0]
            pub.publish(msg)
            end = time.monotonic() + 0.2
            while time.monotonic() < end:
                rclpy.spin_once(ros_node, timeout_sec=0.02)
            for stamp, q in list(sent.items()):
                poses = [record.pose(model.base_link, tip, stamp) for tip in tips]
                if stamp in record.dynamic and all(p is not None for p in poses):
                    for tip, pose in zip(tips, poses):
                        np.testing.assert_allclose(pose, rd.frame_pose(model, q, tip), atol=1e-9,
                                                   err_msg=f"{robot}: {model.base_link} -> {tip}")
                        checked += 1
                    del sent[stamp]
                    if pending and np.array_equal(q, pending[0]):
                        pending.pop(0)
        assert not pending, f"{robot}: no /tf for {len(pending)} joint states within 30 s"
        assert checked == len(states) * len(tips)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        for s in subs:
            ros_node.destroy_subscription(s)
        ros_node.destroy_publisher(pub)
