"""The controller node's record of the commands it published (``command_log`` parameter).

One CSV row per command: ``stamp_ns, receive_steady_ns, publish_steady_ns, effort_<joint>...``:
the header stamp of the /joint_states message the command was computed from, when that message
reached the node and when the command was published (both on the steady clock,
``time.monotonic_ns``, the clock C++'s ``std::chrono::steady_clock`` reads), the efforts
[N m or N]. The control-loop bench (bench/bench_control_loop.py, bench/loop_latency.py) reads it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError

__all__ = ["COMMAND_HEADER", "CommandRecorder"]

#: The fixed columns of the file, before one ``effort_<joint>`` column per joint.
COMMAND_HEADER = ("stamp_ns", "receive_steady_ns", "publish_steady_ns")


def _write_text_atomic(path: str, lines: Sequence[str]) -> None:
    """``lines`` (each ending in a newline) into ``path``: a temporary file beside it, renamed."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".command_log.", dir=folder)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # a file as open() makes it, not mkstemp's 0600
        with os.fdopen(fd, "w") as f:
            f.writelines(lines)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class CommandRecorder:
    """A preallocated ring of the last ``capacity`` commands a controller node published.

    Per command: the stamp of the joint state it was computed from, when that state arrived,
    when the command left, the efforts. :meth:`on_state` and :meth:`on_command` allocate nothing
    (the arrays are touched at construction, so no page is first faulted in inside the loop).

    Args:
        capacity: commands kept (the last ones), >= 1.
        joints: the command's joint order (column names of the file).
    """

    def __init__(self, capacity: int, joints: Sequence[str]):
        if int(capacity) < 1:
            raise InputError(f"command log: capacity must be >= 1, got {capacity!r}")
        self.capacity = int(capacity)
        self.joints = tuple(joints)
        self.times = np.full((self.capacity, 3), -1, dtype=np.int64)  # stamp, receive, publish
        self.effort = np.full((self.capacity, len(self.joints)), np.nan)
        self.count = 0
        self._stamp = -1
        self._receive = -1

    def on_state(self, stamp_ns: int, receive_ns: int) -> None:
        """The controller took a joint state stamped ``stamp_ns`` that arrived at ``receive_ns``."""
        self._stamp = stamp_ns
        self._receive = receive_ns

    def on_command(self, publish_ns: int, effort: Sequence[float]) -> bool:
        """The node publishes ``effort`` at ``publish_ns``, computed from the last state taken.

        False (nothing kept) when the effort has the wrong length.
        """
        if len(effort) != self.effort.shape[1]:
            return False
        k = self.count % self.capacity
        row = self.times[k]
        row[0] = self._stamp
        row[1] = self._receive
        row[2] = publish_ns
        self.effort[k] = effort
        self.count += 1
        return True

    def rows(self) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """The kept commands oldest first: (times (m, 3), efforts (m, nj))."""
        m = min(self.count, self.capacity)
        order = (np.arange(self.count - m, self.count) % self.capacity) if m else np.arange(0)
        return self.times[order], self.effort[order]

    def write_csv(self, path: str) -> int:
        """Write the kept commands to ``path`` as CSV (atomically); the number of rows written.

        Efforts are written with 17 significant digits: a double reads back bit for bit.
        """
        times, effort = self.rows()
        header = ",".join(COMMAND_HEADER + tuple(f"effort_{j}" for j in self.joints)) + "\n"
        lines = [header]
        lines.extend(f"{t[0]},{t[1]},{t[2]}," + ",".join(map(repr, e)) + "\n"
                     for t, e in zip(times.tolist(), effort.tolist()))
        _write_text_atomic(path, lines)
        return len(lines) - 1
