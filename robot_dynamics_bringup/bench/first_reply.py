"""How long a fresh dynamics node takes to answer: ``python robot_dynamics_bringup/bench/first_reply.py``.

Starts the dynamics node (``robot:=puma560``) in a new process, publishes a PUMA 560 joint
state until the node's first ``/dynamics/gravity_compensation`` arrives, and prints the seconds
from the node's start to that message (nan after 60 s). ``bench/bench_core.py`` runs it for its
cold table. Ctrl-C stops it without a number (exit code 130, no traceback).
"""

from __future__ import annotations

import subprocess
import sys
import time


def main() -> None:
    try:
        seconds = _measure()
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    print(seconds)


def _measure() -> float:
    import rclpy
    from rclpy.node import Node
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    from robot_dynamics.ros.node_common import sigint_ignored

    rclpy.init()
    node = None
    proc = None
    got: list[float] = []
    try:
        node = Node("first_reply_probe")
        node.create_subscription(Float64MultiArray, "/dynamics/gravity_compensation",
                                 lambda msg: got.append(time.perf_counter()), 10)
        pub = node.create_publisher(JointState, "/joint_states", 10)
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "robot_dynamics.ros.dynamics_node", "--ros-args", "-r",
                                 "__node:=dynamics", "-p", "robot:=puma560"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        msg = JointState()
        msg.name = [f"joint{i}" for i in range(1, 7)]
        msg.position = [0.0] * 6
        while not got and time.perf_counter() - start < 60:
            pub.publish(msg)
            rclpy.spin_once(node, timeout_sec=0.01)
    finally:
        with sigint_ignored():  # a second Ctrl-C does not interrupt the cleanup
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            if node is not None:
                node.destroy_node()
            rclpy.try_shutdown()
    return got[0] - start if got else float("nan")


if __name__ == "__main__":
    main()
