"""Time-optimal timing under torque limits against toppra (TOPP-RA, from PyPI) side by side in one
process, on the same paths and limits; and against a flat-acceleration timing.

    python bench/bench_time_optimal.py [--urdf FILE ...] [--robots NAME ...] [--paths 5] [--waypoints 5]
                                       [--seed 0] [--span 1]
                                       [--grid 1001] [--repeat 7] [--threads 1]
                                       [--scheme collocation|interpolation] [--output spline|const-accel]
                                       [--flat ours|toppra|none]
                                       [--skip-cold] [--results bench/results/bench_time_optimal.json]
                                       [--csv FILE]

Per robot (by default the UR5 and the Panda of example-robot-data, read from their files by both
sides, the Panda's fingers fixed as in bench_core.py; --robots adds bundled robots) and per random
path (seeded; --waypoints waypoints drawn uniformly inside the joint limits, each range cut to
[-pi, pi], or in its middle --span):

* the path: the cubic spline (not-a-knot) through the waypoints on the chord-length parameter
  s in [0, 1]: ``robot_dynamics.trajectory.time_optimal`` is given the waypoints (its documented
  ``path_through``, the same spline: checked against scipy's CubicSpline(ss, waypoints) to 1e-12
  on every path), toppra ``toppra.SplineInterpolator(ss, waypoints)`` with the same ss; ours is
  also timed given scipy's CubicSpline object as a planner would hand it over (shown, not the goal:
  most of the difference is scipy's spline construction);
* the limits: the description's velocity and effort limits, no friction (the Panda's viscous
  damping is dropped); toppra gets ``JointVelocityConstraint`` and ``JointTorqueConstraint`` with
  Pinocchio's rnea as its inverse dynamics, --grid grid points uniform in s, the seidel solver,
  the --scheme discretization and its default output (``ParametrizeSpline``, a cubic spline in
  time through the grid points; --output const-accel: ``ParametrizeConstAccel``, the grid's
  constant path accelerations);
* the duration of each result and the ratio ours / toppra (goal <= 1.02);
* the compute time from the waypoints to the timed trajectory (the spline, the solve, the
  output), first call and median of --repeat warm calls interleaved with toppra's, and the ratio
  of the warm medians (goal <= 0.05); ours on --threads engine threads (toppra runs on one);
* each result resampled at 1 kHz (and its last instant): max |tau_j| / limit_j - 1 with
  Pinocchio's rnea for both results (positive: a violation), and the same for the velocities
  (goal: ours <= 1e-6 wherever toppra's exceeds its limits);
* the flat-acceleration timing (MoveIt's practice): the largest acceleration limit, one value for
  every joint, whose timing under the same velocity limits keeps every torque of the 1 kHz
  resampling within its limit (bisection, to 0.1 %; ``time_optimal`` with that acceleration
  limit and no torque limit, or toppra's with --flat toppra; toppra's too, counted in the table,
  for a limit where ``time_optimal`` raises PathInfeasibleError), per path and for the robot (the
  smallest over its paths: one limit for every motion, as a configuration file holds), and the
  time the torque-limited optimum saves against each.

The cold table times a fresh process per side to its first answer on the first path: the
imports, the model, the first call (--skip-cold: not run). The load average before and after is
printed and written: the machine's load changes absolute times, the ratios less.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.interpolate import CubicSpline

import robot_dynamics as rd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _results import print_table as _table  # noqa: E402
from _results import write_results  # noqa: E402
from bench_core import _frictionless, _pinocchio, example_urdfs  # noqa: E402

GOALS = {"duration": 1.02, "compute": 0.05, "violation": 1e-6}
RATE = 1000.0  # the resampling [Hz]


@dataclass
class Case:
    """One robot: our model (frictionless), Pinocchio's of the same file, and its limits."""

    name: str
    model: rd.RobotModel
    pm: object
    pd: object
    velocity: np.ndarray  # (nq,) [rad/s]
    effort: np.ndarray  # (nq,) [N m]

    def rnea(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Pinocchio's joint torques of one state (nq,) [N m]: toppra's inverse dynamics."""
        import pinocchio as pin

        return pin.rnea(self.pm, self.pd, q, qd, qdd)

    def torques(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Pinocchio's joint torques (N, nq) [N m] of the states (N, nq): the judge of both results."""
        return np.array([self.rnea(a, b, c) for a, b, c in zip(q, qd, qdd)])


@dataclass
class Row:
    """The measurements of one path."""

    robot: str
    path: int
    duration: dict = field(default_factory=dict)  # "ours"/"toppra" -> [s]
    first: dict = field(default_factory=dict)  # first call [s]
    warm: dict = field(default_factory=dict)  # median of the warm calls [s]
    torque: dict = field(default_factory=dict)  # max |tau|/limit - 1 at 1 kHz
    velocity: dict = field(default_factory=dict)  # max |qd|/limit - 1 at 1 kHz
    flat_acceleration: float = float("nan")  # the largest flat limit of this path [rad/s^2]
    flat_duration: float = float("nan")  # its duration [s]
    robot_flat_duration: float = float("nan")  # the duration at the robot's flat limit [s]
    flat_fallbacks: int = 0  # flat timings where ours raised PathInfeasibleError and toppra's was used


def load_case(pin, path: str) -> Case:
    """The robot of a URDF file, read by both libraries; friction off, armature given to Pinocchio."""
    model = _frictionless(rd.load_urdf(path))
    pm = _pinocchio(pin, model, path)
    case = Case(model.name, model, pm, pm.createData(), np.asarray(model.velocity_limit, float),
                np.asarray(model.effort_limit, float))
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-1, 1, (3, model.nq))
    np.testing.assert_allclose(rd.rnea(model, q, qd, qdd, friction=False), case.rnea(q, qd, qdd), rtol=1e-9, atol=1e-9)
    return case


