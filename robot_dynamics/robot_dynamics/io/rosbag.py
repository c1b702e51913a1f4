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
from typing import Any, NamedTuple

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
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    if int(tf_every) != tf_every or tf_every < 1:
        raise InputError(f"tf_every: expected an integer >= 1, got {tf_every!r}")
    if tuple(result.joint_names) != tuple(model.joint_names):
        raise InputError("write_rosbag: the result's joints do not match the model's")
    store = get_typestore(Stores.ROS2_JAZZY)

    t0_ns = int(round((time.time() if start_time is None else float(start_time)) * 1e9))
    stamps = t0_ns + np.round(np.asarray(result.t) * 1e9).astype(np.int64)

    moving, static = tf_tree(model)
    Tf = frame_poses(model, result.q)  # (K, nf, 4, 4) T_base_frame
    tf_moving = _edge_transforms(moving, Tf)
    tf_static = _edge_transforms(static, Tf[:1])

    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    _check_target(final)
    tmp_root = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    tmp = tmp_root / final.name
    try:
        with Writer(tmp, version=8, storage_plugin=StoragePlugin.MCAP) as writer:
            _write_messages(writer, store, result, model, stamps, tf_every, tf_moving, tf_static)
        _replace_dir(tmp, final)
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    return final


class _EdgeTransforms(NamedTuple):
    """The transforms of tf edges at K instants; ne edges.

    Attributes:
        edges: (parent, child) frame indices of each edge.
        T: T_parent_child, shape (K, ne, 4, 4) [m].
        quaternion: their rotations as unit quaternions (x, y, z, w), shape (K, ne, 4).
    """

    edges: list[tuple[int, int]]
    T: Array
    quaternion: Array


def _edge_transforms(edges: list[tuple[int, int]], Tk: Array) -> _EdgeTransforms:
    """The transforms of ``edges`` from the frame poses ``Tk``, shape (K, nf, 4, 4) T_base_frame."""
    if not edges:
        return _EdgeTransforms(edges, np.zeros(Tk.shape[:1] + (0, 4, 4)), np.zeros(Tk.shape[:1] + (0, 4)))
    par = [p for p, _ in edges]
    chi = [c for _, c in edges]
    T_pc = invert_homogeneous(Tk[:, par]) @ Tk[:, chi]  # T_parent_child = T_base_parent^-1 T_base_child
    return _EdgeTransforms(edges, T_pc, rotation_to_quaternion(T_pc[..., :3, :3]))


def _qos_profiles() -> tuple[Any, Any]:
    """(latched, volatile) QoS offered by the connections: transient-local depth 1 for what a
    late subscriber must still get, volatile depth 100 for the streams."""
    from rosbags.interfaces import Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime

    zero_t = QosTime(sec=0, nsec=0)
    latched = Qos(QosHistory.KEEP_LAST, 1, QosReliability.RELIABLE, QosDurability.TRANSIENT_LOCAL, zero_t, zero_t, QosLiveliness.AUTOMATIC, zero_t, False)
    volatile = Qos(QosHistory.KEEP_LAST, 100, QosReliability.RELIABLE, QosDurability.VOLATILE, zero_t, zero_t, QosLiveliness.AUTOMATIC, zero_t, False)
    return latched, volatile


def _add_connections(writer: Any, store: Any, with_pose: bool) -> dict[str, Any]:
    """The writer's connection of each topic written (/reference_pose only ``with_pose``)."""
    latched, volatile = _qos_profiles()
    topics = ["/joint_states", "/reference", "/tf", "/tf_static", "/robot_description"]
    if with_pose:
        topics.append("/reference_pose")
    return {topic: writer.add_connection(topic, TOPICS[topic], typestore=store,
                                         offered_qos_profiles=[latched if topic in ("/tf_static", "/robot_description") else volatile])
            for topic in topics}


