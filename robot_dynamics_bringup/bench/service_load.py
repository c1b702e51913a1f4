"""Service clients of the repository's bench/bench_services.py (the rclpy side of the bench).

``client_main`` makes a fixed count of InverseDynamics calls on the PUMA 560 and prints their
latencies, lost and wrong calls as JSON; ``probe_main`` measures the node's first answer. Each
runs in a process of its own, started by the bench with ``--role client`` / ``--role probe``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import numpy as np

from robot_dynamics.ros.bench_runs import inverse_dynamics_client

SERVICE = "/dynamics/inverse_dynamics"
TIMEOUT_S = 5.0


# --------------------------------------------------------------------------- client processes

def _states(robot: str, count: int, seed: int) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``count`` joint states of ``robot`` and the efforts rd.rnea gives there."""
    import robot_dynamics as rd

    m = rd.load_robot(robot)
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(m.lower), m.lower, -np.pi)
    hi = np.where(np.isfinite(m.upper), m.upper, np.pi)
    q = rng.uniform(lo, hi, size=(count, m.nq))
    qd = rng.normal(0.0, 1.0, size=(count, m.nq))
    qdd = rng.normal(0.0, 2.0, size=(count, m.nq))
    tau = np.array([rd.rnea(m, q[i], qd[i], qdd[i]) for i in range(count)])
    return list(m.joint_names), q, qd, qdd, tau


def _wait(executor: Any, future: Any, timeout: float) -> bool:
    """Spin until ``future`` is done or ``timeout`` s have passed. (Jazzy's
    Executor.spin_until_future_complete costs more with every call made: 5 ms a call after a few
    hundred, against 1 ms for this loop.)"""
    end = time.monotonic() + timeout
    while not future.done():
        left = end - time.monotonic()
        if left <= 0:
            return False
        executor.spin_once(timeout_sec=left)
    return True


def _wrong(names: list[str], tau: np.ndarray, response: Any) -> bool:
    if not response.success or list(response.joint_names) != names:
        return True
    got = np.asarray(response.efforts, dtype=float)
    return got.shape != tau.shape or not np.all(np.abs(got - tau) <= 1e-9 * max(1.0, float(np.abs(tau).max())))


def _request(req_type: Any, names: list[str], q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> Any:
    req = req_type.Request()
    req.joint_names = names
    req.positions = q.tolist()
    req.velocities = qd.tolist()
    req.accelerations = qdd.tolist()
    return req


def client_main(args: argparse.Namespace) -> int:
    """One client process: discover, report ready, wait for 'go' on stdin, make the calls, print JSON."""
    names, q, qd, qdd, tau = _states(args.robot, args.calls, args.seed)
    with inverse_dynamics_client("client", args.client_depth, SERVICE) as (executor, client, InverseDynamics):
        if not client.wait_for_service(timeout_sec=120.0):
            print(json.dumps({"error": f"{SERVICE} not discovered in 120 s"}), flush=True)
            return 1
        print("ready", flush=True)
        if sys.stdin.readline().strip() != "go":
            return 1
        lat: list[float] = []
        lost: list[int] = []
        wrong: list[int] = []
        start = time.monotonic()
        for i in range(args.calls):
            req = _request(InverseDynamics, names, q[i], qd[i], qdd[i])
            t0 = time.perf_counter()
            future = client.call_async(req)
            if not _wait(executor, future, TIMEOUT_S):
                client.remove_pending_request(future)
                lost.append(i)
                continue
            lat.append((time.perf_counter() - t0) * 1e3)
            if _wrong(names, tau[i], future.result()):
                wrong.append(i)
        end = time.monotonic()
        print(json.dumps({"start": start, "end": end, "latency_ms": lat, "lost": lost, "wrong": wrong}), flush=True)
        return 0


def probe_main(args: argparse.Namespace) -> int:
    """The first answer: call as soon as the service is discovered, a new request after each timeout."""
    names, q, qd, qdd, tau = _states(args.robot, 1, args.seed)
    unanswered = 0
    discovered = None
    with inverse_dynamics_client("probe", args.client_depth, SERVICE) as (executor, client, InverseDynamics):
        deadline = time.monotonic() + 120.0
        while time.monotonic() < deadline:
            if not client.service_is_ready():
                executor.spin_once(timeout_sec=0.002)
                continue
            discovered = discovered or time.monotonic()
            future = client.call_async(_request(InverseDynamics, names, q[0], qd[0], qdd[0]))
            if _wait(executor, future, TIMEOUT_S):
                t = time.monotonic()
                print(json.dumps({"answer_at": t, "discovered_at": discovered, "unanswered": unanswered,
                                  "wrong": _wrong(names, tau[0], future.result())}), flush=True)
                return 0
            client.remove_pending_request(future)
            unanswered += 1
        print(json.dumps({"error": "no answer in 120 s", "unanswered": unanswered}), flush=True)
        return 1


# --------------------------------------------------------------------------- the driver
