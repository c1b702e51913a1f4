"""Customised Newton-Euler code (issue: speed) against the core's rnea and Pinocchio's.

    python bench/bench_codegen.py [--robots puma560 rx90 iiwa14] [--batch 10000] [--json FILE]

In one run, on one machine:

1. agreement: generated numpy, compiled single-call and compiled batch paths against the
   core's rnea (friction and rotor inertia on), for every bundled robot and random trees;
2. operation counts beside Khalil's (general 6R: 92n-127 / 81n-117; RX-90: Table 7.6);
3. generation time of a 7-dof arm in an empty cache (progress shown), then the time a second,
   fresh process takes to load it from the cache;
4. speed against Pinocchio on the same URDF, interleaved, best of several rounds: a single
   call from Python (goal: within 1.5 x Pinocchio's) and a batch of 10,000 samples with
   2 threads (goal: at least 4 x cheaper per sample than pinocchio.rneaInParallel).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import robot_dynamics as rd
from robot_dynamics.codegen import generate, khalil_comparison, numba_available
from robot_dynamics.codegen.benchmark import benchmark
from robot_dynamics.testing import random_tree_urdf


def agreement(models: dict[str, rd.RobotModel]) -> list[dict[str, object]]:
    rows = []
    for label, model in models.items():
        if model.drivetrain is not None and getattr(model.drivetrain, "coupled", False):
            print(f"  {label:12s} coupled gear train: not generated (falls back to the core's rnea)")
            rows.append({"robot": label, "skipped": "coupled gear train"})
            continue
        rng = np.random.default_rng(7)
        model = model.replace(
            viscous=rng.uniform(0.1, 1, model.nq), coulomb=rng.uniform(0.1, 1, model.nq),
            rotor_inertia=rng.uniform(0.01, 0.2, model.nq),
        )
        gm = generate(model)
        q = rng.uniform(-np.pi, np.pi, (1000, model.nq))
        qd, qdd = rng.normal(size=(2, 1000, model.nq)) * 3
        ref = rd.rnea(model, q, qd, qdd)
        scale = np.abs(ref).max()
        row = {"robot": label, "nq": model.nq, "counts": str(gm.counts),
               "numpy": float(np.abs(gm.numpy_batch(q, qd, qdd) - ref).max() / scale)}
        if gm.compiled:
            single = np.array([gm.single(q[i], qd[i], qdd[i]) for i in range(200)])
            row["single"] = float(np.abs(single - ref[:200]).max() / scale)
            row["batch"] = float(np.abs(gm.batch(q, qd, qdd) - ref).max() / scale)
        rows.append(row)
        print(f"  {label:12s} nq={model.nq}  " + "  ".join(
            f"{k}={v:.1e}" for k, v in row.items() if isinstance(v, float)) + f"  ({row['counts']})", flush=True)
    return rows


_GEN = (
    "import time, sys; t0 = time.perf_counter(); import robot_dynamics as rd; "
    "from robot_dynamics.codegen import generate; "
    "m = rd.load_robot('{robot}'); t1 = time.perf_counter(); "
    "g = generate(m, progress=lambda s: print('    ' + s, file=sys.stderr, flush=True)); "
    "print(g.from_cache, time.perf_counter() - t1, time.perf_counter() - t0)"
)


def generation_timing(robot: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, ROBOT_DYNAMICS_CACHE=tmp)
        out = {}
        for run in ("first", "second"):
            res = subprocess.run(
                [sys.executable, "-c", _GEN.format(robot=robot)], env=env, capture_output=True, text=True, cwd=tmp
            )
            if res.returncode != 0:
                raise RuntimeError(res.stderr)
            sys.stderr.write(res.stderr)
            from_cache, gen, total = res.stdout.split()
            out[f"{run}_generate_seconds"] = float(gen)
            out[f"{run}_process_seconds"] = float(total)
            out[f"{run}_from_cache"] = from_cache == "True"
            print(f"  {run} run: generate() {float(gen):.2f} s (from cache: {from_cache}), "
                  f"whole process incl. imports {float(total):.2f} s", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", nargs="+", default=["puma560", "rx90", "iiwa14"])
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--json", help="write the results to this JSON file")
    args = parser.parse_args(argv)
    results: dict[str, object] = {"numba": numba_available()}

    print("1. agreement with the core's rnea (max |diff| / max |tau|)", flush=True)
    rng = np.random.default_rng(3)
    models = {name: rd.load_robot(name) for name in rd.list_robots()}
    models["random tree"] = rd.load_urdf(random_tree_urdf(rng, 9))
    models["tree, mimic"] = rd.load_urdf(random_tree_urdf(rng, 7, mimic=True))
    results["agreement"] = agreement(models)

    print("\n2. operation counts without friction, beside Khalil's", flush=True)
    rows = khalil_comparison()
    for r in rows:
        print(f"  {r['case']:48s} {r['multiplications']:4d} mult (Khalil {r['khalil_multiplications']}), "
              f"{r['additions']:4d} add (Khalil {r['khalil_additions']})")
    results["khalil"] = rows

    print("\n3. generation of a 7-dof arm (iiwa14) in an empty cache, then from the cache", flush=True)
    results["generation"] = generation_timing("iiwa14")

    print("\n4. against Pinocchio, same URDF, interleaved rounds (us per call or per sample)", flush=True)
    speed = []
    for name in args.robots:
        res = benchmark(rd.load_robot(name), batch=args.batch, rounds=args.rounds)
        speed.append(res)
        print(f"  {name} ({res['counts']})")
        for row in res["rows"]:
            print(f"    {row['path']:48s} {row['kind']:6s} {row['us']:10.3f}  diff {row['agreement']:.1e}")
        for k, v in res["ratios"].items():
            print(f"    {k}: {v:.2f}")
        sys.stdout.flush()
    results["speed"] = speed
    if args.json:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(json.dumps(results, indent=2, default=float), encoding="utf-8")
        os.replace(tmp, path)
    return 0


if __name__ == "__main__":
    t0 = time.perf_counter()
    code = main()
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    sys.exit(code)
