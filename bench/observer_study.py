"""Detection delay and false alarms of the momentum observer against its threshold setting, with a
model 10 % off and noisy measurements.

    python bench/observer_study.py [--robots iiwa14 puma560] [--model-error scale|random] [--seed 0]
                                   [--gain 100 200] [--step-at 0.5 1.0 1.5] [--minutes 10] [--segment 60]
                                   [--fixed 0.005 0.01 ...] [--relative 0 0.05 ...]
                                   [--plot docs/observer_study.png]
                                   [--results bench/results/observer_study.json] [--quick]

Per robot:

* the plant is the bundled model (its friction on; a Coulomb friction smoothed by
  --coulomb-smoothing, alike in the plant and the observer); the controller (computed torque)
  and the observer run on a model whose links' masses and inertias about their centres of mass
  are 1.1 times the plant's (--model-error scale) or each link's scaled by its own factor drawn
  uniformly in [0.9, 1.1] (--model-error random, seeded by --seed); rotor inertias and friction
  are the plant's;
* the measurements the controller and the observer both get carry white Gaussian noise of
  1e-5 rad on q and 1e-3 rad/s on qd (--position-noise, --velocity-noise), at 1 kHz;
* the step: a quintic move of 2 s under computed torque, and from each --step-at instant a
  joint torque disturbance of 10 % of one joint's effort limit (--step), held to the end; once
  per joint and instant. The delay is the first tick at or after the step whose residual passes
  a threshold, less the step's instant (the torque acts from its tick, so 1 ms is the least);
  alarms before the step are counted as false alarms;
* the collision-free motion: --minutes of the identification's Fourier excitations
  (``design_excitation``, a new rest pose and seed per --segment seconds, each segment from
  rest, 0.2 Hz and 4 harmonics within the velocity, acceleration and 80 % of the effort limits),
  tracked by computed torque (the engine's compiled loop); the observer runs over each segment
  afterwards, restarted at its beginning, on the same noisy measurements the controller had;
* the sweep: the observer's residual r and its model torque s do not depend on the threshold
  (``threshold_j = fixed_j + relative_j s_j``), so one pass per run gives every setting: the
  fixed part as a fraction of each joint's effort limit (--fixed) against the relative part
  (--relative), at each gain of --gain (K_O [1/s], over the same runs). For each setting: the
  largest delay over the joints and instants, the false alarms (an alarm is a run of
  consecutive alarming ticks; its ticks are counted too).

The goals: detection within 5 ms on every joint and no false alarm over 10 minutes.
--plot draws the largest delay and the false alarms against the fixed part, a line per relative
part, a row per robot and gain. --quick: the iiwa14, one instant, 20 s of motion, K_O = 100 /s, a
small sweep (a few seconds).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
from dataclasses import dataclass, field

import numpy as np

import robot_dynamics as rd
from robot_dynamics.control import ComputedTorque
from robot_dynamics.identification import design_excitation
from robot_dynamics.observers import DEFAULT_RELATIVE, DEFAULT_THRESHOLD_FRACTION, MomentumObserver
from robot_dynamics.simulation import Noise, PlantOptions, Simulation, SimulationOptions
from robot_dynamics.trajectory import plan

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _results import print_table as _table  # noqa: E402
from _results import write_results  # noqa: E402

GOALS = {"delay": 0.005, "false_alarms": 0}
RATE = 1000.0  # the control and observer rate [Hz]
MOVE = 2.0  # the step case's move [s]


@dataclass
class Case:
    """One robot: the plant, the model the controller and the observer share, the options."""

    name: str
    plant: rd.RobotModel
    model: rd.RobotModel
    factors: np.ndarray  # (nb,) the model's mass and inertia factors
    options: SimulationOptions
    smoothing: float


@dataclass
class Pass:
    """The observer over one run: residuals R, model torques S (N, nq), and what is known of it."""

    t: np.ndarray
    R: np.ndarray
    S: np.ndarray
    start: float = 0.0  # the step's instant [s] (inf: no step)
    joint: int = -1  # the stepped joint


@dataclass
class Setting:
    """What one threshold setting gives over every run of a robot."""

    fixed: float
    relative: float
    delays: list = field(default_factory=list)  # [s] per step run (inf: not detected)
    step_alarms: int = 0  # false alarms before the steps
    alarms: int = 0  # false alarms over the collision-free motion
    alarm_ticks: int = 0
    isolated: int = 0  # step runs whose first detection names the stepped joint


def make_case(name: str, args: argparse.Namespace) -> Case:
    """The plant, the erroneous model (see the module docstring) and the simulation options."""
    plant = rd.load_robot(name)
    if args.model_error == "scale":
        factors = np.full(plant.nb, 1.1)
    else:
        factors = np.random.default_rng(args.seed).uniform(0.9, 1.1, plant.nb)
    model = plant.replace(mass=plant.mass * factors, inertia_com=plant.inertia_com * factors[:, None, None])
    smoothing = args.coulomb_smoothing if np.any(np.asarray(plant.coulomb) > 0) else 0.0
    options = SimulationOptions(noise=Noise(position=args.position_noise, velocity=args.velocity_noise, seed=args.seed),
                                plant=PlantOptions(friction=True, coulomb_smoothing=smoothing))
    return Case(name, plant, model, factors, options, smoothing)


@dataclass
class Run:
    """One simulated run as the observer gets it: t (N,), the measured q, qd and the commanded tau (N, nq)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    tau: np.ndarray
    start: float = np.inf  # the step's instant [s] (inf: no step)
    joint: int = -1  # the stepped joint


