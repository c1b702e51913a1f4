"""Simulation output: rosbag2/MCAP read back by independent readers, PNG, CSV, and the CLI."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import robot_dynamics as rd
from robot_dynamics.control import ComputedTorque, TaskComputedTorque
from robot_dynamics.io import plot_simulation, rotation_to_quaternion, tf_tree, write_rosbag, write_simulation_csv
from robot_dynamics.simulation import simulate
from robot_dynamics.spatial import rotation_about_axis
from robot_dynamics.trajectory import cartesian_motion, plan

START = 1_700_000_000.25  # [s since the epoch] of t = 0 in the recordings


def read_ros2_messages(path: str):
    """Decode every message of an MCAP file with mcap + mcap-ros2-support (independent of rosbags)."""
    from types import SimpleNamespace

    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    with open(path, "rb") as fh:
        reader = make_reader(fh, decoder_factories=[DecoderFactory()])
        for _schema, channel, message, decoded in reader.iter_decoded_messages():
            yield SimpleNamespace(channel=channel, ros_msg=decoded, log_time_ns=message.log_time)


@pytest.fixture(scope="module")
def puma_run():
    m = rd.load_robot("puma560")
    move = plan("quintic", np.zeros(6), np.full(6, 0.3), duration=0.1)
    return m, simulate(m, ComputedTorque(m, omega=20.0), move, duration=0.12, progress=False)


@pytest.fixture(scope="module")
def bag(puma_run, tmp_path_factory):
    m, r = puma_run
    return write_rosbag(r, m, tmp_path_factory.mktemp("bags") / "run", start_time=START)


def _quaternion_to_matrix(x, y, z, w):
    # independent of the writer: the textbook formula for a unit quaternion
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def test_mcap_decodes_with_mcap_ros2_support(puma_run, bag):
    m, r = puma_run
    mcap_files = list(bag.glob("*.mcap"))
    assert len(mcap_files) == 1
    msgs: dict[str, list] = {}
    for item in read_ros2_messages(str(mcap_files[0])):
        msgs.setdefault(item.channel.topic, []).append(item)
    K = r.t.size
    assert {k: len(v) for k, v in msgs.items()} == {
        "/joint_states": K,
        "/reference": K,
        "/tf": K,
        "/tf_static": 1,
        "/robot_description": 1,
    }
    for k in (0, 37, K - 1):
        js = msgs["/joint_states"][k].ros_msg
        assert list(js.name) == list(m.joint_names)
        stamp_ns = js.header.stamp.sec * 10**9 + js.header.stamp.nanosec
        assert stamp_ns == round(START * 1e9) + round(r.t[k] * 1e9)
        assert msgs["/joint_states"][k].log_time_ns == stamp_ns
        np.testing.assert_allclose(js.position, r.q[k], rtol=0, atol=0)
        np.testing.assert_allclose(js.velocity, r.qd[k], rtol=0, atol=0)
        np.testing.assert_allclose(js.effort, r.tau[k], rtol=0, atol=0)
        ref = msgs["/reference"][k].ros_msg
        assert list(ref.joint_names) == list(m.joint_names)
        np.testing.assert_allclose(ref.points[0].positions, r.q_ref[k], atol=0)
        np.testing.assert_allclose(ref.points[0].accelerations, r.qdd_ref[k], atol=0)
    assert msgs["/robot_description"][0].ros_msg.data == m.description
    # /tf chained from the base reproduces the forward kinematics of every link
    k = K - 1
    T_of = {m.base_link: np.eye(4)}
    for tf in list(msgs["/tf"][k].ros_msg.transforms) + list(msgs["/tf_static"][0].ros_msg.transforms):
        tr, rot = tf.transform.translation, tf.transform.rotation
        T = np.eye(4)
        T[:3, :3] = _quaternion_to_matrix(rot.x, rot.y, rot.z, rot.w)
        T[:3, 3] = [tr.x, tr.y, tr.z]
        T_of[tf.child_frame_id] = T_of[tf.header.frame_id] @ T
    expected = rd.frame_poses(m, r.q[k])
    for i, name in enumerate(m.frame_names):
        np.testing.assert_allclose(T_of[name], expected[i], atol=1e-12)


def test_bag_reads_with_rosbags_and_declares_latched_topics(puma_run, bag):
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_typestore

    m, r = puma_run
    store = get_typestore(Stores.ROS2_JAZZY)
    with Reader(bag) as reader:
        topics = {c.topic: c.msgtype for c in reader.connections}
        assert topics["/joint_states"] == "sensor_msgs/msg/JointState"
        assert topics["/tf"] == "tf2_msgs/msg/TFMessage"
        assert topics["/robot_description"] == "std_msgs/msg/String"
        assert topics["/reference"] == "trajectory_msgs/msg/JointTrajectory"
        conns = [c for c in reader.connections if c.topic == "/joint_states"]
        last = None
        for conn, t_ns, raw in reader.messages(connections=conns):
            last = store.deserialize_cdr(raw, conn.msgtype)
        np.testing.assert_allclose(last.position, r.q[-1], atol=0)
    meta = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert meta["storage_identifier"] == "mcap"
    qos = {t["topic_metadata"]["name"]: yaml.safe_load(t["topic_metadata"]["offered_qos_profiles"])[0] for t in meta["topics_with_message_count"]}
    # rmw enums as rosbag2 stores them: durability 1 = transient local, 2 = volatile
    assert qos["/robot_description"]["durability"] == 1 and qos["/tf_static"]["durability"] == 1
    assert qos["/robot_description"]["depth"] == 1
    assert qos["/joint_states"]["durability"] == 2 and qos["/joint_states"]["reliability"] == 1


def test_rewriting_a_bag_replaces_it(puma_run, tmp_path):
    m, r = puma_run
    path = tmp_path / "again"
    write_rosbag(r, m, path, start_time=START)
    write_rosbag(r, m, path, start_time=START + 10.0, tf_every=5)
    tf = [x for x in read_ros2_messages(str(next(path.glob("*.mcap")))) if x.channel.topic == "/tf"]
    assert len(tf) == len(range(0, r.t.size, 5))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again"]  # no temporary leftovers


def test_task_space_run_records_the_reference_pose(tmp_path):
    m = rd.load_robot("planar2")
    q0 = np.array([0.3, 1.0])
    T0 = rd.frame_pose(m, q0)
    T1 = T0.copy()
    T1[:3, 3] += [0.05, 0.0, -0.05]
    r = simulate(m, TaskComputedTorque(m, omega=20.0, rows=(0, 2)), cartesian_motion(T0, T1, duration=0.05, profile="quintic"), duration=0.06, q0=q0, progress=False)
    bag = write_rosbag(r, m, tmp_path / "task", start_time=START)
    poses = [x.ros_msg for x in read_ros2_messages(str(next(bag.glob("*.mcap")))) if x.channel.topic == "/reference_pose"]
    assert len(poses) == r.t.size
    p = poses[-1].pose
    np.testing.assert_allclose([p.position.x, p.position.y, p.position.z], r.x_ref[-1], atol=0)
    o = p.orientation
    np.testing.assert_allclose(_quaternion_to_matrix(o.x, o.y, o.z, o.w), T1[:3, :3], atol=1e-12)
    assert np.all(np.isnan(r.q_ref))  # no joint reference in a task-space run
    assert not any(x.channel.topic == "/reference" for x in read_ros2_messages(str(next(bag.glob("*.mcap")))))


def test_quaternions_against_axis_angle():
    rng = np.random.default_rng(2)
    axes = rng.normal(size=(200, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    angles = rng.uniform(-np.pi, np.pi, 200)
    angles[:4] = [0.0, np.pi, -np.pi + 1e-9, 1e-12]  # pivots other than the trace
    R = rotation_about_axis(axes, angles)
    q = rotation_to_quaternion(R)
    expected = np.concatenate([axes * np.sin(angles / 2)[:, None], np.cos(angles / 2)[:, None]], axis=1)
    expected *= np.where(expected[:, 3:] < 0, -1.0, 1.0)
    np.testing.assert_allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-12)
    for k in range(200):  # same rotation (q and -q are one rotation at w = 0)
        np.testing.assert_allclose(_quaternion_to_matrix(*q[k]), R[k], atol=1e-12)
    np.testing.assert_allclose(q[4:], expected[4:], atol=1e-12)


def test_tf_tree_is_a_tree_rooted_at_the_base():
    for name in rd.list_robots():
        m = rd.load_robot(name)
        moving, static = tf_tree(m)
        children = [c for _, c in moving + static]
        assert sorted(children) == sorted(set(range(len(m.frame_names))) - {m.frame_names.index(m.base_link)})


def test_png_and_csv(puma_run, tmp_path):
    m, r = puma_run
    png = plot_simulation(r, tmp_path / "run.png")
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    path = write_simulation_csv(r, tmp_path / "run.csv")
    with path.open() as fh:
        rows = list(csv.reader(fh))
    assert rows[0][:3] == ["t", "q_joint1", "q_joint2"] and "tau_joint6" in rows[0] and rows[0][-1] == "status"
    table = np.array(rows[1:], dtype=float)
    assert table.shape == (r.t.size, 1 + 6 * 6 + 1)
    np.testing.assert_array_equal(table[:, 0], r.t)
    np.testing.assert_array_equal(table[:, rows[0].index("q_joint4")], r.q[:, 3])
    np.testing.assert_array_equal(table[:, rows[0].index("tau_joint2")], r.tau[:, 1])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.csv", "run.png"]


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "robot_dynamics.cli", "simulate", *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def test_cli_simulate_default_run(tmp_path):
    """The main job: no argument but the output folder."""
    res = _cli("--out", str(tmp_path / "out"), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "puma560: computed-torque at 1000 Hz" in res.stdout and "joint6" in res.stdout
    out = tmp_path / "out"
    assert (out / "simulate_puma560.png").stat().st_size > 20_000
    bag = out / "simulate_puma560"
    assert (bag / "metadata.yaml").is_file() and len(list(bag.glob("*.mcap"))) == 1
    n_js = sum(1 for x in read_ros2_messages(str(next(bag.glob("*.mcap")))) if x.channel.topic == "/joint_states")
    assert n_js == 1501  # 1.5 s at 1 kHz, both ends included


def test_cli_simulate_json_and_errors(tmp_path):
    res = _cli("--robot", "planar2", "--move-time", "0.1", "--settle", "0.0", "--mass-error", "0.2", "--json", "--no-plot", "--no-bag", "--csv", "--out", str(tmp_path), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["robot"] == "planar2" and data["ticks"] == 101
    assert len(data["metrics"]["rms_error"]) == 2 and data["metrics"]["predicted_rms_error"] is not None
    assert set(data["files"]) == {"csv"} and Path(data["files"]["csv"]).is_file()
    for bad, word in ((["--robot", "nope"], "Valid robots"), (["--omega", "-1"], "--omega"), (["--goal", "1,2,3", "--robot", "planar2"], "--goal"), (["--integrator", "leapfrog"], "--integrator")):
        res = _cli(*bad, cwd=tmp_path)
        assert res.returncode != 0
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and word in lines[0]


def test_the_main_job_shows_each_joint_apart_and_records_tf_at_100_hz(tmp_path, monkeypatch, capsys):
    """`robot-dynamics simulate`: the joints move by different amounts (the curves of the plot stay
    apart), the torque steps of Coulomb friction are explained, /tf is recorded at 100 Hz while
    /joint_states keeps the 1 kHz of the simulation."""
    import collections
    import json

    from robot_dynamics.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    goal = np.array(data["goal"])
    assert len(np.unique(np.round(goal, 6))) == 6
    np.testing.assert_allclose(goal, [0.5, -0.4, 0.3, 0.8, -0.6, 1.0])
    assert main(["simulate"]) == 0
    assert "Coulomb friction (Khalil [7.26]) switching" in capsys.readouterr().out
    mcap = tmp_path / "robot_dynamics_out" / "simulate_puma560" / "simulate_puma560.mcap"
    counts = collections.Counter(m.channel.topic for m in read_ros2_messages(str(mcap)))
    assert counts["/joint_states"] == 1501
    assert counts["/tf"] == 151  # ticks 0, 10, ..., 1500
