"""rosbag2 recordings (MCAP storage) of a simulation, for ``ros2 bag play``, rviz and Foxglove.

Topics written (message types of ROS 2 Humble/Jazzy, identical on both):

==================== ================================ =============================================
topic                type                             content
==================== ================================ =============================================
/joint_states        sensor_msgs/msg/JointState       q, qd and the joint torques at every tick
/reference           trajectory_msgs/msg/JointTrajectory  one point: q^d, qd^d, qdd^d at every tick
/reference_pose      geometry_msgs/msg/PoseStamped    the task reference (task-space runs only)
/tf                  tf2_msgs/msg/TFMessage           every moving link relative to its parent link
/tf_static           tf2_msgs/msg/TFMessage           links fixed to their parent (once, latched)
/robot_description   std_msgs/msg/String              the URDF (once, latched)
==================== ================================ =============================================

The tf tree is the model's: each moving body under its parent body (or the base link), each
link merged by a fixed joint under the body that carries it. /tf_static and
/robot_description are offered with transient-local durability so that rviz2 and
robot_state_publisher-style subscribers receive them when they join late. Replay with
``ros2 bag play <folder> --clock`` and run rviz2 with ``use_sim_time:=true``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ..kinematics import frame_poses
from ..model.robot_model import RobotModel
from ..spatial import invert_homogeneous

__all__ = ["write_rosbag", "TOPICS", "tf_tree", "rotation_to_quaternion"]

Array = NDArray[np.float64]

#: Topic name -> message type written by :func:`write_rosbag`.
TOPICS = {
    "/joint_states": "sensor_msgs/msg/JointState",
    "/reference": "trajectory_msgs/msg/JointTrajectory",
    "/reference_pose": "geometry_msgs/msg/PoseStamped",
    "/tf": "tf2_msgs/msg/TFMessage",
    "/tf_static": "tf2_msgs/msg/TFMessage",
    "/robot_description": "std_msgs/msg/String",
}


def tf_tree(model: RobotModel) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Parent/child frame index pairs of the tf tree: (moving edges, static edges).

    A body's link frame hangs under its parent body's link frame (the base link for roots);
    any other frame (a link merged by a fixed joint) hangs under the body that carries it.
    """
    index = {name: k for k, name in enumerate(model.frame_names)}
    base = index[model.base_link]
    body_frame = [index[name] for name in model.body_names]
    moving: list[tuple[int, int]] = []
    static: list[tuple[int, int]] = []
    for i, child in enumerate(body_frame):
        p = int(model.parent[i])
        moving.append((base if p < 0 else body_frame[p], child))
    for k, name in enumerate(model.frame_names):
        if k == base or k in body_frame:
            continue
        b = int(model.frame_body[k])
        static.append((base if b < 0 else body_frame[b], k))
    return moving, static


def rotation_to_quaternion(R: Array) -> Array:
    """Unit quaternions (x, y, z, w), w >= 0, of rotation matrices (..., 3, 3) (Shepperd's method).

    Each matrix uses the largest of (trace, R00, R11, R22) as the pivot, so the square root is
    never taken of a small number.
    """
    R = np.asarray(R, dtype=float)
    shape = R.shape[:-2]
    m = R.reshape(-1, 3, 3)
    tr = np.trace(m, axis1=1, axis2=2)
    pivot = np.argmax(np.stack([tr, m[:, 0, 0], m[:, 1, 1], m[:, 2, 2]], axis=1), axis=1)
    q = np.empty((m.shape[0], 4))
    sel = pivot == 0
    s = 2.0 * np.sqrt(np.maximum(1.0 + tr[sel], 0.0))
    ms = m[sel]
    q[sel] = np.stack([(ms[:, 2, 1] - ms[:, 1, 2]) / s, (ms[:, 0, 2] - ms[:, 2, 0]) / s, (ms[:, 1, 0] - ms[:, 0, 1]) / s, 0.25 * s], axis=1)
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        sel = pivot == i + 1
        ms = m[sel]
        s = 2.0 * np.sqrt(np.maximum(1.0 + ms[:, i, i] - ms[:, j, j] - ms[:, k, k], 0.0))
        q[sel, i] = 0.25 * s
        q[sel, j] = (ms[:, j, i] + ms[:, i, j]) / s
        q[sel, k] = (ms[:, k, i] + ms[:, i, k]) / s
        q[sel, 3] = (ms[:, k, j] - ms[:, j, k]) / s
    q *= np.where(q[:, 3:4] < 0.0, -1.0, 1.0)
    return q.reshape(shape + (4,))


