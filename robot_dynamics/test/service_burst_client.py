"""A client process of ``test_ros_nodes.test_bursts_from_several_clients_are_all_answered``.

    python service_burst_client.py COUNT SEED

Makes one InverseDynamics call to /dynamics/inverse_dynamics (the service answers this client),
prints ``ready``, waits for a line on stdin, sends COUNT calls at once (random PUMA 560 states
from SEED) and prints one JSON line: the states and each answer's efforts (null: no answer
within 30 s) and success.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile

from robot_dynamics_interfaces.srv import InverseDynamics


def main() -> int:
    count, seed = int(sys.argv[1]), int(sys.argv[2])
    rclpy.init()
    node = rclpy.create_node(f"burst_client_{seed}")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        # keep every answer of the burst: the reader of a client receives the answers to every
        # client of the service, not only its own
        client = node.create_client(InverseDynamics, "/dynamics/inverse_dynamics", qos_profile=QoSProfile(depth=1000))
        if not client.wait_for_service(timeout_sec=30.0):
            print(json.dumps({"error": "service not discovered in 30 s"}), flush=True)
            return 1
        first = client.call_async(InverseDynamics.Request(positions=[0.0] * 6))
        executor.spin_until_future_complete(first, timeout_sec=30.0)
        if not first.done():
            print(json.dumps({"error": "no answer to the first call in 30 s"}), flush=True)
            return 1
        print("ready", flush=True)
        sys.stdin.readline()
        states = np.random.default_rng(seed).uniform(-1.5, 1.5, (count, 3, 6))
        futures = [client.call_async(InverseDynamics.Request(positions=list(q), velocities=list(qd),
                                                             accelerations=list(qdd))) for q, qd, qdd in states]
        end = time.monotonic() + 30.0
        while time.monotonic() < end and not all(f.done() for f in futures):
            executor.spin_once(timeout_sec=0.02)
        answers = [f.result() if f.done() else None for f in futures]
        print(json.dumps({"states": states.tolist(),
                          "efforts": [None if a is None else list(a.efforts) for a in answers],
                          "success": [a is not None and a.success for a in answers]}), flush=True)
        return 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    sys.exit(main())