def _stamp(T: Any, ns: int) -> Any:
    """A builtin_interfaces/Time of ``ns`` nanoseconds since the epoch."""
    return T["builtin_interfaces/msg/Time"](sec=int(ns // 1_000_000_000), nanosec=int(ns % 1_000_000_000))


def _tf_message(T: Any, frame: list[str], tf: _EdgeTransforms, k: int, ns: int) -> Any:
    """The TFMessage of the edges of ``tf`` at instant ``k``, stamped ``ns``."""
    out = []
    for e, (p, c) in enumerate(tf.edges):
        T_pc = tf.T[k, e]
        qx, qy, qz, qw = tf.quaternion[k, e]
        out.append(
            T["geometry_msgs/msg/TransformStamped"](
                header=T["std_msgs/msg/Header"](stamp=_stamp(T, ns), frame_id=frame[p]),
                child_frame_id=frame[c],
                transform=T["geometry_msgs/msg/Transform"](
                    translation=T["geometry_msgs/msg/Vector3"](x=float(T_pc[0, 3]), y=float(T_pc[1, 3]), z=float(T_pc[2, 3])),
                    rotation=T["geometry_msgs/msg/Quaternion"](x=float(qx), y=float(qy), z=float(qz), w=float(qw)),
                ),
            )
        )
    return T["tf2_msgs/msg/TFMessage"](transforms=out)


def _joint_state(T: Any, header: Any, names: list[str], result: Any, k: int) -> Any:
    """The JointState of tick ``k``: q, qd and the joint torques."""
    return T["sensor_msgs/msg/JointState"](
        header=header,
        name=names,
        position=np.asarray(result.q[k], dtype=np.float64),
        velocity=np.asarray(result.qd[k], dtype=np.float64),
        effort=np.asarray(result.tau[k], dtype=np.float64),
    )


def _joint_reference(T: Any, header: Any, names: list[str], result: Any, k: int) -> Any:
    """The JointTrajectory of tick ``k``: one point, q^d, qd^d and qdd^d."""
    point = T["trajectory_msgs/msg/JointTrajectoryPoint"](
        positions=np.asarray(result.q_ref[k], dtype=np.float64),
        velocities=np.asarray(result.qd_ref[k], dtype=np.float64),
        accelerations=np.asarray(result.qdd_ref[k], dtype=np.float64),
        effort=np.zeros(0),
        time_from_start=T["builtin_interfaces/msg/Duration"](sec=0, nanosec=0),
    )
    return T["trajectory_msgs/msg/JointTrajectory"](header=header, joint_names=names, points=[point])


def _pose_reference(T: Any, base_link: str, pose: Array, quaternion: Array, ns: int) -> Any:
    """The PoseStamped of the task reference ``pose`` (4, 4) in the base link, stamped ``ns``."""
    x = pose[:3, 3]
    qx, qy, qz, qw = quaternion
    return T["geometry_msgs/msg/PoseStamped"](
        header=T["std_msgs/msg/Header"](stamp=_stamp(T, ns), frame_id=base_link),
        pose=T["geometry_msgs/msg/Pose"](position=T["geometry_msgs/msg/Point"](x=float(x[0]), y=float(x[1]), z=float(x[2])),
                                         orientation=T["geometry_msgs/msg/Quaternion"](x=float(qx), y=float(qy), z=float(qz), w=float(qw))),
    )


def _write_messages(writer: Any, store: Any, result: Any, model: RobotModel, stamps: NDArray[np.int64], tf_every: int,
                    tf_moving: _EdgeTransforms, tf_static: _EdgeTransforms) -> None:
    """Every message of the recording: the description and /tf_static once at the first stamp,
    then per tick the joint states, the references and, every ``tf_every`` ticks, /tf."""
    T = store.types
    conn = _add_connections(writer, store, result.pose_ref is not None)
    Q_ref = None if result.pose_ref is None else rotation_to_quaternion(result.pose_ref[:, :3, :3])

    def write(topic: str, ns: int, msg: Any) -> None:
        writer.write(conn[topic], ns, store.serialize_cdr(msg, TOPICS[topic]))

    names = list(model.joint_names)
    frame = list(model.frame_names)
    ns0 = int(stamps[0])
    write("/robot_description", ns0, T["std_msgs/msg/String"](data=model.description or ""))
    write("/tf_static", ns0, _tf_message(T, frame, tf_static, 0, ns0))
    has_ref = not np.all(np.isnan(result.q_ref))
    for k, ns in enumerate(stamps):
        ns = int(ns)
        header = T["std_msgs/msg/Header"](stamp=_stamp(T, ns), frame_id="")
        write("/joint_states", ns, _joint_state(T, header, names, result, k))
        if has_ref:
            write("/reference", ns, _joint_reference(T, header, names, result, k))
        if Q_ref is not None:
            write("/reference_pose", ns, _pose_reference(T, model.base_link, result.pose_ref[k], Q_ref[k], ns))
        if k % tf_every == 0:
            write("/tf", ns, _tf_message(T, frame, tf_moving, k, ns))
