"""rnea, crba and aba against Pinocchio, side by side in one process, on the same URDF.

    python bench/bench_core.py [--robots puma560 iiwa14] [--batch 10000]

Prints per-sample costs and ratios (ours / Pinocchio's):
* single call: one state per call, from Python, both libraries;
* batch: our vectorised call on N states against a Python loop of N Pinocchio calls.
Ratios below 1 mean robot_dynamics is cheaper.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

import numpy as np

import robot_dynamics as rd


def best_time(fn: Callable[[], object], repeat: int = 5, number: int = 1) -> float:
    """Best of ``repeat`` timings of ``number`` calls, seconds per call."""
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", nargs="+", default=["puma560", "iiwa14"])
    parser.add_argument("--batch", type=int, default=10_000)
    args = parser.parse_args(argv)
    try:
        import pinocchio as pin
    except ImportError:
        print("Pinocchio is not installed (pip install pin): nothing to compare against", file=sys.stderr)
        return 1

    rng = np.random.default_rng(0)
    rows = []
    for name in args.robots:
        model = rd.load_robot(name)
        model = model.replace(viscous=np.zeros(model.nq), coulomb=np.zeros(model.nq))
        pm = pin.buildModelFromXML(model.description)
        iv = [pm.joints[pm.getJointId(n)].idx_v for n in model.joint_names]
        pm.armature[iv] = model.rotor_inertia
        pd = pm.createData()
        N = args.batch
        q, qd, qdd = rng.uniform(-1, 1, (3, N, model.nq))
        # Pinocchio wants its own joint order (here the same as ours: all revolute, same tree order)
        assert iv == list(range(model.nq))
        qs, qds, qdds = list(q), list(qd), list(qdd)
        tau = rd.rnea(model, q, qd, qdd)
        taus = list(tau)

        cases = {
            "rnea": (
                lambda: rd.rnea(model, q[0], qd[0], qdd[0]),
                lambda: pin.rnea(pm, pd, qs[0], qds[0], qdds[0]),
                lambda: rd.rnea(model, q, qd, qdd),
                lambda: [pin.rnea(pm, pd, a, b, c) for a, b, c in zip(qs, qds, qdds)],
            ),
            "crba": (
                lambda: rd.crba(model, q[0]),
                lambda: pin.crba(pm, pd, qs[0]),
                lambda: rd.crba(model, q),
                lambda: [pin.crba(pm, pd, a) for a in qs],
            ),
            "aba": (
                lambda: rd.aba(model, q[0], qd[0], tau[0]),
                lambda: pin.aba(pm, pd, qs[0], qds[0], taus[0]),
                lambda: rd.aba(model, q, qd, tau),
                lambda: [pin.aba(pm, pd, a, b, c) for a, b, c in zip(qs, qds, taus)],
            ),
        }
        for fns in cases.values():  # warm up: first-touch memory, BLAS threads, caches
            for fn in fns:
                fn()
        for algo, (ours1, pin1, oursN, pinN) in cases.items():
            t_ours1 = best_time(ours1, repeat=5, number=200)
            t_pin1 = best_time(pin1, repeat=5, number=2000)
            t_oursN = best_time(oursN, repeat=3) / N
            t_pinN = best_time(pinN, repeat=3) / N
            rows.append((name, algo, t_ours1, t_pin1, t_oursN, t_pinN))

    print(f"per-sample cost in microseconds; batch N = {args.batch}; pinocchio {pin.__version__}")
    head = f"{'robot':9} {'algo':5} {'ours 1':>9} {'pin 1':>8} {'ratio':>7} | {'ours/N':>8} {'pin loop':>9} {'ratio':>7}"
    print(head)
    print("-" * len(head))
    for name, algo, a, b, c, d in rows:
        print(f"{name:9} {algo:5} {a * 1e6:9.1f} {b * 1e6:8.2f} {a / b:7.1f} | {c * 1e6:8.2f} {d * 1e6:9.2f} {c / d:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
