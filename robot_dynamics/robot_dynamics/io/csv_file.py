"""CSV export of a simulation: one row per controller tick."""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any

import numpy as np

from ._files import write_bytes_atomic

__all__ = ["write_simulation_csv", "simulation_columns"]


def simulation_columns(result: Any) -> tuple[list[str], np.ndarray]:
    """Header and data (K, columns) of a simulation table.

    Columns: ``t``, then per joint ``q_<j>``, ``qd_<j>``, ``q_ref_<j>``, ``qd_ref_<j>``,
    ``tau_<j>`` (joint torque), ``effort_<j>`` (actuator command), then ``status`` (flags of
    :class:`robot_dynamics.control.Status`), and ``x, y, z, x_ref, y_ref, z_ref`` for
    task-space runs. Units: s, rad (m), rad/s (m/s), N m (N).
    """
    names = list(result.joint_names)
    header = ["t"]
    blocks = [result.t[:, None]]
    for label, arr in (("q", result.q), ("qd", result.qd), ("q_ref", result.q_ref), ("qd_ref", result.qd_ref), ("tau", result.tau), ("effort", result.effort)):
        header += [f"{label}_{n}" for n in names]
        blocks.append(arr)
    header.append("status")
    blocks.append(result.status[:, None].astype(float))
    if result.x is not None:
        header += ["x", "y", "z", "x_ref", "y_ref", "z_ref"]
        blocks += [result.x, result.x_ref]
    return header, np.hstack(blocks)


def write_simulation_csv(result: Any, path: str | os.PathLike[str]) -> Path:
    """Write the simulation table (see :func:`simulation_columns`) atomically; returns the path."""
    header, data = simulation_columns(result)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in data:
        w.writerow([repr(float(v)) if np.isfinite(v) else ("nan" if np.isnan(v) else str(v)) for v in row])
    return write_bytes_atomic(path, buf.getvalue())
