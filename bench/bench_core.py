"""The engine against Pinocchio, side by side in one process, on the same URDF.

    python bench/bench_core.py [--robots puma560 iiwa14] [--urdf FILE ...] [--sizes 1000 10000 100000]
                               [--threads 1 2 N] [--skip-cold] [--skip-memory] [--generated]

Prints, per robot, costs per call or per sample and the ratio ours / Pinocchio's (below 1:
robot_dynamics is cheaper), with the goals beside them:

* the cold table, fresh processes: each algorithm's first answer (from its call, and from the
  process start), the README's main job ``robot-dynamics simulate``, and the ROS dynamics
  node's first reply when rclpy and the package's interfaces are importable; Pinocchio's
  import and first answer beside them;
* one state from Python: rnea, crba, aba (goal: ratio <= 0.8); the geared three_dof_geared
  against Pinocchio on its virtual chain (Pinocchio has no gear coupling; goal <= 1.2);
* batches of several sizes per sample at 1, 2 and all threads: rnea and aba against
  Pinocchio's ``*InParallel`` with the same number of threads (goals 0.25 and 0.4); crba
  against a Python loop of Pinocchio calls (Pinocchio has no ``crbaInParallel``); with
  --generated, the per-robot generated code (``robot_dynamics.codegen``, numba) on rnea;
* the real-time factor of ``simulate()`` (1 kHz computed torque, RK4) and of the ROS
  simulator node's plant at its shipped defaults (200 Hz, 5 RK4 substeps) (goal >= 20);
* peak memory of an rnea batch of 10^6 states against the size of its output.

Friction is off on both sides for the comparisons; the armature (rotor inertia) is given to
Pinocchio. A URDF given with --urdf (by default the UR5 and the Panda of example-robot-data,
installed with Pinocchio's wheel; the Panda's finger joints fixed, since the second mimics the
first and Pinocchio's aba takes no mimic joint) is loaded from its file by both libraries.
"""

from __future__ import annotations

import argparse
import glob
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable

import numpy as np

import robot_dynamics as rd
from _results import write_results

GOALS = {"one": 0.8, "geared": 1.2, "rnea_batch": 0.25, "aba_batch": 0.4, "crba_batch": 0.5, "rtf": 20.0}


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


def _example_robot(relative: str) -> str | None:
    """A file of example-robot-data's robots (installed with Pinocchio's wheel), or None."""
    root = sysconfig.get_paths()["purelib"]
    hits = glob.glob(os.path.join(root, "cmeel.prefix", "share", "example-robot-data", "robots", relative))
    return hits[0] if hits else None


def _ur5() -> str | None:
    """The UR5 of example-robot-data (a URDF file loaded by both libraries), when installed."""
    return _example_robot("ur_description/urdf/ur5_robot.urdf")


def _panda(folder: str) -> str | None:
    """example-robot-data's Panda with its hand's two finger joints fixed, written into folder:
    the second finger mimics the first, and Pinocchio's aba and derivatives take no mimic joint
    (its rnea and crba agree with ours on the mimic model to 1e-14). None when not installed."""
    path = _example_robot("panda_description/urdf/panda.urdf")
    if path is None:
        return None
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for joint in ("panda_finger_joint1", "panda_finger_joint2"):
        text = text.replace(f'<joint name="{joint}" type="prismatic">', f'<joint name="{joint}" type="fixed">')
    out = os.path.join(folder, "panda_fixed_fingers.urdf")
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return out


def example_urdfs(folder: str) -> list[str]:
    """The URDF files compared by default: example-robot-data's UR5 and Panda, when installed."""
    return [p for p in (_ur5(), _panda(folder)) if p]