def random_paths(case: Case, count: int, waypoints: int, seed: int, span: float = 1.0) -> list[tuple[np.ndarray, np.ndarray]]:
    """``count`` paths (ss (K,), waypoints (K, nq)): waypoints uniform inside the joint limits cut
    to [-pi, pi] [rad] (the middle ``span`` of each range), ss the chord length scaled to [0, 1]."""
    rng = np.random.default_rng(seed)
    lo = np.maximum(case.model.lower, -np.pi)
    hi = np.minimum(case.model.upper, np.pi)
    middle, half = 0.5 * (lo + hi), 0.5 * span * (hi - lo)
    lo, hi = middle - half, middle + half
    out = []
    for _ in range(count):
        wp = rng.uniform(lo, hi, (waypoints, case.model.nq))
        chord = np.r_[0.0, np.cumsum(np.linalg.norm(np.diff(wp, axis=0), axis=1))]
        out.append((chord / chord[-1], wp))
    return out


# A timed result, whichever library: (duration [s], sample(t) -> (q, qd, qdd) each (N, nq)).
Timed = tuple[float, Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]]


def ours(case: Case, ss: np.ndarray, wp: np.ndarray, grid: int, acceleration: float | None = None,
         spline: bool = False) -> Timed:
    """time_optimal from the waypoints (spline: given scipy's CubicSpline(ss, wp), the same path):
    the torque limits, or a flat acceleration limit and none."""
    from robot_dynamics.trajectory import time_optimal

    path = CubicSpline(ss, wp) if spline else wp
    if acceleration is None:
        traj = time_optimal(case.model, path, velocity_limit=case.velocity,
                            torque_limit=case.effort, grid_points=grid, friction=False)
    else:
        traj = time_optimal(case.model, path, velocity_limit=case.velocity,
                            acceleration_limit=acceleration, torque_limit=np.inf, grid_points=grid, friction=False)
    return traj.duration, traj.sample


def same_spline(ss: np.ndarray, wp: np.ndarray) -> None:
    """path_through(wp), the path time_optimal makes of the waypoints, is scipy's CubicSpline(ss, wp)
    (the path toppra's SplineInterpolator holds) to 1e-12 of its scale, derivatives 0, 1, 2."""
    from robot_dynamics.trajectory import path_through

    t = np.linspace(0.0, 1.0, 2001)
    mine, scipy = path_through(wp), CubicSpline(ss, wp)
    for order in (0, 1, 2):
        a, b = mine(t, order), scipy(t, order)
        if not np.abs(a - b).max() <= 1e-12 * max(1.0, np.abs(b).max()):
            raise AssertionError(f"path_through differs from CubicSpline(ss, wp) in derivative {order}")


