"""Throughput of a study on Dask against a plain loop of simulate() calls, and how it scales.

    python bench/bench_sweep.py [--points 1000] [--workers N] [--duration 1.0] [--cli-cluster]
                                [--results bench/results/bench_sweep.json]

Runs the same points (computed torque on the PUMA 560 under payload and mass error, like the
bundled study) several ways and prints points per second:

* a plain loop of ``evaluate_point`` (one ``Simulation`` each) in this process, with the
  simulation's Python tick (``Integration(compiled=False)``: the loop as it was, on the first
  ``--python-tick-points`` points) and with its compiled loop (every point);
* ``run_study(..., scheduler="inprocess")`` (chunks and Parquet parts, no Dask);
* ``run_study`` on a LocalCluster of 1, 2, ... ``--workers`` processes (default: one per core),
  each with its speed-up over the loop, its efficiency (speed-up / workers; 1 is ideal), its
  scaling (points/s against N times one worker's: the goal's measure, "0.8 of N times one
  worker's points per second") and the engine's overhead per point: the worker time not spent
  simulating, (wall x workers - time in the tasks) / points, with the cluster's start-up shown
  apart. Both ratios are judged against 0.8 at one worker per core: the efficiency counts what a
  cluster costs over a plain loop, the scaling what each added worker brings;

and with ``--cli-cluster``, on a cluster whose scheduler and workers are separate processes
started by the ``dask scheduler`` and ``dask worker`` commands (as on several machines; here on
this one, ``--workers`` worker processes of one thread each), by its address.
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
from _results import write_results

#: Asked of a LocalCluster of one worker per core: 0.8 of N times one worker's points per second
#: (the scaling); the efficiency against the plain loop is printed and judged beside it.
GOAL_EFFICIENCY = 0.8


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


def _study(points_wanted: int, duration: float):
    samples = max(1, points_wanted // 4)
    return load_study(
        {
            "name": "bench",
            "robot": "puma560",
            "controller": {"type": "computed_torque", "omega": 20.0},
            "motion": {"profile": "quintic", "duration": 0.75 * duration, "settle": 0.25 * duration},
            "simulation": {"control_rate": 500.0},
            "axes": {"payload": {"link": "link6", "grid": [0.0, 1.0, 2.0, 4.0]}, "mass_error": {"uniform": [-0.3, 0.3]}},
            "samples": samples,
        }
    )


def _loop(study, pts, python_tick: bool) -> float:
    """Seconds for a plain loop of evaluate_point over pts (the Python tick or the compiled loop)."""
    from robot_dynamics.simulation import core

    compiled_loop = core.compiled_loop
    if python_tick:
        core.compiled_loop = lambda sim: None  # every tick in Python, as before the compiled loop
    try:
        t0 = time.perf_counter()
        for p in pts:
            evaluate_point(study, p)
        return time.perf_counter() - t0
    finally:
        core.compiled_loop = compiled_loop


def _cluster_row(how: str, workers: int, n: int, loop: float, run, startup: float) -> dict:
    """One row of the table: points/s, speed-up over the loop, efficiency, overhead per point."""
    return {"how": how, "workers": workers, "wall_s": run.wall_time, "points_per_s": n / run.wall_time,
            "speedup": loop / run.wall_time, "efficiency": loop / run.wall_time / workers,
            "overhead_ms_per_point": (run.wall_time * workers - run.task_time) / n * 1e3,
            "task_ms_per_point": run.task_time / n * 1e3, "startup_s": startup}


def _local_clusters(study, pts, out: str, loop: float, max_workers: int) -> list[dict]:
    from dask.distributed import Client, LocalCluster

    rows = []
    for w in range(1, max_workers + 1):
        t0 = time.perf_counter()
        with LocalCluster(n_workers=w, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            client.run(lambda: evaluate_point(study, pts[0]))  # each worker loads the robot and its kernels
            startup = time.perf_counter() - t0
            run = run_study(study, f"{out}/local{w}", scheduler=cluster.scheduler_address, workers=w, progress=False)
        rows.append(_cluster_row(f"run_study, LocalCluster of {w}", w, len(pts), loop, run, startup))
    return rows


def _cli_cluster_row(study, pts, out: str, loop: float, workers: int) -> dict:
    from dask.distributed import Client

    t0 = time.perf_counter()
    with cli_cluster(workers, out) as address, Client(address) as client:
        client.wait_for_workers(workers, timeout=120)
        client.run(lambda: evaluate_point(study, pts[0]))
        startup = time.perf_counter() - t0
        run = run_study(study, f"{out}/cli", scheduler=address, workers=workers, progress=False)
    return _cluster_row(f"run_study, dask scheduler + {workers} dask worker", workers, len(pts), loop, run, startup)


def add_scaling(rows: list[dict]) -> None:
    """Each cluster row's scaling: its points/s against N times the LocalCluster of 1 worker's."""
    one = next((r["points_per_s"] for r in rows if r.get("workers") == 1 and "LocalCluster" in r["how"]), None)
    for r in rows:
        if "workers" in r and one:
            r["scaling"] = r["points_per_s"] / (r["workers"] * one)


def _print(rows: list[dict], n: int, args) -> None:
    cores = os.cpu_count()
    print(f"{n} points of {args.duration:g} s simulated at 500 Hz (computed torque, puma560), on {cores} cores")
    print(f"{'how':45} {'points/s':>9} {'speed-up':>9} {'efficiency':>10} {'scaling':>8} {'overhead/pt':>12} {'start-up':>9}"
          f"  (goals: scaling and efficiency >= {GOAL_EFFICIENCY} at {cores} workers)")
    for r in rows:
        if "speedup" in r:
            verdict = "".join(f"  {name} {'met' if r[key] >= GOAL_EFFICIENCY else 'missed'}"
                              for name, key in (("scaling", "scaling"), ("efficiency", "efficiency")) if key in r)
            print(f"{r['how']:45} {r['points_per_s']:9.1f} {r['speedup']:8.2f}x {r['efficiency']:10.2f} "
                  f"{r.get('scaling', float('nan')):8.2f} {r['overhead_ms_per_point']:9.1f} ms {r['startup_s']:7.1f} s"
                  f"{verdict if r['workers'] == cores else ''}")
        else:
            print(f"{r['how']:45} {r['points_per_s']:9.1f}")
    print("speed-up and efficiency against the plain loop with the compiled loop; scaling against N times the "
          "LocalCluster of 1 worker's points/s; overhead/pt: worker time not spent simulating, per point; "
          "start-up not counted")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--python-tick-points", type=int, default=100, help="points of the Python-tick loop (it is slow)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="up to this many workers (default: one per core)")
    parser.add_argument("--duration", type=float, default=1.0, help="simulated seconds per point (move + settle)")
    parser.add_argument("--cli-cluster", action="store_true",
                        help="also run on a scheduler and workers started as processes by `dask scheduler` / `dask worker`")
    parser.add_argument("--results", default=None, metavar="JSON", help="also write the table as JSON (atomically)")
    args = parser.parse_args(argv)
    study = _study(args.points, args.duration)
    pts = points(study)
    n = len(pts)
    evaluate_point(study, pts[0])  # warm: kernels loaded in this process
    few = pts[: max(1, min(n, args.python_tick_points))]
    rows = [{"how": f"plain loop, Python tick ({len(few)} points)", "points_per_s": len(few) / _loop(study, few, True)}]
    loop = _loop(study, pts, False)
    rows.append({"how": "plain loop, compiled loop", "points_per_s": n / loop})
    with tempfile.TemporaryDirectory() as out:
        inproc = run_study(study, f"{out}/a", scheduler="inprocess", progress=False)
        rows.append({"how": "run_study, in process (Parquet parts)", "points_per_s": n / inproc.wall_time})
        rows += _local_clusters(study, pts, out, loop, args.workers)
        if args.cli_cluster:
            rows.append(_cli_cluster_row(study, pts, out, loop, args.workers))
    add_scaling(rows)
    _print(rows, n, args)
    if args.results:
        write_results(args.results, "bench_sweep.py", argv, points=n, rows=rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