def _check_target(final: Path) -> None:
    """Refuse to replace anything but an earlier rosbag2 folder; clean stale partial writes.

    A write stopped by SIGKILL leaves its ``.<name>.XXXX`` temporary folder behind: those older
    than ten minutes are removed here, on the next write to the same place.
    """
    if final.exists() and not final.is_dir():
        raise InputError(f"cannot write the recording {str(final)!r}: a file of that name exists (remove it or choose another name)")
    if final.is_dir() and any(final.iterdir()) and not (final / "metadata.yaml").is_file():
        raise InputError(f"cannot write the recording {str(final)!r}: a folder of that name exists and is not a rosbag2 recording")
    now = time.time()
    for stale in final.parent.glob(f".{final.name}.*"):
        try:
            if stale.is_dir() and now - stale.stat().st_mtime > 600:
                shutil.rmtree(stale, ignore_errors=True)
        except OSError:
            pass


def _replace_dir(tmp: Path, final: Path) -> None:
    """Move a finished bag folder into place; an existing recording is replaced."""
    if final.exists():
        trash = final.with_name(f".{final.name}.old-{os.getpid()}")
        os.replace(final, trash)
        os.replace(tmp, final)
        shutil.rmtree(trash, ignore_errors=True)
    else:
        os.replace(tmp, final)