def toppra_timing(case: Case, ss: np.ndarray, wp: np.ndarray, grid: int, scheme: str,
                  acceleration: float | None = None, output: str = "spline") -> Timed:
    """toppra on the same spline: velocity and torque constraints (Pinocchio's rnea), or velocity
    and a flat acceleration limit; ``grid`` grid points uniform in s, the seidel solver."""
    import toppra
    import toppra.algorithm as algo
    import toppra.constraint as constraint

    kind = {"collocation": constraint.DiscretizationType.Collocation,
            "interpolation": constraint.DiscretizationType.Interpolation}[scheme]
    path = toppra.SplineInterpolator(ss, wp)
    velocity = constraint.JointVelocityConstraint(np.c_[-case.velocity, case.velocity])
    if acceleration is None:
        second = constraint.JointTorqueConstraint(case.rnea, np.c_[-case.effort, case.effort], np.zeros(case.model.nq),
                                                  discretization_scheme=kind)
    else:
        a = np.full(case.model.nq, acceleration)
        second = constraint.JointAccelerationConstraint(np.c_[-a, a], discretization_scheme=kind)
    parametrizer = {"spline": "ParametrizeSpline", "const-accel": "ParametrizeConstAccel"}[output]
    instance = algo.TOPPRA([velocity, second], path, gridpoints=np.linspace(0.0, 1.0, grid), solver_wrapper="seidel",
                           parametrizer=parametrizer)
    traj = instance.compute_trajectory()
    if traj is None:
        raise RuntimeError(f"{case.name}: toppra found no parameterization ({instance.problem_data.return_code})")
    return float(traj.duration), lambda t: (traj(t), traj(t, 1), traj(t, 2))