def record(sim: Simulation, start: float = np.inf, joint: int = -1) -> Run:
    """A finished run with the noisy measurements its controller had."""
    res = sim.result()
    st = sim.tick_state
    N = res.t.size
    q = res.q + (st.zq[:N] * st.pos_std if st.zq is not None else 0.0)
    qd = res.qd + (st.zqd[:N] * st.vel_std if st.zqd is not None else 0.0)
    return Run(np.asarray(res.t), q, qd, np.array(res.tau), start, joint)


def observe(case: Case, run: Run, gain: float) -> Pass:
    """The observer over a run: with no fixed part and a relative part of 1 its threshold is s itself."""
    obs = MomentumObserver(case.model, gain=gain, threshold=0.0, relative=1.0, coulomb_smoothing=case.smoothing)
    N = run.t.size
    R, S = np.empty((N, case.plant.nq)), np.empty((N, case.plant.nq))
    for k in range(N):
        out = obs.update(float(run.t[k]), run.q[k], run.qd[k], run.tau[k])
        R[k], S[k] = out.external_torque, out.threshold
    return Pass(run.t, R, S, run.start, run.joint)


def step_move(plant: rd.RobotModel) -> tuple[np.ndarray, np.ndarray]:
    """The step case's start and goal (nq,): from 40 % to 60 % of each joint's range (cut to
    [-pi, pi]), alternately up and down, the travel cut so that the quintic's peak velocity is
    at most 80 % of the velocity limit."""
    lo, hi = np.maximum(plant.lower, -np.pi), np.minimum(plant.upper, np.pi)
    a, b = lo + 0.4 * (hi - lo), lo + 0.6 * (hi - lo)
    up = np.arange(plant.nq) % 2 == 0
    start, goal = np.where(up, a, b), np.where(up, b, a)
    top = 0.8 * np.asarray(plant.velocity_limit) * MOVE / 1.875
    return start, start + np.clip(goal - start, -top, top)


