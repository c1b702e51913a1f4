"""The dynamics node's InverseDynamics service under load: calls/s, latency, lost and wrong answers.

    python bench/bench_services.py [--clients 4] [--calls 1000] [--runs 3] [--robot puma560]
        [--service-depth N] [--client-depth N] [--results bench/results/bench_services.json]

Needs rclpy and the built robot_dynamics_interfaces (a sourced ROS 2 workspace). Each run:

1. starts the dynamics node (``python -m robot_dynamics.ros.dynamics_node --ros-args -p
   robot:=<robot>``) in its own process, and at the same moment a probe process that calls
   ``/dynamics/inverse_dynamics`` as soon as it can (retrying while the service is not yet
   discovered, a new request after each 5 s without an answer): the seconds from the node's
   start to the first correct answer, and how many of the probe's requests went unanswered;
2. starts ``--clients`` client processes (each its own rclpy context), waits until each has
   discovered the service, then lets them all start at once: each makes ``--calls`` calls in a
   row, one in flight, a 5 s timeout per call, every call a different joint state (positions in
   the joint limits, random velocities and accelerations), and checks every answer against
   ``rd.rnea`` at that state (to 1e-9 per N m of the largest effort, joint names, success);
3. prints per client and in all: calls/s, p50/p90/p99/max latency in ms, lost calls (no answer
   within 5 s) with the index of each, and wrong answers.

``--service-depth`` sets the node's ``service_queue_depth`` parameter (its services' history
depth; 0 keeps all), left at the node's default (1000) when not given; ``--client-depth`` the
clients' history depth (default 1000; 0 keeps all; 10 is rclpy's services default). A client's
reader receives the answers to every client of the service (rmw_cyclonedds_cpp keeps one reply
topic per service and drops the others' answers when the client takes), so a client that keeps
10 loses its own answer when more than 10 answers to other clients come in before it takes:
``--client-depth 10`` shows it. Ctrl-C or an error stops every process this bench started.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

from _processes import Processes
from _results import write_results
# the rclpy clients live in a ROS package (only ROS packages import ROS)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robot_dynamics_bringup",
                                "bench"))
from service_load import SERVICE, TIMEOUT_S, client_main, probe_main  # noqa: E402


def _read_line(p: subprocess.Popen, timeout: float, what: str, node: subprocess.Popen | None = None, log=None) -> str:
    """The next line ``p`` prints; an error when none comes in ``timeout`` s or when ``node`` ends first."""
    end = time.monotonic() + timeout
    while True:
        ready, _, _ = select.select([p.stdout], [], [], min(0.5, max(0.0, end - time.monotonic())))
        if ready:
            break
        if node is not None and node.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"the dynamics node ended (exit code {node.returncode}): {log.read()[-2000:].strip()}")
        if time.monotonic() >= end:
            raise RuntimeError(f"{what}: nothing within {timeout:.0f} s")
    line = p.stdout.readline()
    if not line:
        raise RuntimeError(f"{what}: the process ended (exit code {p.wait()})")
    return line.strip()


def _percentiles(lat: list[float]) -> dict[str, float]:
    if not lat:
        return {"p50_ms": float("nan"), "p90_ms": float("nan"), "p99_ms": float("nan"), "max_ms": float("nan")}
    a = np.asarray(lat)
    return {"p50_ms": float(np.percentile(a, 50)), "p90_ms": float(np.percentile(a, 90)),
            "p99_ms": float(np.percentile(a, 99)), "max_ms": float(a.max())}


def one_run(args: argparse.Namespace, run: int) -> dict:
    procs = Processes()
    me = [sys.executable, os.path.abspath(__file__), "--robot", args.robot, "--client-depth", str(args.client_depth)]
    node_cmd = [sys.executable, "-m", "robot_dynamics.ros.dynamics_node", "--ros-args", "-p", f"robot:={args.robot}"]
    if args.service_depth is not None:
        node_cmd += ["-p", f"service_queue_depth:={args.service_depth}"]
    try:
        t_start = time.monotonic()
        node_log = tempfile.TemporaryFile("w+")
        node = procs.start(node_cmd, stdout=subprocess.DEVNULL, stderr=node_log, text=True)
        probe = procs.start(me + ["--role", "probe", "--calls", "1", "--seed", "999"], stdout=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)
        first = json.loads(_read_line(probe, 130.0, "first-answer probe", node, node_log))
        if "error" in first:
            raise RuntimeError(f"first-answer probe: {first['error']}")
        first_s = first["answer_at"] - t_start
        discovered_s = first["discovered_at"] - t_start
        print(f"run {run}: node up, first answer {first_s:.2f} s after its start (service discovered at "
              f"{discovered_s:.2f} s; {first['unanswered']} request(s) unanswered before it)", flush=True)
        clients = [procs.start(me + ["--role", "client", "--calls", str(args.calls), "--seed", str(100 * run + k)],
                               stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True) for k in range(args.clients)]
        for k, c in enumerate(clients):
            line = _read_line(c, 150.0, f"client {k}", node, node_log)
            if line != "ready":
                raise RuntimeError(f"client {k}: {line}")
        for c in clients:
            c.stdin.write("go\n")
            c.stdin.flush()
        budget = 60.0 + args.calls * (TIMEOUT_S + 0.1)
        results = [json.loads(_read_line(c, budget, f"client {k}", node, node_log)) for k, c in enumerate(clients)]
        for c in clients + [probe]:  # they end by themselves once they have printed
            try:
                c.wait(10.0)
            except subprocess.TimeoutExpired:
                pass
    finally:
        procs.stop_all(grace=10.0)
    node_log.seek(0)
    warnings = [line for line in node_log.read().splitlines() if "failed to send response" in line]
    node_log.close()
    rows = []
    for k, r in enumerate(results):
        answered = len(r["latency_ms"])
        rows.append({"client": k, "calls": args.calls, "calls_per_s": answered / (r["end"] - r["start"]),
                     **_percentiles(r["latency_ms"]), "lost": len(r["lost"]), "lost_at": r["lost"],
                     "wrong": len(r["wrong"])})
    all_lat = [x for r in results for x in r["latency_ms"]]
    span = max(r["end"] for r in results) - min(r["start"] for r in results)
    total = {"calls": args.clients * args.calls, "calls_per_s": len(all_lat) / span, **_percentiles(all_lat),
             "lost": sum(x["lost"] for x in rows), "wrong": sum(x["wrong"] for x in rows)}
    return {"run": run, "node_send_failures": len(warnings), "first_answer_s": first_s,
            "service_discovered_s": discovered_s, "first_unanswered": first["unanswered"],
            "first_wrong": first["wrong"], "clients": rows, "total": total, "load_average": list(os.getloadavg())}


def _print_run(res: dict) -> None:
    print(f"{'client':>8} {'calls/s':>9} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'max ms':>8} {'lost':>5} "
          f"{'wrong':>6}")
    for r in res["clients"] + [dict(res["total"], client="all")]:
        print(f"{r['client']:>8} {r['calls_per_s']:9.0f} {r['p50_ms']:8.3f} {r['p90_ms']:8.3f} {r['p99_ms']:8.3f} "
              f"{r['max_ms']:8.2f} {r['lost']:5d} {r['wrong']:6d}"
              + (f"   lost at call {r['lost_at']}" if r.get("lost_at") else ""))
    la = res["load_average"]
    print(f"run {res['run']}: load average {la[0]:.2f} {la[1]:.2f} {la[2]:.2f}; responses the node failed to send: "
          f"{res['node_send_failures']}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--calls", type=int, default=1000, help="calls per client per run")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--robot", default="puma560")
    parser.add_argument("--service-depth", type=int, default=None,
                        help="the node's service_queue_depth (default: the node's default; 0 keeps all)")
    parser.add_argument("--client-depth", type=int, default=1000,
                        help="the clients' history depth (0 keeps all; rclpy's default is 10)")
    parser.add_argument("--results", default=None, metavar="JSON", help="also write the numbers as JSON (atomically)")
    parser.add_argument("--role", choices=("driver", "client", "probe"), default="driver", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.clients < 1 or args.calls < 1 or args.runs < 1 or args.client_depth < 0 or \
            (args.service_depth is not None and args.service_depth < 0):
        parser.error("--clients, --calls and --runs take a positive count, the depths a count >= 0")
    if args.role != "driver":
        try:
            return client_main(args) if args.role == "client" else probe_main(args)
        except KeyboardInterrupt:  # the driver stops its processes with SIGINT
            return 130
    print(f"{args.clients} clients x {args.calls} calls of {SERVICE} ({args.robot}), {TIMEOUT_S:.0f} s timeout, "
          f"service depth {'default' if args.service_depth is None else args.service_depth}, "
          f"client depth {args.client_depth} (0: keep all), {os.getenv('RMW_IMPLEMENTATION', 'default RMW')}",
          flush=True)
    runs = []
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` stops every process too, as Ctrl-C does
    try:
        for run in range(1, args.runs + 1):
            res = one_run(args, run)
            _print_run(res)
            runs.append(res)
    except KeyboardInterrupt:
        print("interrupted: every process stopped", file=sys.stderr)
        return 130
    except RuntimeError as exc:
        print(f"bench_services: {exc} (every process stopped)", file=sys.stderr)
        return 1
    if args.results:
        write_results(args.results, "bench_services.py", argv, rmw=os.getenv("RMW_IMPLEMENTATION", ""), runs=runs)
    return 0 if all(r["total"]["lost"] == 0 and r["total"]["wrong"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