def compare(pin, name: str, model: rd.RobotModel, path: str | None, sizes: list[int], thread_counts: list[int],
            rows: list, batch_rows: list, generated: bool = False) -> None:
    model = _frictionless(model)
    pm = _pinocchio(pin, model, path)
    pd = pm.createData()
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, max(sizes or [1]), model.nq))
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
    if not sizes:
        return
    lq = list(q[: min(sizes)])
    for threads in thread_counts:
        rd.set_num_threads(threads)
        pool = pin.ModelPool(pm, threads)
        for N in sizes:
            Q, QD, QDD, TAU = q[:N], qd[:N], qdd[:N], tau[:N]
            qT, qdT, qddT, tauT = (np.asfortranarray(a.T) for a in (Q, QD, QDD, TAU))
            out = np.empty((model.nq, N), order="F")
            batch = {
                "rnea": (lambda: rd.rnea(model, Q, QD, QDD), lambda: pin.rneaInParallel(threads, pool, qT, qdT, qddT, out), "rneaInParallel"),
                "aba": (lambda: rd.aba(model, Q, QD, TAU), lambda: pin.abaInParallel(threads, pool, qT, qdT, tauT, out), "abaInParallel"),
            }
            if N == min(sizes):
                batch["crba"] = (lambda: rd.crba(model, Q[: len(lq)]), lambda: [pin.crba(pm, pd, a) for a in lq], "Python loop")
            if generated and (model.drivetrain is None or not model.drivetrain.coupled):
                from robot_dynamics.codegen import inverse_dynamics_function

                gen = inverse_dynamics_function(model, compiled=True)
                if gen.path == "compiled":
                    import numba

                    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
                    batch["rnea, generated"] = (lambda: gen(Q, QD, QDD), batch["rnea"][1], "rneaInParallel")
            for algo, (ours, theirs, how) in batch.items():
                ours(), theirs()
                n = len(lq) if algo == "crba" else N
                number = max(1, 20000 // n)
                t_o, t_p = np.inf, np.inf
                for _ in range(3):
                    t_o = min(t_o, best_time(ours, repeat=1, number=number))
                    t_p = min(t_p, best_time(theirs, repeat=1, number=number))
                batch_rows.append((name, algo, threads, n, t_o / n, t_p / n, how))


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
import numpy as np
import robot_dynamics as rd
t_import = time.perf_counter() - t0
m = rd.load_robot("puma560")
rng = np.random.default_rng(0)
q, qd, qdd = rng.uniform(-1, 1, (3, m.nq))
Q, QD, QDD = rng.uniform(-1, 1, (3, 1000, m.nq))
calls = {
    "rnea": lambda: rd.rnea(m, q, qd, qdd),
    "crba": lambda: rd.crba(m, q),
    "aba": lambda: rd.aba(m, q, qd, qdd),
    "rnea, batch of 1000": lambda: rd.rnea(m, Q, QD, QDD),
    "aba, batch of 1000": lambda: rd.aba(m, Q, QD, QDD),
    "jacobian": lambda: rd.jacobian(m, q),
    "energy": lambda: rd.mechanical_energy(m, q, qd),
}
name = sys.argv[1]
t1 = time.perf_counter()
calls[name]()
t2 = time.perf_counter()
print(t_import, t2 - t1, t2 - t0)
"""

_COLD_PIN = r"""
import time
t0 = time.perf_counter()
import numpy as np
import pinocchio as pin
import robot_dynamics as rd
urdf = rd.load_robot("puma560").description
t1 = time.perf_counter()
pm = pin.buildModelFromXML(urdf)
pd = pm.createData()
q = np.zeros(pm.nq)
pin.rnea(pm, pd, q, q, q)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""

def cold_start() -> list[tuple[str, float, float]]:
    """Fresh processes: each algorithm's first answer (from its call, from the process start)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA")}
    out = []
    algos = ["rnea", "crba", "aba", "rnea, batch of 1000", "aba, batch of 1000", "jacobian", "energy"]
    imports = []
    for name in algos:
        t0 = time.perf_counter()
        res = subprocess.run([sys.executable, "-c", _COLD, name], env=env, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        t_import, t_call, _ = (float(x) for x in res.stdout.split())
        imports.append(t_import)
        out.append((f"first {name}", t_call, wall))
    out.insert(0, ("import robot_dynamics", min(imports), float("nan")))
    try:
        res = subprocess.run([sys.executable, "-c", _COLD_PIN], env=env, capture_output=True, text=True, check=True)
        t_import, t_first = (float(x) for x in res.stdout.split())
        out.append(("Pinocchio: import (with robot_dynamics), then model + first rnea", t_first, t_import + t_first))
    except subprocess.CalledProcessError:
        pass
    # the command beside this interpreter (a venv), else on PATH (a colcon install puts it in lib/)
    exe = os.path.join(os.path.dirname(sys.executable), "robot-dynamics")
    exe = exe if os.path.exists(exe) else shutil.which("robot-dynamics")
    if exe is None:
        out.append(("the main job: skipped (no robot-dynamics command beside python or on PATH)", float("nan"), float("nan")))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            subprocess.run([exe, "simulate"], cwd=tmp, env=env, capture_output=True, text=True, check=True)
            out.append(("the main job: robot-dynamics simulate", float("nan"), time.perf_counter() - t0))
    if importlib.util.find_spec("rclpy") is None or importlib.util.find_spec("robot_dynamics_interfaces") is None:
        out.append(("ROS dynamics node, first reply: skipped (rclpy or the interfaces not importable)", float("nan"), float("nan")))
    else:
        probe = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "robot_dynamics_bringup", "bench",
                             "first_reply.py")  # a ROS client: it lives in a ROS package
        res = subprocess.run([sys.executable, probe], env=env, capture_output=True, text=True, timeout=120)
        first = float(res.stdout.split()[-1]) if res.stdout.split() else float("nan")
        out.append(("ROS dynamics node: first gravity_compensation after its start", float("nan"), first))
    return out


# The peak resident memory of this process [bytes]: Linux's VmHWM, the high-water mark of the
# process's own memory. getrusage's ru_maxrss is not: Linux carries it across fork and exec, so
# a child of a bench that already holds 10^6-state batches starts at the bench's size and seems
# not to grow at all. ru_maxrss (kB) where /proc is absent.
_MEMORY = r"""
import resource, sys
import numpy as np
import robot_dynamics as rd

def peak_rss():
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) * 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