def write_rosbag(
    result: Any,
    model: RobotModel,
    path: str | os.PathLike[str],
    *,
    start_time: float | None = None,
    tf_every: int = 1,
) -> Path:
    """Write a simulation as a rosbag2 folder with MCAP storage (metadata.yaml + one .mcap).

    Args:
        result: a :class:`robot_dynamics.simulation.SimulationResult`.
        model: the simulated robot (frames for /tf, URDF text for /robot_description).
        path: the bag folder to create (replaced atomically if it exists).
        start_time: wall time [s since the epoch] of t = 0; default now.
        tf_every: write /tf every ``tf_every`` ticks (1 = at the simulation rate).

    Returns:
        The bag folder.
    """
    from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    if int(tf_every) != tf_every or tf_every < 1:
        raise InputError(f"tf_every: expected an integer >= 1, got {tf_every!r}")
    if tuple(result.joint_names) != tuple(model.joint_names):
        raise InputError("write_rosbag: the result's joints do not match the model's")
    store = get_typestore(Stores.ROS2_JAZZY)
    T = store.types
    Time = T["builtin_interfaces/msg/Time"]
    Duration = T["builtin_interfaces/msg/Duration"]
    Header = T["std_msgs/msg/Header"]
    JointState = T["sensor_msgs/msg/JointState"]
    JointTrajectory = T["trajectory_msgs/msg/JointTrajectory"]
    JointTrajectoryPoint = T["trajectory_msgs/msg/JointTrajectoryPoint"]
    TFMessage = T["tf2_msgs/msg/TFMessage"]
    TransformStamped = T["geometry_msgs/msg/TransformStamped"]
    Transform = T["geometry_msgs/msg/Transform"]
    Vector3 = T["geometry_msgs/msg/Vector3"]
    Quaternion = T["geometry_msgs/msg/Quaternion"]
    PoseStamped = T["geometry_msgs/msg/PoseStamped"]
    Pose = T["geometry_msgs/msg/Pose"]
    Point = T["geometry_msgs/msg/Point"]
    String = T["std_msgs/msg/String"]

    t0_ns = int(round((time.time() if start_time is None else float(start_time)) * 1e9))
    stamps = t0_ns + np.round(np.asarray(result.t) * 1e9).astype(np.int64)

    def stamp(ns: int) -> Any:
        return Time(sec=int(ns // 1_000_000_000), nanosec=int(ns % 1_000_000_000))

    zero_t = QosTime(sec=0, nsec=0)
    latched = Qos(QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL, zero_t, zero_t, QosLiveliness.AUTOMATIC, zero_t, False)
    volatile = Qos(QosHistory.KEEP_LAST, 100, QosReliability.RELIABLE, QosDurability.VOLATILE, zero_t, zero_t, QosLiveliness.AUTOMATIC, zero_t, False)

    names = list(model.joint_names)
    frame = list(model.frame_names)
    moving, static = tf_tree(model)
    Tf = frame_poses(model, result.q)  # (K, nf, 4, 4) T_base_frame

    def relative(edges: list[tuple[int, int]], Tk: Array) -> tuple[Array, Array]:
        if not edges:
            return np.zeros(Tk.shape[:1] + (0, 4, 4)), np.zeros(Tk.shape[:1] + (0, 4))
        par = [p for p, _ in edges]
        chi = [c for _, c in edges]
        T_pc = invert_homogeneous(Tk[:, par]) @ Tk[:, chi]  # T_parent_child = T_base_parent^-1 T_base_child
        return T_pc, rotation_to_quaternion(T_pc[..., :3, :3])

    T_moving, Q_moving = relative(moving, Tf)
    T_static, Q_static = relative(static, Tf[:1])

    def transforms(T_pc_all: Array, quats: Array, edges: list[tuple[int, int]], ns: int) -> list[Any]:
        out = []
        for e, (p, c) in enumerate(edges):
            T_pc = T_pc_all[e]
            qx, qy, qz, qw = quats[e]
            out.append(
                TransformStamped(
                    header=Header(stamp=stamp(ns), frame_id=frame[p]),
                    child_frame_id=frame[c],
                    transform=Transform(
                        translation=Vector3(x=float(T_pc[0, 3]), y=float(T_pc[1, 3]), z=float(T_pc[2, 3])),
                        rotation=Quaternion(x=float(qx), y=float(qy), z=float(qz), w=float(qw)),
                    ),
                )
            )
        return out

    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    _check_target(final)
    tmp_root = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    tmp = tmp_root / final.name
    try:
        with Writer(tmp, version=8, storage_plugin=StoragePlugin.MCAP) as writer:
            c_js = writer.add_connection("/joint_states", TOPICS["/joint_states"], typestore=store, offered_qos_profiles=[volatile])
            c_ref = writer.add_connection("/reference", TOPICS["/reference"], typestore=store, offered_qos_profiles=[volatile])
            c_tf = writer.add_connection("/tf", TOPICS["/tf"], typestore=store, offered_qos_profiles=[volatile])
            c_static = writer.add_connection("/tf_static", TOPICS["/tf_static"], typestore=store, offered_qos_profiles=[latched])
            c_desc = writer.add_connection("/robot_description", TOPICS["/robot_description"], typestore=store, offered_qos_profiles=[latched])
            c_pose = None
            if result.pose_ref is not None:
                Q_ref = rotation_to_quaternion(result.pose_ref[:, :3, :3])
                c_pose = writer.add_connection("/reference_pose", TOPICS["/reference_pose"], typestore=store, offered_qos_profiles=[volatile])

            ns0 = int(stamps[0])
            text = model.description or ""
            writer.write(c_desc, ns0, store.serialize_cdr(String(data=text), TOPICS["/robot_description"]))
            msg = TFMessage(transforms=transforms(T_static[0], Q_static[0], static, ns0))
            writer.write(c_static, ns0, store.serialize_cdr(msg, TOPICS["/tf_static"]))
            has_ref = not np.all(np.isnan(result.q_ref))
            empty = np.zeros(0)
            for k, ns in enumerate(stamps):
                ns = int(ns)
                header = Header(stamp=stamp(ns), frame_id="")
                js = JointState(
                    header=header,
                    name=names,
                    position=np.asarray(result.q[k], dtype=np.float64),
                    velocity=np.asarray(result.qd[k], dtype=np.float64),
                    effort=np.asarray(result.tau[k], dtype=np.float64),
                )
                writer.write(c_js, ns, store.serialize_cdr(js, TOPICS["/joint_states"]))
                if has_ref:
                    point = JointTrajectoryPoint(
                        positions=np.asarray(result.q_ref[k], dtype=np.float64),
                        velocities=np.asarray(result.qd_ref[k], dtype=np.float64),
                        accelerations=np.asarray(result.qdd_ref[k], dtype=np.float64),
                        effort=empty,
                        time_from_start=Duration(sec=0, nanosec=0),
                    )
                    jt = JointTrajectory(header=header, joint_names=names, points=[point])
                    writer.write(c_ref, ns, store.serialize_cdr(jt, TOPICS["/reference"]))
                if c_pose is not None:
                    x = result.pose_ref[k, :3, 3]
                    qx, qy, qz, qw = Q_ref[k]
                    ps = PoseStamped(
                        header=Header(stamp=stamp(ns), frame_id=model.base_link),
                        pose=Pose(position=Point(x=float(x[0]), y=float(x[1]), z=float(x[2])), orientation=Quaternion(x=float(qx), y=float(qy), z=float(qz), w=float(qw))),
                    )
                    writer.write(c_pose, ns, store.serialize_cdr(ps, TOPICS["/reference_pose"]))
                if k % tf_every == 0:
                    msg = TFMessage(transforms=transforms(T_moving[k], Q_moving[k], moving, ns))
                    writer.write(c_tf, ns, store.serialize_cdr(msg, TOPICS["/tf"]))
        _replace_dir(tmp, final)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    return final
