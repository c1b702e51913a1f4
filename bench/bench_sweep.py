"""Throughput of a study on a local Dask cluster against a plain loop of simulate() calls.

    python bench/bench_sweep.py [--points 200] [--workers 2] [--duration 1.0]

Runs the same points (computed torque on the PUMA 560 under payload and mass error, like the
bundled study) three ways and prints points per second:

* a plain loop of ``simulate`` in this process (no engine at all), with the simulation's
  Python tick (``Integration(compiled=False)``: the loop as it was) and with its compiled loop;
* ``run_study(..., scheduler="inprocess")`` (chunks and Parquet parts, no Dask);
* ``run_study(..., scheduler="local", workers=N)`` (a LocalCluster of N processes),

and with ``--cli-cluster``, on a cluster whose scheduler and workers are separate processes
started by the ``dask scheduler`` and ``dask worker`` commands (as on several machines; here on
this one, ``--workers`` worker processes of one thread each), by its address;

then the speed-up of the cluster over the loop (the ideal is N on N free cores) and the
engine's overhead per point: the wall time the workers did not spend simulating, per point,
with the cluster's start-up shown apart.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

from robot_dynamics.study import evaluate_point, load_study, points, run_study


@contextlib.contextmanager
def cli_cluster(workers: int, folder: str) -> Iterator[str]:
    """A scheduler and ``workers`` workers started as separate processes by the ``dask`` command;
    yields the scheduler's address and stops the processes it started."""
    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    info = os.path.join(folder, "scheduler.json")
    procs = [subprocess.Popen([dask, "scheduler", "--scheduler-file", info, "--port", "0", "--dashboard-address", ":0"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(info):
            if time.monotonic() > deadline or procs[0].poll() is not None:
                raise RuntimeError("dask scheduler did not start")
            time.sleep(0.1)
        time.sleep(0.2)  # the file is complete once written
        with open(info, encoding="utf-8") as f:
            address = json.load(f)["address"]
        for _ in range(workers):
            procs.append(subprocess.Popen([dask, "worker", address, "--nthreads", "1", "--nworkers", "1",
                                           "--dashboard-address", ":0", "--local-directory", folder],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        yield address
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--duration", type=float, default=1.0, help="simulated seconds per point (move + settle)")
    parser.add_argument("--cli-cluster", action="store_true",
                        help="also run on a scheduler and workers started as processes by `dask scheduler` / `dask worker`")
    args = parser.parse_args(argv)
    samples = max(1, args.points // 4)
    study = load_study(
        {
            "name": "bench",
            "robot": "puma560",
            "controller": {"type": "computed_torque", "omega": 20.0},
            "motion": {"profile": "quintic", "duration": 0.75 * args.duration, "settle": 0.25 * args.duration},
            "simulation": {"control_rate": 500.0},
            "axes": {"payload": {"link": "link6", "grid": [0.0, 1.0, 2.0, 4.0]}, "mass_error": {"uniform": [-0.3, 0.3]}},
            "samples": samples,
        }
    )
    pts = points(study)
    evaluate_point(study, pts[0])  # warm: kernels loaded in this process
    from robot_dynamics.simulation import core

    compiled_loop = core.compiled_loop
    core.compiled_loop = lambda sim: None  # every tick in Python, as before the compiled loop
    try:
        t0 = time.perf_counter()
        for p in pts:
            evaluate_point(study, p)
        python_tick = time.perf_counter() - t0
    finally:
        core.compiled_loop = compiled_loop
    t0 = time.perf_counter()
    for p in pts:
        evaluate_point(study, p)
    loop = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as out:
        inproc = run_study(study, f"{out}/a", scheduler="inprocess", progress=False)
        t0 = time.perf_counter()
        from dask.distributed import Client, LocalCluster

        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as client:
            client.run(lambda: evaluate_point(study, pts[0]))  # each worker loads the robot and its kernels
            startup = time.perf_counter() - t0
            cl = run_study(study, f"{out}/b", scheduler=cluster.scheduler_address, workers=args.workers, progress=False)
        cli = None
        if args.cli_cluster:
            t0 = time.perf_counter()
            with cli_cluster(args.workers, out) as address, Client(address) as client:
                client.wait_for_workers(args.workers, timeout=120)
                client.run(lambda: evaluate_point(study, pts[0]))
                cli_startup = time.perf_counter() - t0
                cli = run_study(study, f"{out}/c", scheduler=address, workers=args.workers, progress=False)
    n = len(pts)
    print(f"{n} points of {args.duration:g} s simulated at 500 Hz (computed torque, puma560); {args.workers} workers")
    print(f"{'how':45} {'wall [s]':>9} {'points/s':>9}")
    print(f"{'plain loop of simulate(), Python tick':45} {python_tick:9.2f} {n / python_tick:9.2f}")
    print(f"{'plain loop of simulate(), compiled loop':45} {loop:9.2f} {n / loop:9.2f}")
    print(f"{'run_study, in process (Parquet parts)':45} {inproc.wall_time:9.2f} {n / inproc.wall_time:9.2f}")
    print(f"{f'run_study, LocalCluster of {args.workers}':45} {cl.wall_time:9.2f} {n / cl.wall_time:9.2f}")
    if cli is not None:
        print(f"{f'run_study, dask scheduler + {args.workers} dask worker':45} {cli.wall_time:9.2f} {n / cli.wall_time:9.2f}")
    print(f"speed-up of the cluster over the loop: {loop / cl.wall_time:.2f} (ideal {args.workers}); "
          f"efficiency {loop / cl.wall_time / args.workers:.2f}")
    overhead = (cl.wall_time * args.workers - cl.task_time) / n
    print(f"engine overhead per point: {overhead * 1e3:.1f} ms of worker time not spent simulating "
          f"(a point simulates in {cl.task_time / n * 1e3:.1f} ms); cluster start-up {startup:.1f} s, not counted")
    if cli is not None:
        over = (cli.wall_time * args.workers - cli.task_time) / n
        print(f"dask scheduler/worker processes: speed-up {loop / cli.wall_time:.2f}, efficiency "
              f"{loop / cli.wall_time / args.workers:.2f}, overhead per point {over * 1e3:.1f} ms; start-up {cli_startup:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
