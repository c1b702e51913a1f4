"""Real-time factors of the closed-loop simulation: the Python tick beside the engine's compiled loop.

    python bench/bench_simulation.py [--repeat 5] [--results bench/results/bench_simulation.json]

Each case runs warm (a first run discarded), best of ``--repeat``, whole (build the
Simulation, run it, make its result with the metrics), two ways in the same process:

* the Python tick (``Integration(compiled=False)``): the loop as it was, one controller.update,
  four aba and the bookkeeping per tick in Python;
* the compiled loop (the default): blocks of ticks inside the engine, same results to 1e-12.

Cases: the README main job (``robot-dynamics simulate``: PUMA 560, computed torque with the
friction feed-forward, quintic move of 1 s + 0.5 s, 1 kHz, RK4) and three_dof_geared (its
structure matrix between the controller and the plant). Beside them, as a peer run in the same
process: the same RK4 loop (one rnea, four aba per tick) written in Python over Pinocchio's
``pin.rnea``/``pin.aba``, when Pinocchio is installed: what the same loop costs from Python
with the reference library's one-state calls; and one ``rd.aba`` / ``pin.aba`` call, which
tells how loaded the machine is.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import robot_dynamics as rd
from robot_dynamics.control import build_controller
from robot_dynamics.simulation import Integration, Logging, Simulation, SimulationOptions
from robot_dynamics.trajectory import plan
from _results import write_results

#: The compiled loop's real-time factor asked of both cases (1 kHz RK4, computed torque, logged).
GOAL = 300.0


def _case(name: str):
    m = rd.load_robot(name)
    lo = np.where(np.isfinite(m.lower), m.lower, -np.inf)
    hi = np.where(np.isfinite(m.upper), m.upper, np.inf)
    start = np.clip(np.zeros(m.nq), lo, hi)
    goal = np.where(start + 0.5 <= hi, start + 0.5, np.maximum(start - 0.5, lo))
    ctrl = build_controller(m, "computed_torque", omega=20.0, xi=1.0, friction_velocity="desired")
    return m, ctrl, plan("quintic", start, goal, duration=1.0), start


def _best(f, repeat: int) -> float:
    f()  # warm
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def simulation_factor(name: str, compiled: bool, repeat: int, duration: float = 1.5) -> float:
    m, ctrl, traj, start = _case(name)
    opt = SimulationOptions(integration=Integration(rate=1000.0, compiled=compiled), logging=Logging(progress=False))

    def run() -> None:
        sim = Simulation(m, ctrl, traj, duration, opt)
        sim.reset(start)
        sim.run()

    return duration / _best(run, repeat)


def pinocchio_factor(name: str, repeat: int, duration: float = 1.5) -> float | None:
    """The same tick in Python over Pinocchio: computed torque by pin.rnea, RK4 by pin.aba."""
    try:
        import pinocchio as pin
    except ImportError:
        return None
    m, ctrl, traj, start = _case(name)
    if m.drivetrain is not None:
        return None  # Pinocchio has no structure matrix between motors and joints
    pm = pin.buildModelFromXML(m.description)
    pd = pm.createData()
    K = int(round(duration * 1000)) + 1
    Q, QD, QDD = (np.asarray(a, float) for a in traj.sample(np.arange(K) * 1e-3))
    kp, kd, h = ctrl.kp, ctrl.kd, 1e-3

    def run() -> None:
        q, qd = start.copy(), np.zeros(m.nq)
        for k in range(K):
            w = QDD[k] + kd * (QD[k] - qd) + kp * (Q[k] - q)
            tau = np.clip(pin.rnea(pm, pd, q, qd, w), -ctrl.effort_limit, ctrl.effort_limit)
            a1 = pin.aba(pm, pd, q, qd, tau)
            a2 = pin.aba(pm, pd, q + 0.5 * h * qd, qd + 0.5 * h * a1, tau)
            v2 = qd + 0.5 * h * a1
            a3 = pin.aba(pm, pd, q + 0.5 * h * v2, qd + 0.5 * h * a2, tau)
            v3 = qd + 0.5 * h * a2
            a4 = pin.aba(pm, pd, q + h * v3, qd + h * a3, tau)
            v4 = qd + h * a3
            q = q + h / 6.0 * (qd + 2 * v2 + 2 * v3 + v4)
            qd = qd + h / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4)

    return duration / _best(run, repeat)


def one_aba(name: str) -> tuple[float, float | None]:
    """Microseconds of one aba call from Python: ours, Pinocchio's (best of 5 x 2,000)."""
    m = rd.load_robot(name)
    q, qd, tau = np.full(m.nq, 0.1), np.full(m.nq, 0.2), np.full(m.nq, 0.3)
    ours = _best(lambda: [rd.aba(m, q, qd, tau) for _ in range(2000)], 5) / 2000 * 1e6
    try:
        import pinocchio as pin
    except ImportError:
        return ours, None
    pm = pin.buildModelFromXML(m.description)
    pd = pm.createData()
    return ours, _best(lambda: [pin.aba(pm, pd, q, qd, tau) for _ in range(2000)], 5) / 2000 * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--results", default=None, metavar="JSON", help="also write the table as JSON (atomically)")
    args = parser.parse_args(argv)
    rows = []
    print(f"{'robot':18} {'Python tick':>12} {'compiled':>10} {'goal':>6} {'speed-up':>9} {'pin loop':>9} {'aba us':>7} "
          f"{'pin.aba us':>10}")
    for name in ("puma560", "three_dof_geared"):
        py = simulation_factor(name, False, args.repeat)
        fast = simulation_factor(name, True, args.repeat)
        peer = pinocchio_factor(name, args.repeat)
        ours_us, pin_us = one_aba(name)
        rows.append({"robot": name, "python_tick": py, "compiled": fast, "goal": GOAL, "met": fast >= GOAL,
                     "pinocchio_loop": peer, "aba_us": ours_us, "pin_aba_us": pin_us})
        fmt = lambda v, w, p: f"{v:{w}.{p}f}" if v is not None else f"{'-':>{w}}"  # noqa: E731
        print(f"{name:18} {py:11.1f}x {fast:9.1f}x {'>=' + format(GOAL, 'g'):>6} {fast / py:8.1f}x {fmt(peer, 8, 1)}x "
              f"{ours_us:7.2f} {fmt(pin_us, 10, 2)}")
    print("real-time factors: simulated seconds per wall second, 1 kHz RK4 computed torque, warm, best of "
          f"{args.repeat} (build + run + result)")
    if args.results:
        write_results(args.results, "bench_simulation.py", argv, rows=rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
