"""The compiled core against Pinocchio, side by side in one process, on the same URDF.

    python bench/bench_core.py [--robots puma560 iiwa14] [--urdf FILE ...] [--batch 10000]
                               [--threads 2] [--skip-cold] [--skip-memory]
                               [--results bench/results/bench_core.json]

Prints, per robot, costs per call or per sample and the ratio ours / Pinocchio's (below 1:
robot_dynamics is cheaper), with the goals of the compiled-core work beside them:

* one state from Python: rnea, crba, aba (goal: ratio <= 1.0); the geared three_dof_geared
  against Pinocchio on its virtual chain (Pinocchio has no gear coupling; goal <= 1.5);
* a batch of N states per sample: rnea and aba against Pinocchio's ``*InParallel`` with the
  same number of threads (goals 0.25 and 0.5); crba against a Python loop of Pinocchio calls,
  since Pinocchio has no ``crbaInParallel``; and, for rigid robots, the per-robot generated
  code (``robot_dynamics.codegen.inverse_dynamics_function``) on the same rnea batch;
* the real-time factor of ``simulate()`` (1 kHz computed torque, RK4) and of the ROS
  simulator node's plant at its shipped defaults (200 Hz, 5 RK4 substeps) (goal >= 20);
* cold start in fresh processes: ``import robot_dynamics``, the first rnea with an empty
  compilation cache, the first rnea with a warm one;
* peak memory of an rnea batch of 10^6 states against the size of its output.

Friction is off on both sides for the comparisons; the armature (rotor inertia) is given to
Pinocchio. A URDF given with --urdf (or the UR5 of example-robot-data when that package is
installed) is loaded from its file by both libraries.
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable

import numpy as np

import robot_dynamics as rd

GOALS = {"one": 1.0, "geared": 1.5, "rnea_batch": 0.25, "aba_batch": 0.5, "crba_batch": 0.5, "rtf": 20.0}


def best_time(fn: Callable[[], object], repeat: int = 7, number: int = 1) -> float:
    """Best of ``repeat`` timings of ``number`` calls, seconds per call."""
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def _frictionless(model: rd.RobotModel) -> rd.RobotModel:
    z = np.zeros(model.nq)
    return model.replace(viscous=z, coulomb=z, static_friction=None, stribeck=None)


def _pinocchio(pin, model: rd.RobotModel, path: str | None):
    pm = pin.buildModelFromUrdf(path) if path else pin.buildModelFromXML(model.description)
    iv = [pm.joints[pm.getJointId(n)].idx_v for n in model.joint_names]
    if iv != list(range(model.nq)) or pm.nq != model.nq:
        raise SystemExit(f"{model.name}: Pinocchio orders the joints differently; compare by name in the tests instead")
    pm.armature[:] = model.rotor_inertia
    return pm


def _ur5() -> str | None:
    """The UR5 of example-robot-data (a URDF file loaded by both libraries), when installed."""
    root = sysconfig.get_paths()["purelib"]
    hits = glob.glob(os.path.join(root, "cmeel.prefix", "share", "example-robot-data", "robots", "ur_description", "urdf", "ur5_robot.urdf"))
    return hits[0] if hits else None


def compare(pin, name: str, model: rd.RobotModel, path: str | None, N: int, threads: int, rows: list, batch_rows: list) -> None:
    model = _frictionless(model)
    pm = _pinocchio(pin, model, path)
    pd = pm.createData()
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, max(N, 1), model.nq))
    tau = rd.rnea(model, q, qd, qdd)
    q1, qd1, qdd1, tau1 = q[0].copy(), qd[0].copy(), qdd[0].copy(), tau[0].copy()
    one = {
        "rnea": (lambda: rd.rnea(model, q1, qd1, qdd1), lambda: pin.rnea(pm, pd, q1, qd1, qdd1)),
        "crba": (lambda: rd.crba(model, q1), lambda: pin.crba(pm, pd, q1)),
        "aba": (lambda: rd.aba(model, q1, qd1, tau1), lambda: pin.aba(pm, pd, q1, qd1, tau1)),
    }
    if model.drivetrain is None or not model.drivetrain.coupled:  # the same dynamics on both sides
        np.testing.assert_allclose(rd.rnea(model, q1, qd1, qdd1), pin.rnea(pm, pd, q1, qd1, qdd1), rtol=1e-9, atol=1e-9)
    for algo, (ours, theirs) in one.items():
        ours(), theirs()
        # interleaved rounds: both sides see the same machine load
        t_o, t_p = np.inf, np.inf
        for _ in range(5):
            t_o = min(t_o, best_time(ours, repeat=1, number=20000))
            t_p = min(t_p, best_time(theirs, repeat=1, number=20000))
        rows.append((name, algo, t_o, t_p))
    if N <= 0:
        return
    pool = pin.ModelPool(pm, threads)
    qT, qdT, qddT, tauT = (np.asfortranarray(a.T) for a in (q, qd, qdd, tau))
    out = np.empty((model.nq, N), order="F")
    lq, lqd = list(q), list(qd)
    batch = {
        "rnea": (lambda: rd.rnea(model, q, qd, qdd), lambda: pin.rneaInParallel(threads, pool, qT, qdT, qddT, out), "rneaInParallel"),
        "aba": (lambda: rd.aba(model, q, qd, tau), lambda: pin.abaInParallel(threads, pool, qT, qdT, tauT, out), "abaInParallel"),
        "crba": (lambda: rd.crba(model, q), lambda: [pin.crba(pm, pd, a) for a in lq], "Python loop"),
    }
    del lqd
    if model.drivetrain is None or not model.drivetrain.coupled:
        # the per-robot generated code (Khalil 7.5), the specialised path for large rigid batches
        from robot_dynamics.codegen import inverse_dynamics_function

        gen = inverse_dynamics_function(model, compiled=True)
        if gen.path == "compiled":
            batch["rnea, generated"] = (lambda: gen(q, qd, qdd), batch["rnea"][1], "rneaInParallel")
    for algo, (ours, theirs, how) in batch.items():
        ours(), theirs()
        t_o, t_p = np.inf, np.inf
        for _ in range(3):
            t_o = min(t_o, best_time(ours, repeat=1))
            t_p = min(t_p, best_time(theirs, repeat=1))
        batch_rows.append((name, algo, t_o / N, t_p / N, how))


def real_time_factors(seconds: float) -> list[tuple[str, str, float]]:
    """Simulated seconds per wall-clock second: simulate() at 1 kHz RK4 and the ROS plant."""
    from robot_dynamics.control import ComputedTorque
    from robot_dynamics.ros.motion import SimulatedPlant
    from robot_dynamics.simulation import simulate
    from robot_dynamics.trajectory import plan

    out = []
    for name in ("puma560", "three_dof_geared"):
        model = rd.load_robot(name)
        q0 = np.zeros(model.nq)
        goal = np.clip(q0 + 0.5, model.lower, model.upper)
        traj = plan("quintic", q0, goal, duration=seconds)
        ctrl = ComputedTorque(model, omega=20.0)
        simulate(model, ctrl, traj, 0.05, progress=False)  # warm
        t0 = time.perf_counter()
        simulate(model, ctrl, traj, seconds, control_rate=1000.0, integrator="rk4", progress=False)
        out.append((name, "simulate() 1 kHz RK4, computed torque", seconds / (time.perf_counter() - t0)))
        plant = SimulatedPlant(model)
        plant.on_command(_Msg(rd.gravity_torques(model, plant.q)), 0.0)
        plant.step(0.005, 0.0, 5)
        steps = int(seconds * 200)
        t0 = time.perf_counter()
        for k in range(steps):
            plant.step(0.005, 0.0, 5)
        out.append((name, "ROS simulator plant, 200 Hz x 5 RK4", seconds / (time.perf_counter() - t0)))
    return out


class _Msg:
    """A Float64MultiArray stand-in (data only) for the plant's command."""

    def __init__(self, data: np.ndarray):
        self.data = list(map(float, data))

        class _Layout:
            dim: list = []

        self.layout = _Layout()


