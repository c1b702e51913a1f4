"""Recordings of a moving arm: /joint_states from rosbag2 folders (MCAP or sqlite3) or CSV.

A :class:`Recording` holds time stamps, positions and efforts (velocities when present) in the
model's joint order, matched by name. NaN velocity or effort fields are missing fields, as
ros2_control's joint_state_broadcaster publishes them; NaN positions are dropped samples.
Duplicate stamps keep the first message, samples are sorted by time, and a pause longer than
five sample periods splits the recording into segments that are filtered separately
(:func:`robot_dynamics.identification.signal.prepare`).
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from ..model.robot_model import RobotModel

__all__ = ["Recording", "read_recording", "read_rosbag", "read_csv", "concatenate", "write_csv"]

Array = NDArray[np.float64]

#: Fewest samples (after cleaning) a segment must keep to be used.
MIN_SAMPLES = 50


@dataclass(frozen=True)
class Recording:
    """Joint states of one robot in the model's joint order.

    Attributes:
        joint_names: (nq,) model order.
        t: (K,) [s], strictly increasing within a segment.
        q: (K, nq) [rad or m]. qd: (K, nq) or None when no message carried velocities.
        tau: (K, nq) [N m or N] measured joint efforts.
        segment: (K,) int, the segment of each sample (a pause or a new file starts one).
        source: where the data came from (for messages).
    """

    joint_names: tuple[str, ...]
    t: Array
    q: Array
    qd: Array | None
    tau: Array
    segment: NDArray[np.int_]
    source: str

    @property
    def n_samples(self) -> int:
        return int(self.t.size)

    @property
    def duration(self) -> float:
        """Total recorded time [s] (sum over segments)."""
        total = 0.0
        for s in np.unique(self.segment):
            ts = self.t[self.segment == s]
            total += float(ts[-1] - ts[0]) if ts.size else 0.0
        return total


def _order(model_names: tuple[str, ...], names: list[str], source: str) -> NDArray[np.int_]:
    """Column of every model joint in the recorded name list; InputError naming the missing."""
    missing = [j for j in model_names if j not in names]
    if missing:
        raise InputError(f"{source}: joints {missing} are not recorded (recorded: {names}); "
                         "every moving joint of the model is needed")
    return np.array([names.index(j) for j in model_names], dtype=int)


def _clean(model: RobotModel, t: Array, q: Array, qd: Array | None, tau: Array, source: str) -> Recording:
    """Sort, drop duplicate stamps and NaN positions, split at pauses, check what is usable."""
    if t.size == 0:
        raise InputError(f"{source}: no /joint_states samples")
    if not np.all(np.isfinite(t)):
        raise InputError(f"{source}: time stamps contain NaN or infinite values")
    order = np.argsort(t, kind="stable")
    t, q, tau = t[order], q[order], tau[order]
    qd = None if qd is None else qd[order]
    keep = np.concatenate(([True], np.diff(t) > 0))  # duplicate stamps: the first message wins
    keep &= np.all(np.isfinite(q), axis=1)
    t, q, tau = t[keep], q[keep], tau[keep]
    qd = None if qd is None else qd[keep]
    if t.size < MIN_SAMPLES:
        raise InputError(f"{source}: only {t.size} usable samples (need at least {MIN_SAMPLES} with "
                         "finite positions of every joint)")
    if np.all(np.isnan(tau)):
        raise InputError(f"{source}: no effort in the joint states (all empty or NaN); the measured joint "
                         "efforts are needed (identification, observer thresholds)")
    bad_tau = ~np.all(np.isfinite(tau), axis=1)
    if np.any(bad_tau):
        t, q, tau = t[~bad_tau], q[~bad_tau], tau[~bad_tau]
        qd = None if qd is None else qd[~bad_tau]
    if qd is not None and not np.all(np.isfinite(qd)):
        qd = None  # velocities are re-derived from positions anyway; partial ones are dropped
    if t.size < MIN_SAMPLES:
        raise InputError(f"{source}: only {t.size} usable samples (need at least {MIN_SAMPLES} with "
                         "positions and efforts of every joint)")
    dt = np.diff(t)
    period = float(np.median(dt))
    segment = np.concatenate(([0], np.cumsum(dt > 5.0 * period))).astype(int)
    still = [model.joint_names[i] for i in range(model.nq) if np.ptp(q[:, i]) < 1e-6]
    if len(still) == model.nq:
        raise InputError(f"{source}: the positions are constant; the arm did not move (record an "
                         "excitation trajectory, see `robot-dynamics excite`)")
    return Recording(tuple(model.joint_names), t, q, qd, tau, segment, source)


def read_rosbag(path: str | os.PathLike[str], model: RobotModel, *, topic: str = "/joint_states") -> Recording:
    """The ``topic`` messages (sensor_msgs/JointState) of a rosbag2 folder or file.

    Stamps are the messages' header stamps (the log time when a header stamp is zero).
    """
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    p = Path(path)
    if not p.exists():
        raise InputError(f"recording not found: {str(p)!r}")
    try:
        reader = AnyReader([p], default_typestore=get_typestore(Stores.ROS2_HUMBLE))
        reader.open()
    except Exception as exc:  # rosbags raises its own hierarchy; the message names the cause
        raise InputError(f"{p.name}: not a readable rosbag2 recording ({exc})") from None
    try:
        conns = [c for c in reader.connections if c.topic == topic]
        if not conns:
            topics = sorted({c.topic for c in reader.connections})
            raise InputError(f"{p.name}: no topic {topic!r} (topics: {topics})")
        names: list[str] | None = None
        rows_t, rows_q, rows_qd, rows_tau = [], [], [], []
        cols: NDArray[np.int_] | None = None
        n = model.nq
        for conn, log_ns, raw in reader.messages(connections=conns):
            msg = reader.deserialize(raw, conn.msgtype)
            these = list(msg.name)
            if these != names:
                names, cols = these, _order(tuple(model.joint_names), these, p.name)
            assert cols is not None
            stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            rows_t.append(stamp if stamp > 0 else 1e-9 * log_ns)
            k = len(these)

            def field(values: object) -> Array:
                a = np.asarray(values, dtype=float)
                return a[cols] if a.size == k else np.full(n, np.nan)

            rows_q.append(field(msg.position))
            rows_qd.append(field(msg.velocity))
            rows_tau.append(field(msg.effort))
    finally:
        reader.close()
    qd = np.array(rows_qd).reshape(-1, n)
    return _clean(model, np.array(rows_t), np.array(rows_q).reshape(-1, n),
                  None if np.all(np.isnan(qd)) else qd, np.array(rows_tau).reshape(-1, n), p.name)


def read_csv(path: str | os.PathLike[str], model: RobotModel) -> Recording:
    """A CSV with a header ``t``, ``q_<joint>``, ``tau_<joint>`` and optionally ``qd_<joint>``.

    The simulation CSV of ``robot-dynamics simulate`` has these columns.
    """
    p = Path(path)
    if not p.is_file():
        raise InputError(f"recording not found: {str(p)!r}")
    try:
        with p.open(newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"{p.name}: not a CSV text file ({exc})") from None
    if len(rows) < 2:
        raise InputError(f"{p.name}: no data rows")
    header = [h.strip() for h in rows[0]]
    if "t" not in header:
        raise InputError(f"{p.name}: no 't' column (header: {header[:8]}...)")
    try:
        data = np.array([[float(x) if x.strip() else np.nan for x in r] for r in rows[1:] if r], dtype=float)
    except ValueError as exc:
        raise InputError(f"{p.name}: a value is not a number ({exc})") from None
    if data.ndim != 2 or data.shape[1] != len(header):
        raise InputError(f"{p.name}: rows do not all have {len(header)} columns")

    def block(prefix: str, required: bool) -> Array | None:
        names = [f"{prefix}_{j}" for j in model.joint_names]
        missing = [c for c in names if c not in header]
        if missing:
            if required:
                raise InputError(f"{p.name}: missing columns {missing}")
            return None
        return data[:, [header.index(c) for c in names]]

    q = block("q", True)
    tau = block("tau", True)
    assert q is not None and tau is not None
    return _clean(model, data[:, header.index("t")], q, block("qd", False), tau, p.name)


def read_recording(path: str | os.PathLike[str], model: RobotModel) -> Recording:
    """A rosbag2 folder (or .mcap / .db3 file) or a .csv file."""
    p = Path(path)
    if p.suffix.lower() == ".csv":
        return read_csv(p, model)
    return read_rosbag(p, model)


def concatenate(recordings: list[Recording]) -> Recording:
    """Several recordings of one robot as one, each its own segment(s)."""
    if not recordings:
        raise InputError("no recording given")
    names = recordings[0].joint_names
    seg, t, q, qd, tau = [], [], [], [], []
    offset = 0
    for r in recordings:
        if r.joint_names != names:
            raise InputError(f"{r.source}: joints {list(r.joint_names)} differ from {list(names)}")
        seg.append(r.segment + offset)
        offset = int(seg[-1].max()) + 1
        t.append(r.t)
        q.append(r.q)
        qd.append(r.qd)
        tau.append(r.tau)
    qd_all = None if any(v is None for v in qd) else np.concatenate(qd)  # type: ignore[arg-type]
    return Recording(names, np.concatenate(t), np.concatenate(q), qd_all, np.concatenate(tau),
                     np.concatenate(seg), " + ".join(r.source for r in recordings))


def write_csv(path: str | os.PathLike[str], joint_names: tuple[str, ...] | list[str], t: Array, q: Array,
              tau: Array | None = None, qd: Array | None = None, qdd: Array | None = None) -> Path:
    """Write a fixed-rate table (``t, q_<j>..., [qd_<j>..., qdd_<j>..., tau_<j>...]``) atomically."""
    from ..io._files import write_bytes_atomic

    cols = ["t"] + [f"q_{j}" for j in joint_names]
    blocks = [np.asarray(t, dtype=float)[:, None], np.asarray(q, dtype=float)]
    for prefix, v in (("qd", qd), ("qdd", qdd), ("tau", tau)):
        if v is not None:
            cols += [f"{prefix}_{j}" for j in joint_names]
            blocks.append(np.asarray(v, dtype=float))
    table = np.hstack(blocks)
    lines = [",".join(cols)] + [",".join(repr(float(x)) for x in row) for row in table]  # round-trip exact
    return write_bytes_atomic(path, "\n".join(lines) + "\n")