def step_runs(case: Case, args: argparse.Namespace) -> list[Run]:
    """A 2 s move per joint and instant, a step of --step of the joint's effort limit from the instant."""
    start, goal = step_move(case.plant)
    move = plan("quintic", start, goal, duration=MOVE)
    passes = []
    for at in args.step_at:
        for j in range(case.plant.nq):
            step = np.zeros(case.plant.nq)
            step[j] = args.step * case.plant.effort_limit[j]
            noise = case.options.noise
            options = SimulationOptions(
                noise=Noise(position=noise.position, velocity=noise.velocity, seed=args.seed + 1 + j,
                            disturbance=lambda t, step=step, at=at: step if t >= at - 1e-9 else 0.0 * step),
                plant=case.options.plant)
            sim = Simulation(case.plant, ComputedTorque(case.model), move, MOVE, options)
            sim.reset(start)
            sim.run()
            passes.append(record(sim, at, j))
    return passes


def excitation_runs(case: Case, args: argparse.Namespace) -> list[Run]:
    """--minutes of collision-free Fourier excitations, a new rest pose and seed per --segment."""
    plant = case.plant
    segments = max(1, int(round(args.minutes * 60.0 / args.segment)))
    period = 1.0 / args.frequency
    periods = max(1, int(round(args.segment / period)))
    lo, hi = np.maximum(plant.lower, -np.pi), np.minimum(plant.upper, np.pi)
    rng = np.random.default_rng(args.seed)
    passes = []
    for k in range(segments):
        q0 = rng.uniform(lo + 0.3 * (hi - lo), hi - 0.3 * (hi - lo))
        design = design_excitation(plant, q0=q0, frequency=args.frequency, periods=periods, seed=args.seed + k,
                                   maxiter=args.maxiter)
        traj = design.trajectory
        noise = case.options.noise
        options = SimulationOptions(noise=Noise(position=noise.position, velocity=noise.velocity, seed=args.seed + 100 + k),
                                    plant=case.options.plant)
        sim = Simulation(plant, ComputedTorque(case.model), traj, traj.duration, options)
        sim.reset(q0)
        sim.run()
        passes.append(record(sim))
        print(f"  {case.name} motion segment {k + 1}/{segments}: {traj.duration:.0f} s, velocity usage up to "
              f"{design.usage['velocity'].max():.2f}, effort usage up to {design.usage['effort'].max():.2f}", flush=True)
    return passes


def alarms(p: Pass, threshold: np.ndarray, relative: float) -> np.ndarray:
    """The alarm of each tick (N,): some |r_j| > threshold_j + relative s_j."""
    return np.any(np.abs(p.R) > threshold + relative * p.S, axis=1)


def _events(flags: np.ndarray) -> int:
    """Runs of consecutive True values."""
    return int(flags[0]) + int(np.count_nonzero(flags[1:] & ~flags[:-1])) if flags.size else 0


def evaluate(case: Case, steps: list[Pass], motion: list[Pass], fixed: float, relative: float) -> Setting:
    """One threshold setting over every run: delays, isolation, false alarms."""
    s = Setting(fixed, relative)
    threshold = fixed * np.asarray(case.plant.effort_limit, dtype=float)
    for p in steps:
        flags = alarms(p, threshold, relative)
        before = p.t < p.start - 1e-9
        s.step_alarms += _events(flags[before])
        after = np.flatnonzero(flags & ~before)
        if after.size == 0:
            s.delays.append(float("inf"))
            continue
        k = int(after[0])
        s.delays.append(float(p.t[k] - p.start))
        passed = np.flatnonzero(np.abs(p.R[k]) > threshold + relative * p.S[k])
        s.isolated += int(passed[-1] == p.joint)
    for p in motion:
        flags = alarms(p, threshold, relative)
        s.alarms += _events(flags)
        s.alarm_ticks += int(np.count_nonzero(flags))
    return s