def resample(timed: Timed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The result at 1 kHz and at its last instant: (q, qd, qdd), each (N, nq)."""
    duration, sample = timed
    t = np.r_[np.arange(0.0, duration, 1.0 / RATE), duration]
    return sample(t)


def excess(case: Case, timed: Timed) -> tuple[float, float]:
    """(max |tau_j| / limit_j - 1, max |qd_j| / limit_j - 1) over the 1 kHz resampling; the
    torques by Pinocchio's rnea. Positive: a violation."""
    q, qd, qdd = resample(timed)
    tau = case.torques(q, qd, qdd)
    return float(np.max(np.abs(tau) / case.effort) - 1.0), float(np.max(np.abs(qd) / case.velocity) - 1.0)


def clock(fn: Callable[[], Timed]) -> tuple[float, Timed]:
    """(seconds, result) of one call."""
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def measure(case: Case, index: int, ss: np.ndarray, wp: np.ndarray, args: argparse.Namespace) -> Row:
    """Both libraries on one path: first call, --repeat warm calls in alternating order, the
    durations and the excesses of the 1 kHz resampling; then the flat-acceleration timing."""
    row = Row(case.name, index)
    same_spline(ss, wp)
    solvers = {"ours": lambda: ours(case, ss, wp, args.grid),
               "toppra": lambda: toppra_timing(case, ss, wp, args.grid, args.scheme, output=args.output),
               "ours, CubicSpline": lambda: ours(case, ss, wp, args.grid, spline=True)}
    results = {}
    for name, fn in solvers.items():
        row.first[name], results[name] = clock(fn)
    warm: dict[str, list[float]] = {name: [] for name in solvers}
    names = list(solvers)
    for r in range(args.repeat):
        for name in names if r % 2 == 0 else names[::-1]:
            warm[name].append(clock(solvers[name])[0])
    for name in names:
        row.warm[name] = float(np.median(warm[name]))
        row.duration[name] = results[name][0]
        if name == "ours, CubicSpline":
            continue
        row.torque[name], row.velocity[name] = excess(case, results[name])
    if args.flat != "none":
        row.flat_acceleration, row.flat_duration = flat_acceleration(case, flat_timer(case, ss, wp, args, row))
    return row


def flat_timer(case: Case, ss: np.ndarray, wp: np.ndarray, args: argparse.Namespace,
               row: Row | None = None) -> Callable[[float], Timed]:
    """The timing of the path under the velocity limits and a flat acceleration limit [rad/s^2]:
    --flat's; where ours raises PathInfeasibleError (no path is infeasible under velocity and
    acceleration limits alone), toppra's, counted in ``row.flat_fallbacks``."""
    from robot_dynamics.errors import PathInfeasibleError

    def timer(a: float) -> Timed:
        if args.flat == "ours":
            try:
                return ours(case, ss, wp, args.grid, acceleration=a)
            except PathInfeasibleError:
                if row is not None:
                    row.flat_fallbacks += 1
        return toppra_timing(case, ss, wp, args.grid, args.scheme, acceleration=a, output=args.output)

    return timer


def flat_acceleration(case: Case, timer: Callable[[float], Timed], tolerance: float = 1e-3,
                      top: float = 1e4) -> tuple[float, float]:
    """The largest flat acceleration limit [rad/s^2] (one value for every joint) whose timing
    keeps every torque of its 1 kHz resampling within the limits (to ``GOALS['violation']``),
    and that timing's duration [s]: doubling or halving from 1 rad/s^2 to a bracket, then
    bisection on a log scale to the relative ``tolerance``. The torque is taken to grow with the
    limit (the bisection finds one crossing). ``top`` when the torques never exceed their limits
    below it (the velocity limits bind); nan below 1e-3 rad/s^2 (the path is infeasible)."""

    def within(a: float) -> tuple[bool, float]:
        timed = timer(a)
        return excess(case, timed)[0] <= GOALS["violation"], timed[0]

    lo, hi, lo_duration = None, None, float("nan")
    a = 1.0
    good, duration = within(a)
    while True:
        if good:
            lo, lo_duration = a, duration
            if hi is not None or a >= top:
                break
            a = min(2.0 * a, top)
        else:
            hi = a
            if lo is not None:
                break
            if a < 1e-3:
                return float("nan"), float("nan")
            a = 0.5 * a
        good, duration = within(a)
    while hi is not None and hi / lo > 1.0 + tolerance:
        mid = float(np.sqrt(lo * hi))
        good, duration = within(mid)
        if good:
            lo, lo_duration = mid, duration
        else:
            hi = mid
    return lo, lo_duration


def robot_flat(case: Case, rows: list[Row], paths: list, args: argparse.Namespace) -> float:
    """One flat limit for every motion of the robot: the smallest of its paths' [rad/s^2]; each
    row gets its duration at that limit (nan where the limit is not finite)."""
    limits = [r.flat_acceleration for r in rows]
    if args.flat == "none" or not np.all(np.isfinite(limits)):
        return float("nan")
    a = float(min(limits))
    for row, (ss, wp) in zip(rows, paths):
        timed = flat_timer(case, ss, wp, args, row)(a)
        row.robot_flat_duration = timed[0]
        torque = excess(case, timed)[0]
        if torque > GOALS["violation"]:
            print(f"  {case.name} path {row.path}: at the robot's flat limit {a:.3f} rad/s^2 the torques exceed "
                  f"their limits by {100 * torque:.3f} % (the torque does not grow monotonically with the limit)")
    return a


_COLD = {
    "ours": r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from scipy.interpolate import CubicSpline
import robot_dynamics as rd
from robot_dynamics.trajectory import time_optimal
t1 = time.perf_counter()
urdf, ss, wp, grid, scheme, output = json.loads(sys.argv[1])
m = rd.load_urdf(urdf)
z = np.zeros(m.nq)
m = m.replace(viscous=z, coulomb=z, static_friction=None, stribeck=None)
t2 = time.perf_counter()
traj = time_optimal(m, CubicSpline(ss, np.array(wp)), velocity_limit=m.velocity_limit, torque_limit=m.effort_limit,
                    grid_points=grid, friction=False)
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, traj.duration)
""",
    "toppra": r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import pinocchio as pin
import toppra, toppra.algorithm as algo, toppra.constraint as constraint
t1 = time.perf_counter()
urdf, ss, wp, grid, scheme, output = json.loads(sys.argv[1])
pm = pin.buildModelFromUrdf(urdf)
pd = pm.createData()
v = pm.velocityLimit
e = pm.effortLimit
t2 = time.perf_counter()
kind = getattr(constraint.DiscretizationType, scheme.capitalize())
path = toppra.SplineInterpolator(ss, np.array(wp))
cv = constraint.JointVelocityConstraint(np.c_[-v, v])
ct = constraint.JointTorqueConstraint(lambda q, qd, qdd: pin.rnea(pm, pd, q, qd, qdd), np.c_[-e, e], np.zeros(pm.nv),
                                      discretization_scheme=kind)
parametrizer = {"spline": "ParametrizeSpline", "const-accel": "ParametrizeConstAccel"}[output]
traj = algo.TOPPRA([cv, ct], path, gridpoints=np.linspace(0, 1, grid), solver_wrapper="seidel",
                   parametrizer=parametrizer).compute_trajectory()
t3 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, traj.duration)
""",
}