_COLD = r"""
import sys, time
t0 = time.perf_counter()
import robot_dynamics as rd
t1 = time.perf_counter()
import numpy as np
m = rd.load_robot("puma560")
q = np.zeros(m.nq)
t2 = time.perf_counter()
rd.rnea(m, q, q, q)
t3 = time.perf_counter()
rd.rnea(m, q, q, q)
t4 = time.perf_counter()
print(t1 - t0, t3 - t2, t4 - t3)
"""


def cold_start() -> list[tuple[str, float]]:
    """Fresh processes: import, then the first rnea (one state) with an empty and a warm cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)  # taken before the in-tree cache
        runs = []
        for _ in range(2):
            res = subprocess.run([sys.executable, "-c", _COLD], env=env, capture_output=True, text=True, check=True)
            runs.append([float(x) for x in res.stdout.split()])
    (imp, first_empty, second_empty), (imp2, first_warm, _) = runs
    return [
        ("import robot_dynamics", min(imp, imp2)),
        ("first rnea, empty cache (compiles the batch and one-state kernels)", first_empty + second_empty),
        ("first two rnea calls, warm cache", first_warm),
    ]


_MEMORY = r"""
import resource, sys
import numpy as np
import robot_dynamics as rd
m = rd.load_robot("puma560")
N = int(sys.argv[1])
rng = np.random.default_rng(0)
q = rng.uniform(-1, 1, (N, m.nq)); qd = rng.uniform(-1, 1, (N, m.nq)); qdd = rng.uniform(-1, 1, (N, m.nq))
rd.rnea(m, q[:10], qd[:10], qdd[:10])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tau = rd.rnea(m, q, qd, qdd)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(base * 1024, peak * 1024, tau.nbytes)
"""


def memory(n: int) -> tuple[float, float, float]:
    res = subprocess.run([sys.executable, "-c", _MEMORY, str(n)], capture_output=True, text=True, check=True)
    base, peak, out = (float(x) for x in res.stdout.split())
    return base, peak, out


def write_results(args: argparse.Namespace, pin_version: str, rows: list, batch_rows: list, rtfs: list) -> None:
    """The printed tables as JSON (atomically), for the documentation's performance page."""
    import json
    import platform

    tables = [
        {"title": "One state from Python", "columns": ["robot", "algorithm", "ours [us]", "Pinocchio [us]", "ratio"],
         "rows": [[name, algo, f"{a * 1e6:.2f}", f"{b * 1e6:.2f}", f"{a / b:.2f}"] for name, algo, a, b in rows]},
        {"title": f"Batch of {args.batch} states, per sample ({args.threads} threads)",
         "columns": ["robot", "algorithm", "ours [us]", "Pinocchio [us]", "ratio", "against"],
         "rows": [[name, algo, f"{a * 1e6:.3f}", f"{b * 1e6:.3f}", f"{a / b:.2f}", how]
                  for name, algo, a, b, how in batch_rows]},
        {"title": f"Real-time factor, {args.sim_seconds:g} s simulated", "columns": ["robot", "what", "real-time factor"],
         "rows": [[name, what, f"{rtf:.1f}x"] for name, what, rtf in rtfs]},
    ]
    data = {
        "command": "python bench/bench_core.py " + " ".join(sys.argv[1:]),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
        "pinocchio": pin_version,
        "threads": args.threads,
        "tables": tables,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
    tmp = f"{args.results}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(tmp, args.results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", nargs="+", default=["puma560", "iiwa14"])
    parser.add_argument("--urdf", nargs="*", default=None, help="URDF files loaded by both libraries (default: example-robot-data's UR5 if installed)")
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--sim-seconds", type=float, default=2.0)
    parser.add_argument("--skip-cold", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--results", default=None, metavar="JSON",
                        help="also write the tables to this file (the documentation's performance page reads "
                        "bench/results/bench_core.json)")
    args = parser.parse_args(argv)
    try:
        import pinocchio as pin
    except ImportError:
        print("Pinocchio is not installed (pip install pin): nothing to compare against", file=sys.stderr)
        return 1
    from numba import set_num_threads

    set_num_threads(args.threads)
    rows: list = []
    batch_rows: list = []
    for name in args.robots:
        compare(pin, name, rd.load_robot(name), None, args.batch, args.threads, rows, batch_rows)
    urdfs = args.urdf if args.urdf is not None else [p for p in [_ur5()] if p]
    for path in urdfs:
        model = rd.load_urdf(path)
        compare(pin, f"{model.name} (file)", model, path, args.batch, args.threads, rows, batch_rows)
    # the geared robot: ours with its coupled gear train, Pinocchio on the virtual chain
    geared = rd.load_robot("three_dof_geared")
    geared_rows: list = []
    compare(pin, "three_dof_geared", geared, None, 0, args.threads, geared_rows, [])

    print(f"pinocchio {pin.__version__}, numba threads {args.threads}; costs in microseconds")
    print(f"\none state from Python (goal: ratio <= {GOALS['one']}; geared <= {GOALS['geared']})")
    head = f"{'robot':22} {'algo':5} {'ours':>8} {'pinocchio':>10} {'ratio':>7}"
    print(head)
    print("-" * len(head))
    for name, algo, a, b in rows + geared_rows:
        print(f"{name:22} {algo:5} {a * 1e6:8.2f} {b * 1e6:10.2f} {a / b:7.2f}")
    if batch_rows:
        print(f"\nbatch of {args.batch} states, per sample (goals: rnea <= {GOALS['rnea_batch']}, aba and crba <= {GOALS['aba_batch']})")
        head = f"{'robot':22} {'algo':15} {'ours':>8} {'pinocchio':>10} {'ratio':>7}  against"
        print(head)
        print("-" * len(head))
        for name, algo, a, b, how in batch_rows:
            print(f"{name:22} {algo:15} {a * 1e6:8.3f} {b * 1e6:10.3f} {a / b:7.2f}  {how}" + (f" ({args.threads} threads)" if "Parallel" in how else ""))
    print(f"\nreal-time factor (goal >= {GOALS['rtf']}), {args.sim_seconds} s simulated")
    rtfs = real_time_factors(args.sim_seconds)
    for name, what, rtf in rtfs:
        print(f"{name:18} {what:40} {rtf:8.1f}x")
    if args.results:
        write_results(args, pin.__version__, rows + geared_rows, batch_rows, rtfs)
    if not args.skip_cold:
        print("\ncold start, fresh processes [s]")
        for what, s in cold_start():
            print(f"{what:70} {s:8.3f}")
    if not args.skip_memory:
        n = 1_000_000
        base, peak, out = memory(n)
        print(f"\nrnea batch of {n} states: output {out / 2**20:.1f} MiB, peak RSS grew {(peak - base) / 2**20:.1f} MiB "
              f"({(peak - base) / out:.2f}x the output)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