def margins(case: Case, motion: list[Pass]) -> list[str]:
    """Per joint: the largest |r| over the collision-free motion as a fraction of the effort
    limit, and where it was, the torque the model explained there."""
    limit = np.asarray(case.plant.effort_limit, dtype=float)
    R = np.concatenate([p.R for p in motion])
    S = np.concatenate([p.S for p in motion])
    k = np.argmax(np.abs(R), axis=0)
    j = np.arange(case.plant.nq)
    return [f"{np.abs(R).max(axis=0)[i] / limit[i]:.4f} (s {S[k[i], i] / limit[i]:.3f})" for i in j]


def _span(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds >= 120 else f"{seconds:.0f} s"


def _fmt_delay(d: float) -> str:
    return f"{1e3 * d:.0f}" if np.isfinite(d) else "none"


def sweep_table(case: Case, gain: float, settings: list[Setting], motion_s: float, step_runs_n: int) -> dict:
    rows = []
    for s in settings:
        worst = max(s.delays)
        met = worst <= GOALS["delay"] + 1e-9 and s.alarms + s.step_alarms == 0
        rows.append([f"{s.fixed:g}", f"{s.relative:g}", _fmt_delay(worst), _fmt_delay(float(np.median(s.delays))),
                     f"{s.isolated}/{len(s.delays)}", str(s.step_alarms), str(s.alarms), str(s.alarm_ticks),
                     "both" if met else ""])
    return _table(f"{case.name}, K_O = {gain:g} /s: the threshold sweep ({step_runs_n} step runs of {MOVE:g} s, {_span(motion_s)} of "
                  "collision-free motion); delays [ms]",
                  ["fixed [x effort limit]", "relative", "largest delay", "median delay", "isolated",
                   "false alarms before the steps", "false alarms, motion", "alarm ticks, motion", "goals met"], rows)


def joint_table(case: Case, gain: float, setting: Setting, steps: list[Pass], motion: list[Pass]) -> dict:
    """The default setting per joint: the step, its delays over the instants, the motion's margins."""
    nq = case.plant.nq
    per_joint = [[d for d, p in zip(setting.delays, steps) if p.joint == j] for j in range(nq)]
    peak = margins(case, motion)
    rows = [[case.plant.joint_names[j], f"{0.1 * case.plant.effort_limit[j]:.2f}",
             " ".join(_fmt_delay(d) for d in per_joint[j]), peak[j]] for j in range(nq)]
    return _table(f"{case.name}, K_O = {gain:g} /s, the default setting (fixed {setting.fixed:g} of the effort limit, relative "
                  f"{setting.relative:g}): delay per joint [ms] at each instant; the largest |r| over the motion "
                  "(fraction of the effort limit) and s there",
                  ["joint", "step [N m]", "delays [ms]", "largest |r| in motion (s there)"], rows)


def plot(path: str, studies: dict, args: argparse.Namespace) -> None:
    """Largest delay and false alarms against the fixed part, one line per relative part, a row per robot and gain."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from robot_dynamics.commands._common import write_atomic

    fig, axes = plt.subplots(len(studies), 2, figsize=(12, 3.6 * len(studies)), squeeze=False)
    top = 12.0
    for row, ((robot, gain), (settings, motion_s)) in zip(axes, studies.items()):
        name = f"{robot}, K_O = {gain:g} /s"
        most = 1
        for i, rel in enumerate(args.relative):
            ss = [s for s in settings if s.relative == rel]
            x = [100 * s.fixed for s in ss]
            d = np.array([1e3 * max(s.delays) for s in ss])
            style = dict(marker="osD^v"[i % 5], ls=["-", "--", "-.", ":"][i % 4], ms=9 - 1.5 * i, label=f"relative {rel:g}")
            line, = row[0].plot(x, np.minimum(d, top), **style)
            late = d > top
            row[0].plot(np.array(x)[late], np.full(late.sum(), top), "x", color=line.get_color(), ms=10)
            false = [s.alarms + s.step_alarms for s in ss]
            most = max(most, *false)
            row[1].plot(x, false, **style)
        row[0].axhline(1e3 * GOALS["delay"], color="k", ls="--", lw=1, label="goal: 5 ms")
        row[0].axvline(100 * DEFAULT_THRESHOLD_FRACTION, color="grey", ls=":", lw=1, label="default fixed part")
        row[1].axvline(100 * DEFAULT_THRESHOLD_FRACTION, color="grey", ls=":", lw=1)
        row[0].set(ylim=(0, top + 0.5), ylabel="largest delay [ms]")
        row[0].set_title(f"{name}: steps of {100 * args.step:g} % of the effort limit (x: > {top:g} ms)", fontsize=10)
        row[1].set(yscale="symlog", ylim=(-0.05, 3 * most), ylabel="false alarms")
        row[1].set_title(f"{name}: false alarms, {_span(motion_s)} moving and before the steps", fontsize=10)
        for ax in row:
            ax.set_xlabel("fixed part of the threshold [% of the effort limit]")
            ax.grid(alpha=0.3)
        row[0].legend(fontsize=8)
    error = "1.1 x" if args.model_error == "scale" else "each link's x U(0.9, 1.1)"
    fig.suptitle(f"Momentum observer; the model's link masses and inertias {error} the plant's, noise "
                 f"{args.position_noise:g} rad and {args.velocity_noise:g} rad/s", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.25 / fig.get_figheight()))
    buf = io.BytesIO()
    fig.savefig(buf, dpi=90, format="png")
    write_atomic(path, buf.getvalue())
    plt.close(fig)


def sweep(case: Case, steps: list[Run], motion: list[Run], gain: float,
          args: argparse.Namespace) -> tuple[list[dict], list[Setting], list[str]]:
    """The observer at one gain over every run: the sweep, its tables and its goal lines."""
    step_passes = [observe(case, r, gain) for r in steps]
    motion_passes = [observe(case, r, gain) for r in motion]
    motion_s = sum(float(p.t[-1]) for p in motion_passes)
    settings = [evaluate(case, step_passes, motion_passes, f, r) for r in args.relative for f in args.fixed]
    default = evaluate(case, step_passes, motion_passes, DEFAULT_THRESHOLD_FRACTION, DEFAULT_RELATIVE)
    tables = [sweep_table(case, gain, settings, motion_s, len(steps)),
              joint_table(case, gain, default, step_passes, motion_passes)]
    worst, false = max(default.delays), default.alarms + default.step_alarms
    met = [s for s in settings if max(s.delays) <= GOALS["delay"] + 1e-9 and s.alarms + s.step_alarms == 0]
    name = f"{case.name}, K_O = {gain:g} /s"
    lines = [f"{name}, default setting: largest delay {_fmt_delay(worst)} ms (goal <= 5 ms): "
             f"{'met' if worst <= GOALS['delay'] + 1e-9 else 'MISSED'}; false alarms {false} over "
             f"{_span(motion_s)} and before the steps (goal 0): {'met' if false == 0 else 'MISSED'}",
             f"{name}: settings of the sweep meeting both goals: "
             + (", ".join(f"(fixed {s.fixed:g}, relative {s.relative:g})" for s in met) or "none")]
    return tables, settings, lines


def study(name: str, args: argparse.Namespace) -> tuple[list[dict], dict, list[str]]:
    """One robot: the runs, then the sweep at each gain; its tables, its settings by gain and its goal lines."""
    t0 = time.perf_counter()
    case = make_case(name, args)
    print(f"{name}: model factors {np.round(case.factors, 3).tolist()}; step runs ...", flush=True)
    steps = step_runs(case, args)
    print(f"  {len(steps)} step runs in {time.perf_counter() - t0:.1f} s; collision-free motion ...", flush=True)
    motion = excitation_runs(case, args)
    motion_s = sum(float(r.t[-1]) for r in motion)
    tables, lines, by_gain = [], [], {}
    for gain in args.gain:
        gain_tables, settings, gain_lines = sweep(case, steps, motion, gain, args)
        tables += gain_tables
        lines += gain_lines
        by_gain[gain] = (settings, motion_s)
    print(f"  {name} done in {time.perf_counter() - t0:.1f} s")
    return tables, by_gain, lines


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robots", nargs="+", default=["iiwa14", "puma560"], help="bundled robots")
    parser.add_argument("--model-error", choices=["scale", "random"], default="scale",
                        help="every link's mass and inertia x1.1, or each link's by a factor in [0.9, 1.1] (seeded)")
    parser.add_argument("--seed", type=int, default=0, help="the noise, the random model and the motion")
    parser.add_argument("--gain", type=float, nargs="+", default=[100.0, 200.0],
                        help="K_O [1/s] of the observer, each over the same runs")
    parser.add_argument("--step", type=float, default=0.1, help="the step, a fraction of the joint's effort limit")
    parser.add_argument("--step-at", type=float, nargs="+", default=[0.5, 1.0, 1.5], help="the step's instants [s]")
    parser.add_argument("--minutes", type=float, default=10.0, help="collision-free motion [min]")
    parser.add_argument("--segment", type=float, default=60.0, help="seconds per excitation segment")
    parser.add_argument("--frequency", type=float, default=0.2, help="the excitations' fundamental [Hz]")
    parser.add_argument("--maxiter", type=int, default=10, help="design_excitation's iterations per segment")
    parser.add_argument("--position-noise", type=float, default=1e-5, help="[rad]")
    parser.add_argument("--velocity-noise", type=float, default=1e-3, help="[rad/s]")
    parser.add_argument("--coulomb-smoothing", type=float, default=0.02,
                        help="v_s [rad/s] of the plant's and the observer's Coulomb friction, where there is one")
    parser.add_argument("--fixed", type=float, nargs="+", default=[0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.06],
                        help="fixed parts of the threshold, fractions of each joint's effort limit")
    parser.add_argument("--relative", type=float, nargs="+", default=[0.0, 0.05, 0.1, 0.2],
                        help="relative parts of the threshold")
    parser.add_argument("--plot", default=None, metavar="PNG", help="draw the sweep")
    parser.add_argument("--results", default=None, metavar="JSON", help="write the tables as JSON (atomically)")
    parser.add_argument("--quick", action="store_true",
                        help="the iiwa14, one instant, 20 s of motion, a small sweep")
    args = parser.parse_args(argv)
    if args.quick:
        args.robots, args.step_at, args.minutes, args.segment, args.maxiter = ["iiwa14"], [1.0], 1 / 3, 20.0, 0
        args.fixed, args.relative, args.gain = [0.01, 0.02, 0.04], [0.0, 0.05], [100.0]
    if not (0 < min(args.step_at) and max(args.step_at) < MOVE and args.minutes > 0 and args.segment > 0
            and min(args.gain) > 0 and args.frequency > 0 and min(args.fixed) >= 0 and min(args.relative) >= 0):
        parser.error(f"--step-at in (0, {MOVE:g}), --minutes, --segment, --gain, --frequency > 0, "
                     "--fixed, --relative >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _arguments(argv)
    t0 = time.perf_counter()
    tables, goals, studies = [], [], {}
    for name in args.robots:
        robot_tables, by_gain, lines = study(name, args)
        tables += robot_tables
        goals += lines
        studies.update({(name, gain): v for gain, v in by_gain.items()})
    print()
    for line in goals:
        print(line)
    print(f"in {time.perf_counter() - t0:.1f} s")
    if args.plot:
        plot(args.plot, studies, args)
    if args.results:
        write_results(args.results, "observer_study.py", argv, gains=args.gain, model_error=args.model_error,
                      seconds=round(time.perf_counter() - t0, 1), goals=goals, tables=tables)
    return 0


if __name__ == "__main__":
    sys.exit(main())
