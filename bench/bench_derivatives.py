"""The analytical derivatives against Pinocchio's and against finite differences of our own
rnea/aba, side by side in one process, on the same URDF.

    python bench/bench_derivatives.py [--robots puma560 iiwa14 three_dof_geared] [--urdf FILE ...]
                                      [--sizes 1000 10000] [--threads 1 2 N]
                                      [--results bench/results/bench_derivatives.json]

Per robot, microseconds per state and the ratios (below 1: robot_dynamics is cheaper):

* one state from Python: ``rd.rnea_derivatives`` against ``pin.computeRNEADerivatives`` and
  ``rd.aba_derivatives`` against ``pin.computeABADerivatives`` (goal: ratio <= 0.5); against
  central finite differences of our own rnea/aba by their one-state fast path (4 nq and 6 nq
  calls: the cheapest way to difference them from Python; goal: ours >= 5x faster);
* batches of several sizes at 1, 2 and all threads: ours (OpenMP) against a Python loop of
  Pinocchio's calls (Pinocchio has no batched or parallel derivatives; goal <= 0.5).

The URDF files (``--urdf``; by default example-robot-data's UR5 and Panda, as in bench_core.py)
are loaded from their files by both libraries. The geared three_dof_geared has no Pinocchio
counterpart (Pinocchio knows no gear coupling): its rows compare with finite differences only. Friction is off on both sides; the armature
(rotor inertia) is given to Pinocchio.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np

import robot_dynamics as rd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _results import write_results  # noqa: E402
from bench_core import _frictionless, _pinocchio, best_time, example_urdfs  # noqa: E402

GOALS = {"pinocchio": 0.5, "fd_speedup": 5.0, "batch": 0.5}


def interleaved(fns: list, number: int, rounds: int = 5) -> list[float]:
    """Best seconds per call of each function, timed in alternating rounds (the same load on all)."""
    best = [np.inf] * len(fns)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            best[k] = min(best[k], best_time(fn, repeat=1, number=number))
    return best


def fd_rnea(model: rd.RobotModel, q, qd, qdd, h: float = 1e-6):
    """Central differences of rnea in q and qd: 4 nq one-state calls (the engine's fast path; a
    batch call of the 4 nq states costs more here, in building its arrays)."""
    n = model.nq
    E = np.eye(n) * h
    dq = np.empty((n, n))
    dqd = np.empty((n, n))
    for k in range(n):
        dq[:, k] = (rd.rnea(model, q + E[k], qd, qdd, friction=False) - rd.rnea(model, q - E[k], qd, qdd, friction=False)) / (2 * h)
        dqd[:, k] = (rd.rnea(model, q, qd + E[k], qdd, friction=False) - rd.rnea(model, q, qd - E[k], qdd, friction=False)) / (2 * h)
    return dq, dqd


def fd_aba(model: rd.RobotModel, q, qd, tau, h: float = 1e-6):
    """Central differences of aba in q, qd and tau: 6 nq one-state calls."""
    n = model.nq
    E = np.eye(n) * h
    out = np.empty((3, n, n))
    for k in range(n):
        out[0, :, k] = (rd.aba(model, q + E[k], qd, tau, friction=False) - rd.aba(model, q - E[k], qd, tau, friction=False)) / (2 * h)
        out[1, :, k] = (rd.aba(model, q, qd + E[k], tau, friction=False) - rd.aba(model, q, qd - E[k], tau, friction=False)) / (2 * h)
        out[2, :, k] = (rd.aba(model, q, qd, tau + E[k], friction=False) - rd.aba(model, q, qd, tau - E[k], friction=False)) / (2 * h)
    return tuple(out)


def one_state(pin, name: str, model: rd.RobotModel, rows: list, path: str | None = None) -> None:
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, model.nq))
    tau = rd.rnea(model, q, qd, qdd, friction=False)
    ours_r = lambda: rd.rnea_derivatives(model, q, qd, qdd, friction=False)  # noqa: E731
    ours_a = lambda: rd.aba_derivatives(model, q, qd, tau, friction=False)  # noqa: E731
    np.testing.assert_allclose(ours_r()[0], fd_rnea(model, q, qd, qdd)[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours_a()[0], fd_aba(model, q, qd, tau)[0], rtol=1e-5, atol=1e-5)
    fns = [ours_r, lambda: fd_rnea(model, q, qd, qdd), ours_a, lambda: fd_aba(model, q, qd, tau)]
    coupled = model.drivetrain is not None and model.drivetrain.coupled
    if pin is not None and not coupled:
        pm = _pinocchio(pin, model, path)
        pd = pm.createData()
        ref = pin.computeRNEADerivatives(pm, pd, q, qd, qdd)
        np.testing.assert_allclose(ours_r()[0], ref[0], rtol=1e-9, atol=1e-9)
        fns += [lambda: pin.computeRNEADerivatives(pm, pd, q, qd, qdd), lambda: pin.computeABADerivatives(pm, pd, q, qd, tau)]
    t = interleaved(fns, 5000)
    for algo, k in (("rnea_derivatives", 0), ("aba_derivatives", 2)):
        t_pin = t[4 + k // 2] if len(t) > 4 else float("nan")
        rows.append((name, algo, t[k], t_pin, t[k + 1]))


def batches(pin, name: str, model: rd.RobotModel, sizes: list[int], thread_counts: list[int], rows: list,
            path: str | None = None) -> None:
    if pin is None or (model.drivetrain is not None and model.drivetrain.coupled):
        return
    pm = _pinocchio(pin, model, path)
    pd = pm.createData()
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-1, 1, (3, max(sizes), model.nq))
    tau = rd.rnea(model, q, qd, qdd, friction=False)
    for threads in thread_counts:
        rd.set_num_threads(threads)
        for N in sizes:
            Q, QD, QDD, TAU = q[:N], qd[:N], qdd[:N], tau[:N]
            loop = min(N, 2000)  # Pinocchio's Python loop, per state (its time is linear in N)
            fns = [lambda: rd.rnea_derivatives(model, Q, QD, QDD, friction=False),
                   lambda: [pin.computeRNEADerivatives(pm, pd, Q[k], QD[k], QDD[k]) for k in range(loop)],
                   lambda: rd.aba_derivatives(model, Q, QD, TAU, friction=False),
                   lambda: [pin.computeABADerivatives(pm, pd, Q[k], QD[k], TAU[k]) for k in range(loop)]]
            t = interleaved(fns, 1, rounds=3)
            rows.append((name, "rnea_derivatives", threads, N, t[0] / N, t[1] / loop))
            rows.append((name, "aba_derivatives", threads, N, t[2] / N, t[3] / loop))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", nargs="+", default=["puma560", "iiwa14", "three_dof_geared"])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000], help="batch sizes (none: skip the batches)")
    parser.add_argument("--threads", type=int, nargs="+", default=None, help="thread counts (default: 1, 2 and all cores)")
    parser.add_argument("--urdf", nargs="*", default=None,
                        help="URDF files loaded by both libraries (default: example-robot-data's UR5 and Panda if installed)")
    parser.add_argument("--results", default=None, metavar="JSON", help="also write the tables as JSON (atomically)")
    args = parser.parse_args(argv)
    try:
        import pinocchio as pin
    except ImportError:
        pin = None
        print("Pinocchio is not installed (pip install pin): finite differences only")
    cores = os.cpu_count() or 1
    thread_counts = args.threads or sorted({1, min(2, cores), cores})
    rows: list = []
    batch_rows: list = []
    scratch = tempfile.TemporaryDirectory(prefix="bench_derivatives_")  # the Panda's file, removed with it
    urdfs = args.urdf if args.urdf is not None else example_urdfs(scratch.name)
    cases = [(name, rd.load_robot(name), None) for name in args.robots]
    cases += [(f"{m.name} (file)", m, path) for path in urdfs for m in [rd.load_urdf(path)]]
    for name, model, path in cases:
        model = _frictionless(model)
        one_state(pin, name, model, rows, path)
        if args.sizes:
            batches(pin, name, model, args.sizes, thread_counts, batch_rows, path)
    threads_before = rd.get_num_threads()
    rd.set_num_threads(threads_before)
    print(f"\nOne state from Python [us] (goals: ours / Pinocchio <= {GOALS['pinocchio']}, "
          f"finite differences / ours >= {GOALS['fd_speedup']}):")
    head = f"{'robot':<18} {'algorithm':<17} {'ours':>7} {'Pinocchio':>10} {'ratio':>6} {'fin. diff.':>10} {'speed-up':>8}"
    print(head + "\n" + "-" * len(head))
    one_table = []
    for name, algo, t_o, t_p, t_fd in rows:
        ratio = t_o / t_p if np.isfinite(t_p) else float("nan")
        pin_cell = f"{t_p * 1e6:>10.2f}" if np.isfinite(t_p) else f"{'(none)':>10}"
        ratio_cell = f"{ratio:>6.2f}" if np.isfinite(ratio) else f"{'':>6}"
        print(f"{name:<18} {algo:<17} {t_o * 1e6:>7.2f} {pin_cell} {ratio_cell} {t_fd * 1e6:>10.2f} {t_fd / t_o:>7.1f}x")
        one_table.append([name, algo, f"{t_o * 1e6:.2f}", f"{t_p * 1e6:.2f}" if np.isfinite(t_p) else "",
                          f"{ratio:.2f}" if np.isfinite(ratio) else "", f"{t_fd * 1e6:.2f}", f"{t_fd / t_o:.1f}"])
    tables = [{"title": f"Derivatives, one state from Python [us] (goal: ratio <= {GOALS['pinocchio']})",
               "columns": ["robot", "algorithm", "ours", "Pinocchio", "ratio", "finite differences", "speed-up"],
               "rows": one_table}]
    if batch_rows:
        print(f"\nBatches, per state [us] (goal: ratio <= {GOALS['batch']}; Pinocchio: a Python loop, it has no "
              "batched derivatives):")
        head = f"{'robot':<18} {'algorithm':<17} {'threads':>7} {'states':>7} {'ours':>7} {'Pinocchio':>10} {'ratio':>6}"
        print(head + "\n" + "-" * len(head))
        table = []
        for name, algo, threads, N, t_o, t_p in batch_rows:
            print(f"{name:<18} {algo:<17} {threads:>7} {N:>7} {t_o * 1e6:>7.2f} {t_p * 1e6:>10.2f} {t_o / t_p:>6.2f}")
            table.append([name, algo, str(threads), str(N), f"{t_o * 1e6:.2f}", f"{t_p * 1e6:.2f}", f"{t_o / t_p:.2f}"])
        tables.append({"title": f"Derivatives, batches per state [us] (goal: ratio <= {GOALS['batch']})",
                       "columns": ["robot", "algorithm", "threads", "states", "ours", "Pinocchio (loop)", "ratio"],
                       "rows": table})
    if args.results:
        write_results(args.results, "bench_derivatives.py", None, pinocchio=pin.__version__ if pin else "none",
                      tables=tables)
    return 0


if __name__ == "__main__":
    sys.exit(main())
