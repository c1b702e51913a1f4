"""Throughput of a study on a local Dask cluster against a plain loop of simulate() calls.

    python bench/bench_sweep.py [--points 200] [--workers 2] [--duration 1.0]

Runs the same points (computed torque on the PUMA 560 under payload and mass error, like the
bundled study) three ways and prints points per second:

* a plain loop of ``simulate`` in this process (no engine at all);
* ``run_study(..., scheduler="inprocess")`` (chunks and Parquet parts, no Dask);
* ``run_study(..., scheduler="local", workers=N)`` (a LocalCluster of N processes),

then the speed-up of the cluster over the loop (the ideal is N on N free cores) and the
engine's overhead per point: the wall time the workers did not spend simulating, per point,
with the cluster's start-up shown apart.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

from robot_dynamics.study import evaluate_point, load_study, points, run_study


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--duration", type=float, default=1.0, help="simulated seconds per point (move + settle)")
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
    n = len(pts)
    print(f"{n} points of {args.duration:g} s simulated at 500 Hz (computed torque, puma560); {args.workers} workers")
    print(f"{'how':45} {'wall [s]':>9} {'points/s':>9}")
    print(f"{'plain loop of simulate() in one process':45} {loop:9.2f} {n / loop:9.2f}")
    print(f"{'run_study, in process (Parquet parts)':45} {inproc.wall_time:9.2f} {n / inproc.wall_time:9.2f}")
    print(f"{f'run_study, LocalCluster of {args.workers}':45} {cl.wall_time:9.2f} {n / cl.wall_time:9.2f}")
    print(f"speed-up of the cluster over the loop: {loop / cl.wall_time:.2f} (ideal {args.workers})")
    overhead = (cl.wall_time * args.workers - cl.task_time) / n
    print(f"engine overhead per point: {overhead * 1e3:.1f} ms of worker time not spent simulating "
          f"(a point simulates in {cl.task_time / n * 1e3:.1f} ms); cluster start-up {startup:.1f} s, not counted")
    return 0


if __name__ == "__main__":
    sys.exit(main())