m = rd.load_robot("puma560")
N = int(sys.argv[1])
rng = np.random.default_rng(0)
q = rng.uniform(-1, 1, (N, m.nq)); qd = rng.uniform(-1, 1, (N, m.nq)); qdd = rng.uniform(-1, 1, (N, m.nq))
rd.rnea(m, q[:10], qd[:10], qdd[:10])
base = peak_rss()
tau = rd.rnea(m, q, qd, qdd)
peak = peak_rss()
print(base, peak, tau.nbytes)
"""


def memory(n: int) -> tuple[float, float, float]:
    res = subprocess.run([sys.executable, "-c", _MEMORY, str(n)], capture_output=True, text=True, check=True)
    base, peak, out = (float(x) for x in res.stdout.split())
    return base, peak, out


def _one_state_table(rows: list) -> dict:
    """Prints the one-state comparison and returns its table."""
    print(f"\none state from Python (goal: ratio <= {GOALS['one']}; geared <= {GOALS['geared']})")
    head = f"{'robot':22} {'algo':5} {'ours':>8} {'pinocchio':>10} {'ratio':>7}"
    print(head)
    print("-" * len(head))
    for name, algo, a, b in rows:
        print(f"{name:22} {algo:5} {a * 1e6:8.2f} {b * 1e6:10.2f} {a / b:7.2f}")
    return {"title": f"One state from Python (goal: ratio <= {GOALS['one']}; geared <= {GOALS['geared']})",
            "columns": ["robot", "algorithm", "ours [us]", "Pinocchio [us]", "ratio"],
            "rows": [[name, algo, f"{a * 1e6:.2f}", f"{b * 1e6:.2f}", f"{a / b:.2f}"] for name, algo, a, b in rows]}


def _batch_table(batch_rows: list) -> dict:
    """Prints the batch comparison and returns its table."""
    print(f"\nbatches, per sample (goals: rnea <= {GOALS['rnea_batch']}, aba <= {GOALS['aba_batch']} of *InParallel at the same threads)")
    head = f"{'robot':22} {'algo':15} {'thr':>3} {'states':>7} {'ours':>8} {'pinocchio':>10} {'ratio':>7}  against"
    print(head)
    print("-" * len(head))
    for name, algo, threads, n, a, b, how in batch_rows:
        print(f"{name:22} {algo:15} {threads:3d} {n:7d} {a * 1e6:8.3f} {b * 1e6:10.3f} {a / b:7.2f}  {how}")
    return {"title": f"Batches, per sample (goals: rnea <= {GOALS['rnea_batch']}, aba <= {GOALS['aba_batch']} "
                     "of *InParallel at the same threads)",
            "columns": ["robot", "algorithm", "threads", "states", "ours [us]", "Pinocchio [us]", "ratio", "against"],
            "rows": [[name, algo, str(threads), str(n), f"{a * 1e6:.3f}", f"{b * 1e6:.3f}", f"{a / b:.2f}", how]
                     for name, algo, threads, n, a, b, how in batch_rows]}


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", nargs="+", default=["puma560", "iiwa14"])
    parser.add_argument("--urdf", nargs="*", default=None, help="URDF files loaded by both libraries (default: example-robot-data's UR5 and Panda if installed)")
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000, 100_000], help="batch sizes (none: skip the batches)")
    parser.add_argument("--threads", type=int, nargs="+", default=None, help="thread counts of the batches (default: 1, 2 and all cores)")
    parser.add_argument("--sim-seconds", type=float, default=2.0)
    parser.add_argument("--skip-cold", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--generated", action="store_true", help="also the generated customised model (numba; compiles on first use)")
    parser.add_argument("--results", default=None, metavar="JSON",
                        help="also write the tables to this file (the documentation's performance page reads "
                        "bench/results/bench_core.json)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    try:
        import pinocchio as pin
    except ImportError:
        print("Pinocchio is not installed (pip install pin): nothing to compare against", file=sys.stderr)
        return 1
    cores = os.cpu_count() or 1
    thread_counts = sorted(set(args.threads or [1, 2, cores]))
    if not args.skip_cold:
        cold = cold_start()  # first: the machine is quietest before the warm runs
    rows: list = []
    batch_rows: list = []
    for name in args.robots:
        compare(pin, name, rd.load_robot(name), None, args.sizes, thread_counts, rows, batch_rows, args.generated)
    scratch = tempfile.TemporaryDirectory(prefix="bench_core_")  # the Panda's file, removed with it
    urdfs = args.urdf if args.urdf is not None else example_urdfs(scratch.name)
    for path in urdfs:
        model = rd.load_urdf(path)
        compare(pin, f"{model.name} (file)", model, path, args.sizes, thread_counts, rows, batch_rows, args.generated)
    # the geared robot: ours with its coupled gear train, Pinocchio on the virtual chain
    geared = rd.load_robot("three_dof_geared")
    geared_rows: list = []
    compare(pin, "three_dof_geared", geared, None, [], thread_counts, geared_rows, [])

    tables: list[dict] = []
    print(f"pinocchio {pin.__version__}, engine with OpenMP: {bool(rd.engine.engine().OPENMP)}, {cores} cores; costs in microseconds")
    if not args.skip_cold:
        print("\ncold, fresh processes [s] (from the call / from the process start)")
        for what, call, wall in cold:
            print(f"{what:70} {call:8.3f} {wall:8.3f}")
        tables.append({"title": "Cold: fresh processes, empty caches [s]",
                       "columns": ["first answer of", "from the call", "from the process start"],
                       "rows": [[what, f"{call:.3f}", f"{wall:.3f}"] for what, call, wall in cold]})
    tables.append(_one_state_table(rows + geared_rows))
    if batch_rows:
        tables.append(_batch_table(batch_rows))
    print(f"\nreal-time factor (goal >= {GOALS['rtf']}), {args.sim_seconds} s simulated")
    rtfs = real_time_factors(args.sim_seconds)
    for name, what, rtf in rtfs:
        print(f"{name:18} {what:40} {rtf:8.1f}x")
    tables.append({"title": f"Real-time factor (goal >= {GOALS['rtf']}), {args.sim_seconds:g} s simulated",
                   "columns": ["robot", "what", "real-time factor"],
                   "rows": [[name, what, f"{rtf:.1f}x"] for name, what, rtf in rtfs]})
    if not args.skip_memory:
        n = 1_000_000
        base, peak, out = memory(n)
        print(f"\nrnea batch of {n} states: output {out / 2**20:.1f} MiB, peak RSS grew {(peak - base) / 2**20:.1f} MiB "
              f"({(peak - base) / out:.2f}x the output)")
        tables.append({"title": f"Memory: an rnea batch of {n} states", "columns": ["output [MiB]", "peak RSS growth [MiB]", "ratio"],
                       "rows": [[f"{out / 2**20:.1f}", f"{(peak - base) / 2**20:.1f}", f"{(peak - base) / out:.2f}"]]})
    if args.results:
        write_results(args.results, "bench_core.py", None, pinocchio=pin.__version__, tables=tables)
    return 0


if __name__ == "__main__":
    sys.exit(main())