def cold_start(urdf: str, ss: np.ndarray, wp: np.ndarray, args: argparse.Namespace) -> list[list]:
    """A fresh process per side to its first answer on one path: [side, import, model, first
    call, from the process start (the interpreter's start included), duration] [s]."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA")}
    env["OMP_NUM_THREADS"] = str(args.threads)
    payload = json.dumps([urdf, ss.tolist(), wp.tolist(), args.grid, args.scheme, args.output])
    out = []
    for side, script in _COLD.items():
        t0 = time.perf_counter()
        # outside the repository: `python -c` imports from its working directory first, where the
        # folder robot_dynamics/ would stand for the installed package
        res = subprocess.run([sys.executable, "-c", script, payload], env=env, capture_output=True, text=True,
                             cwd=tempfile.gettempdir())
        wall = time.perf_counter() - t0
        if res.returncode != 0:
            out.append([side, *[float("nan")] * 5])
            print(f"cold start of {side} failed: {res.stderr.strip().splitlines()[-1:]}")
            continue
        t_import, t_model, t_call, duration = (float(x) for x in res.stdout.split())
        out.append([side, t_import, t_model, t_call, wall, duration])
    return out


def _pct(x: float) -> str:
    return f"{100.0 * x:+.4f} %" if np.isfinite(x) else ""


def toppra_tables(rows: list[Row], args: argparse.Namespace) -> list[dict]:
    """The durations and compute times, and the excesses of the 1 kHz resampling."""
    timing = [[r.robot, str(r.path), f"{r.duration['ours']:.4f}", f"{r.duration['toppra']:.4f}",
               f"{r.duration['ours'] / r.duration['toppra']:.4f}",
               f"{r.warm['ours'] * 1e3:.2f}", f"{r.warm['toppra'] * 1e3:.2f}", f"{r.warm['ours'] / r.warm['toppra']:.3f}",
               f"{r.first['ours'] * 1e3:.2f}", f"{r.first['toppra'] * 1e3:.2f}",
               f"{r.warm['ours, CubicSpline'] * 1e3:.2f}", f"{r.warm['ours, CubicSpline'] / r.warm['toppra']:.3f}"]
              for r in rows]
    limits = [[r.robot, str(r.path), _pct(r.torque["ours"]), _pct(r.torque["toppra"]),
               _pct(r.velocity["ours"]), _pct(r.velocity["toppra"])] for r in rows]
    return [
        _table(f"Against toppra, {args.grid} grid points ({args.scheme}, {args.output} output): durations [s] (goal: ratio <= {GOALS['duration']}) "
               f"and compute times [ms] (warm: median of {args.repeat}; goal: ratio <= {GOALS['compute']})",
               ["robot", "path", "ours [s]", "toppra [s]", "ratio", "ours warm", "toppra warm", "ratio", "ours first",
                "toppra first", "ours warm, CubicSpline given", "ratio"], timing),
        _table("Resampled at 1 kHz, Pinocchio's rnea for both: max |tau|/limit - 1 and max |qd|/limit - 1 "
               f"(positive: a violation; goal: ours <= {GOALS['violation']:g})",
               ["robot", "path", "torque, ours", "torque, toppra", "velocity, ours", "velocity, toppra"], limits),
    ]


def flat_table(rows: list[Row], robot_limits: dict[str, float], args: argparse.Namespace) -> dict:
    """The flat-acceleration timings against the torque-limited optimum (ours)."""
    table = []
    for r in rows:
        saved = 1.0 - r.duration["ours"] / r.flat_duration
        robot_saved = 1.0 - r.duration["ours"] / r.robot_flat_duration
        table.append([r.robot, str(r.path), f"{r.flat_acceleration:.3f}", f"{r.flat_duration:.4f}",
                      f"{robot_limits[r.robot]:.3f}", f"{r.robot_flat_duration:.4f}", f"{r.duration['ours']:.4f}",
                      f"{100 * saved:.1f} %", f"{100 * robot_saved:.1f} %", str(r.flat_fallbacks)])
    return _table(f"Against a flat acceleration limit ({args.flat}'s timing under it, the same velocity limits; "
                  "the largest keeping every torque within limits at 1 kHz): the time the torque-limited optimum saves",
                  ["robot", "path", "flat limit, path [rad/s^2]", "its duration [s]", "flat limit, robot",
                   "its duration [s]", "torque-limited [s]", "saved (path's)", "saved (robot's)",
                   "toppra's timing instead (ours raised)"], table)


def summary(rows: list[Row]) -> list[str]:
    """The goals, met or missed, over every path."""
    duration = max(r.duration["ours"] / r.duration["toppra"] for r in rows)
    compute = max(r.warm["ours"] / r.warm["toppra"] for r in rows)
    violating = [r for r in rows if r.torque["toppra"] > 0.0 or r.velocity["toppra"] > 0.0]
    worst = max((max(r.torque["ours"], r.velocity["ours"]) for r in violating), default=float("nan"))
    lines = [
        f"duration ours/toppra: largest {duration:.4f} (goal <= {GOALS['duration']}): {'met' if duration <= GOALS['duration'] else 'MISSED'}",
        f"compute time ours/toppra (warm medians): largest {compute:.3f} (goal <= {GOALS['compute']}): "
        f"{'met' if compute <= GOALS['compute'] else 'MISSED'}",
        f"toppra's result exceeds a limit at 1 kHz on {len(violating)} of {len(rows)} paths (a torque limit on "
        f"{sum(r.torque['toppra'] > 0.0 for r in rows)}, a velocity limit on {sum(r.velocity['toppra'] > 0.0 for r in rows)}); "
        f"ours there: largest excess "
        f"{worst:+.2e} (goal <= {GOALS['violation']:g}): {'met' if not violating or worst <= GOALS['violation'] else 'MISSED'}",
    ]
    for line in lines:
        print(line)
    return lines


def write_csv(path: str, rows: list[Row]) -> None:
    """One line per path, every number of the tables, atomically."""
    from robot_dynamics.commands._common import write_atomic

    head = ["robot", "path", "duration_ours_s", "duration_toppra_s", "warm_ours_s", "warm_toppra_s", "first_ours_s",
            "first_toppra_s", "torque_excess_ours", "torque_excess_toppra", "velocity_excess_ours",
            "velocity_excess_toppra", "flat_acceleration", "flat_duration_s", "robot_flat_duration_s", "flat_fallbacks",
            "warm_ours_cubicspline_s"]
    lines = [",".join(head)]
    for r in rows:
        values = [r.duration["ours"], r.duration["toppra"], r.warm["ours"], r.warm["toppra"], r.first["ours"],
                  r.first["toppra"], r.torque["ours"], r.torque["toppra"], r.velocity["ours"], r.velocity["toppra"],
                  r.flat_acceleration, r.flat_duration, r.robot_flat_duration, r.flat_fallbacks, r.warm["ours, CubicSpline"]]
        lines.append(",".join([r.robot, str(r.path), *(f"{v:.9g}" for v in values)]))
    write_atomic(path, "\n".join(lines) + "\n")


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urdf", nargs="*", default=None,
                        help="URDF files read by both sides (default: example-robot-data's UR5 and Panda)")
    parser.add_argument("--robots", nargs="*", default=[],
                        help="bundled robots, their descriptions written to files read by both sides")
    parser.add_argument("--paths", type=int, default=5, help="random paths per robot")
    parser.add_argument("--waypoints", type=int, default=5, help="waypoints per path")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--span", type=float, default=1.0,
                        help="waypoints in the middle SPAN of each joint's range (cut to [-pi, pi])")
    parser.add_argument("--grid", type=int, default=1001, help="grid points (both sides)")
    parser.add_argument("--repeat", type=int, default=7, help="warm calls per side and path (the median is kept)")
    parser.add_argument("--threads", type=int, default=1, help="our engine's threads (toppra runs on one)")
    parser.add_argument("--scheme", choices=["collocation", "interpolation"], default="collocation",
                        help="toppra's discretization of its constraints")
    parser.add_argument("--output", choices=["spline", "const-accel"], default="spline",
                        help="toppra's output: ParametrizeSpline (its default) or ParametrizeConstAccel")
    parser.add_argument("--flat", choices=["ours", "toppra", "none"], default="ours",
                        help="whose timing under a flat acceleration limit (none: skip that study)")
    parser.add_argument("--skip-cold", action="store_true")
    parser.add_argument("--results", default=None, metavar="JSON", help="also write the tables as JSON (atomically)")
    parser.add_argument("--csv", default=None, metavar="FILE", help="also write one line per path as CSV (atomically)")
    args = parser.parse_args(argv)
    if args.paths < 1 or args.waypoints < 2 or args.grid < 3 or args.repeat < 1 or args.threads < 1 or not 0 < args.span <= 1:
        parser.error("--paths >= 1, --waypoints >= 2, --grid >= 3, --repeat >= 1, --threads >= 1, 0 < --span <= 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    try:
        import pinocchio as pin
        import toppra  # noqa: F401
    except ImportError as e:
        print(f"{e.name} is not installed (pip install toppra pin): nothing to compare against", file=sys.stderr)
        return 1
    from importlib.metadata import version

    rd.set_num_threads(args.threads)
    scratch = tempfile.TemporaryDirectory(prefix="bench_time_optimal_")  # the Panda's file, removed with it
    urdfs = args.urdf if args.urdf is not None else example_urdfs(scratch.name)
    for name in args.robots:
        urdfs.append(os.path.join(scratch.name, f"{name}.urdf"))
        with open(urdfs[-1], "w", encoding="utf-8") as f:
            f.write(rd.load_robot(name).description)
    if not urdfs:
        print("no URDF: install example-robot-data (pip install example-robot-data) or give --urdf", file=sys.stderr)
        return 1
    load_before = os.getloadavg()
    print(f"toppra {version('toppra')}, pinocchio {pin.__version__}, {os.cpu_count()} cores, our threads {args.threads}; "
          f"load average {' '.join(f'{x:.2f}' for x in load_before)}")
    cases = [load_case(pin, path) for path in urdfs]
    cold = None
    if not args.skip_cold:  # first: the machine is quietest before the warm runs
        ss, wp = random_paths(cases[0], 1, args.waypoints, args.seed, args.span)[0]
        cold = cold_start(urdfs[0], ss, wp, args)
    rows: list[Row] = []
    robot_limits: dict[str, float] = {}
    for case in cases:
        paths = random_paths(case, args.paths, args.waypoints, args.seed, args.span)
        case_rows = []
        for k, (ss, wp) in enumerate(paths):
            case_rows.append(measure(case, k, ss, wp, args))
            r = case_rows[-1]
            print(f"{case.name} path {k}: {r.duration['ours']:.4f} s / {r.duration['toppra']:.4f} s, "
                  f"{r.warm['ours'] * 1e3:.2f} ms / {r.warm['toppra'] * 1e3:.2f} ms", flush=True)
        robot_limits[case.name] = robot_flat(case, case_rows, paths, args)
        rows += case_rows
    load_after = os.getloadavg()
    tables = toppra_tables(rows, args)
    if args.flat != "none":
        tables.append(flat_table(rows, robot_limits, args))
    if cold is not None:
        tables.append(_table(f"Cold: a fresh process per side to its first answer on {cases[0].name}'s first path [s]",
                             ["side", "imports", "model", "first call", "from the process start", "duration [s]"],
                             [[c[0], *(f"{v:.3f}" for v in c[1:5]), f"{c[5]:.4f}"] for c in cold]))
    print()
    goals = summary(rows)
    print(f"load average after {' '.join(f'{x:.2f}' for x in load_after)}")
    if args.results:
        write_results(args.results, "bench_time_optimal.py", argv, toppra=version("toppra"), pinocchio=pin.__version__,
                      load_average=[list(load_before), list(load_after)], goals=goals, tables=tables)
    if args.csv:
        write_csv(args.csv, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
