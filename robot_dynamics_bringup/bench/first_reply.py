"""How long a fresh dynamics node takes to answer: ``python robot_dynamics_bringup/bench/first_reply.py``.

Starts the dynamics node (``robot:=puma560``) in a new process, publishes a PUMA 560 joint
state until the node's first ``/dynamics/gravity_compensation`` arrives, and prints the seconds
from the node's start to that message (nan after 60 s). ``bench/bench_core.py`` runs it for its
cold table. Ctrl-C stops it without a number (exit code 130, no traceback).
"""

from __future__ import annotations

from robot_dynamics.ros.bench_runs import first_reply_seconds


def main() -> None:
    try:
        seconds = first_reply_seconds()
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    print(seconds)


if __name__ == "__main__":
    main()
