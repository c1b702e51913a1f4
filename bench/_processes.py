"""The processes a bench starts (a ROS node, clients, a launch, busy loops), each in its own
process group, and their orderly stop: SIGINT, then SIGKILL after a grace period."""

from __future__ import annotations

import os
import signal
import subprocess
import time

__all__ = ["Processes"]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Processes:
    """Every process the bench starts, each in its own process group; stop() ends them all."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen] = []

    def start(self, cmd: list[str], **kw) -> subprocess.Popen:
        # SIGINT back to its default in the child: a bench started in the background of a script
        # (no job control) inherits SIGINT ignored (POSIX), and so would the launch and its nodes,
        # which then never stop to write their logs
        p = subprocess.Popen(cmd, start_new_session=True, preexec_fn=_default_sigint, **kw)
        self.procs.append(p)
        return p

    def stop(self, p: subprocess.Popen, timeout: float, sig: int = signal.SIGINT) -> int:
        """Signal ``p`` alone (a launch forwards it to its processes), SIGKILL its group after ``timeout`` s."""
        if p.poll() is None:
            _signal(os.kill, p.pid, sig)
        return _wait_or_kill(p, timeout)

    def stop_all(self, grace: float = 20.0) -> None:
        """SIGINT to every group still running, SIGKILL to those left after ``grace`` s."""
        for p in self.procs:
            if p.poll() is None:
                _signal(os.killpg, p.pid, signal.SIGINT)
        deadline = time.monotonic() + grace
        for p in self.procs:
            _wait_or_kill(p, max(0.1, deadline - time.monotonic()))
        self.procs.clear()


def _signal(send, pid: int, sig: int) -> None:
    """``send(pid, sig)`` (os.kill or os.killpg), nothing when the process has already gone."""
    try:
        send(pid, sig)
    except ProcessLookupError:
        pass


def _wait_or_kill(p: subprocess.Popen, timeout: float) -> int:
    """Wait ``timeout`` s for ``p``, then SIGKILL its process group; its exit code."""
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        _signal(os.killpg, p.pid, signal.SIGKILL)
        p.wait()
    return p.returncode
