"""``robot-dynamics simulate``: closed-loop simulation of a move, with a plot and a rosbag2 recording.

With no argument: the default robot moves every joint by 0.5 rad (inside its limits) along a
quintic law in 1 s under computed torque control (omega = 20 rad/s, xi = 1) at 1 kHz,
settles for 0.5 s, prints the tracking summary and writes into --out (default
./robot_dynamics_out):

* ``simulate_<robot>.png``: reference vs actual, error and torques per joint;
* ``simulate_<robot>/``: a rosbag2 folder with MCAP storage (/joint_states, /reference,
  /tf, /tf_static, /robot_description) for ``ros2 bag play`` and Foxglove;
* ``simulate_<robot>.csv`` with --csv.

With --push FORCE a wrench pushes the tool during the move and the momentum observer runs on the
run: its detection is reported and ``push_<robot>.png`` written (see ``_push.py``).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from ..control.base import DEFAULT_OMEGA
from ..errors import InputError
from ..simulation.options import MAX_TICKS, Integration
from . import _push
from ._common import check_steps, default_displacement, emit, format_table, load_model, output_dir, parse_vector, task_start_pose

#: --controller choices.
CONTROLLERS = (
    "computed-torque",
    "predictive",
    "position",
    "pd-gravity",
    "pid",
    "lqr",
    "task-computed-torque",
    "task-pid",
    "cartesian-impedance",
    "operational-space",
)
#: The --controller choices that follow a task-space motion of --frame.
TASK_CONTROLLERS = ("task-computed-torque", "task-pid", "cartesian-impedance", "operational-space")

#: --max-ticks' default: a run the CLI finishes in a few seconds (about 5,000-6,000 ticks/s for
#: computed torque on the PUMA 560, RK4, 2 cores); a longer run is asked for explicitly.
DEFAULT_MAX_TICKS = 20_000


#: --coulomb-smoothing's default with an adaptive integrator [rad/s]: the exact sign of a joint at
#: rest flips at every step however short, and the step size collapses at t = 0; smoothed over
#: 1 mrad/s, RK45, DOP853, LSODA and BDF run the default move (the rk4 result, within 2e-4 rad).
ADAPTIVE_COULOMB_SMOOTHING = 1e-3

#: The rate of /tf in the recording by default [Hz]: rviz draws at 30-60 Hz; the joint states keep
#: the simulation's rate.
TF_RATE = 100.0


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "simulate",
        parents=parents,
        help="closed-loop simulation of a move: summary table, PNG plot, rosbag2 (MCAP) recording",
        description="Simulate a controller driving the robot along a point-to-point move. "
        "Writes a PNG figure and a rosbag2 (MCAP) recording into --out.",
    )
    g = p.add_argument_group("motion")
    g.add_argument("--profile", default="quintic", help="time law of the move (quintic, trapezoidal, cubic, ...; default quintic)")
    g.add_argument("--start", help="start joint positions, comma list (default: zeros, or a bent pose for task-space control; clipped to the limits)")
    g.add_argument("--goal", help="goal joint positions (default: start + 0.5, -0.4, 0.3, 0.8, -0.6, 1.0, ... rad, "
                                  "inside the limits)")
    g.add_argument("--move-time", type=float, default=1.0, help="duration of the move [s] (default 1.0)")
    g.add_argument("--settle", type=float, default=0.5, help="time simulated after the move [s] (default 0.5)")
    g.add_argument("--offset", type=float, default=0.0, help="initial position error added to every joint [rad]")
    g = p.add_argument_group("controller")
    g.add_argument("--controller", default="computed-torque", choices=CONTROLLERS, help="control law (default computed-torque)")
    g.add_argument("--frame", help="controlled frame of the task-space laws (default: the tip of the longest moving chain)")
    g.add_argument("--omega", type=float, default=DEFAULT_OMEGA,
                   help=f"closed-loop bandwidth [rad/s] (default {DEFAULT_OMEGA:g})")
    g.add_argument("--xi", type=float, default=1.0, help="damping ratio (default 1)")
    g.add_argument("--rate", type=float, default=1000.0, help="controller rate [Hz] (default 1000)")
    g.add_argument("--max-ticks", type=int, default=DEFAULT_MAX_TICKS,
                   help=f"most controller ticks a run may take, a bound before any work (default {DEFAULT_MAX_TICKS:,}: "
                        f"{DEFAULT_MAX_TICKS // 1000} s at 1 kHz, a few seconds of computing; at most {MAX_TICKS:,}, "
                        "the simulation's own limit)")
    g.add_argument("--lqr-q", metavar="Q", help="LQR state weights, the diagonal of Q: nq position then nq velocity "
                   "weights, comma list (default: the bandwidth design from --omega and --xi)")
    g.add_argument("--lqr-r", metavar="R", help="LQR torque weights, the diagonal of R: nq values, comma list "
                   "(default: M(q^d)^-2, which weighs the commanded acceleration)")
    g.add_argument("--relinearize-period", type=float, default=0.05,
                   help="LQR: time between refreshes of the gain about the moving reference [s] (default 0.05)")
    g.add_argument("--mass-error", type=float, default=0.0, help="relative error of the controller's link masses and inertias, e.g. 0.2")
    g = p.add_argument_group("plant")
    g.add_argument("--integrator", default="rk4", help="rk4 (fixed step) or a scipy solve_ivp method: RK45, DOP853, LSODA, ...")
    g.add_argument("--coulomb-smoothing", type=float, default=None, metavar="V",
                   help="velocity scale v_s [rad/s] of the plant's Coulomb friction, Fc tanh(qd / v_s) instead of Fc sign(qd) "
                        f"(0: the sign; default 0 with rk4, {ADAPTIVE_COULOMB_SMOOTHING:g} with an adaptive integrator, "
                        "which cannot step across the sign's switch while a joint is at rest)")
    g.add_argument("--max-evaluations", type=int, default=Integration.max_evaluations, metavar="N",
                   help="most plant evaluations an adaptive integrator may make over one controller period before the "
                        f"run stops (default {Integration.max_evaluations:,})")
    g.add_argument("--noise", type=float, default=0.0, help="std of the position measurement noise [rad]")
    g.add_argument("--disturbance", help="constant joint torque disturbance, comma list [N m]")
    g = p.add_argument_group("files")
    g.add_argument("--no-plot", action="store_true", help="do not write the PNG")
    g.add_argument("--no-bag", action="store_true", help="do not write the rosbag2 recording")
    g.add_argument("--csv", action="store_true", help="also write the run as CSV")
    g.add_argument("--tf-every", type=int, default=None,
                   help="write /tf every N ticks (default: at 100 Hz, what rviz shows; 1: every tick)")
    _push.add_arguments(p)
    p.set_defaults(func=run)


def _default_move(model: Any, start_text: str | None, goal_text: str | None, task: bool = False) -> tuple[np.ndarray, np.ndarray]:
    lo = np.where(np.isfinite(model.lower), model.lower, -np.inf)
    hi = np.where(np.isfinite(model.upper), model.upper, np.inf)
    if start_text is None:
        start = task_start_pose(model) if task else np.clip(np.zeros(model.nq), lo, hi)
    else:
        start = parse_vector(start_text, model.nq, "start", model.joint_names)
    if goal_text is None:
        prismatic = np.array([model.joint_type[model.body_joint_names.index(j)] == "prismatic" for j in model.joint_names])
        step = default_displacement(model.nq) * np.where(prismatic, 0.2, 1.0)
        there = start + step
        inside = (there >= lo) & (there <= hi)
        goal = np.clip(np.where(inside, there, start - step), lo, hi)  # the other way where a limit is near
    else:
        goal = parse_vector(goal_text, model.nq, "goal", model.joint_names)
    for what, v in (("start", start), ("goal", goal)):
        if np.any(v < lo - 1e-12) or np.any(v > hi + 1e-12):
            bad = [model.joint_names[i] for i in np.flatnonzero((v < lo - 1e-12) | (v > hi + 1e-12))]
            raise InputError(f"--{what}: outside the joint limits on {bad}")
    return start, goal


def _controller(args: argparse.Namespace, ctrl_model: Any) -> Any:
    from ..control import build_controller

    frame = getattr(args, "frame", None)

    kind = args.controller
    if kind == "lqr":
        # the discrete Riccati design at the simulated controller's rate
        n = ctrl_model.nq
        options: dict[str, Any] = {"rate": getattr(args, "rate", None),
                                   "relinearize_period": getattr(args, "relinearize_period", 0.05)}
        if getattr(args, "lqr_q", None) is not None:
            names = [f"q:{j}" for j in ctrl_model.joint_names] + [f"qd:{j}" for j in ctrl_model.joint_names]
            options["Q"] = parse_vector(args.lqr_q, 2 * n, "lqr-q", names)
        if getattr(args, "lqr_r", None) is not None:
            options["R"] = parse_vector(args.lqr_r, n, "lqr-r", ctrl_model.joint_names)
        return build_controller(ctrl_model, "lqr", omega=args.omega, xi=args.xi, **options)
    if kind in ("computed-torque", "predictive", "position"):
        return build_controller(ctrl_model, "computed_torque", omega=args.omega, xi=args.xi,
                                scheme="position" if kind == "position" else "tracking",
                                predictive=kind == "predictive", friction_velocity="desired")
    # The task PID on the command line is stiffer than the bandwidth design's unit task mass:
    # 2000 N/m holds the default arms' tools against gravity and friction within millimetres.
    kp = 2000.0 if kind == "task-pid" else None
    kd = 2.0 * args.xi * np.sqrt(2000.0) if kind == "task-pid" else None
    return build_controller(ctrl_model, kind, kp=kp, kd=kd, ki=0.0 if kind == "task-pid" else None,
                            omega=args.omega, xi=args.xi, frame=frame)


def _task_error_rows(result: Any) -> list[list[Any]]:
    """Per base axis x, y, z of the controlled frame's position error x^d - x [m]: rms, max |.|,
    final; the last row is the distance |x^d - x|."""
    e = result.x_ref - result.x
    d = np.linalg.norm(e, axis=1)
    rows: list[list[Any]] = [[axis, float(np.sqrt(np.mean(e[:, i] ** 2))), float(np.max(np.abs(e[:, i]))), float(e[-1, i])]
                             for i, axis in enumerate("xyz")]
    rows.append(["|x^d - x|", float(np.sqrt(np.mean(d**2))), float(np.max(d)), float(d[-1])])
    return rows


def run(args: argparse.Namespace) -> int:
    from ..simulation import Logging, Noise, PlantOptions, Simulation, SimulationOptions

    model = load_model(args)
    _push.prepare(args)
    _check_options(args)
    push = _push.external_wrench(args, model)
    frame = model.moving_frame(args.frame) if args.controller in TASK_CONTROLLERS else None
    start, goal = _default_move(model, args.start, args.goal, task=args.controller in TASK_CONTROLLERS)
    disturbance = None if args.disturbance is None else parse_vector(args.disturbance, model.nq, "disturbance", model.joint_names)

    f = 1.0 + args.mass_error
    ctrl_model = model if args.mass_error == 0 else model.replace(mass=model.mass * f, inertia_com=model.inertia_com * f)
    controller = _controller(args, ctrl_model)
    task = args.controller in TASK_CONTROLLERS
    reference = _reference(args, model, start, goal, frame, task)
    q0 = start + args.offset
    wall = time.perf_counter()
    options = SimulationOptions(integration=Integration(rate=args.rate, integrator=args.integrator,
                                                        max_evaluations=args.max_evaluations),
                                plant=PlantOptions(coulomb_smoothing=args.coulomb_smoothing),
                                noise=Noise(position=args.noise, disturbance=disturbance, wrench=push),
                                logging=Logging(progress=None, max_ticks=args.max_ticks))  # a bar: a long run, on a terminal
    sim = Simulation(model, controller, reference, args.move_time + args.settle, options)
    sim.reset(q0)
    result = sim.run()
    wall = time.perf_counter() - wall

    files = _write_files(args, model, result, task)
    pushed, push_files = _push.observe(args, model, result) if push is not None else (None, {})
    files.update(push_files)
    m = result.metrics
    data = {
        "robot": model.name,
        "controller": result.controller,
        "profile": args.profile,
        "control_rate": args.rate,
        "integrator": args.integrator,
        "coulomb_smoothing": args.coulomb_smoothing,
        "duration": float(result.t[-1]),
        "ticks": int(result.t.size),
        "wall_time": wall,
        "joint_names": list(model.joint_names),
        "start": start,
        "goal": goal,
        "mass_error": args.mass_error,
        "metrics": m.as_dict(),
        "messages": [{"t": t, "message": msg} for t, msg in result.messages],
        "files": files,
    }
    if pushed is not None:
        data["push"] = pushed
    emit(args, data, lambda: _report_text(args, model, result, wall, files, task, pushed))
    return 1 if m.diverged else 0


def _check_options(args: argparse.Namespace) -> None:
    """InputError for an option out of its range, before any work; --tf-every defaults to the
    simulation rate over :data:`TF_RATE` (set on ``args``)."""
    from ..simulation import INTEGRATORS
    from ..trajectory import PROFILES

    if args.profile not in PROFILES:
        raise InputError(f"--profile: expected one of {list(PROFILES)}, got {args.profile!r}")
    if args.integrator not in INTEGRATORS:
        raise InputError(f"--integrator: expected one of {list(INTEGRATORS)}, got {args.integrator!r}")
    for what, v, low in (("move-time", args.move_time, 0.0), ("rate", args.rate, 0.0), ("omega", args.omega, 0.0), ("xi", args.xi, 0.0)):
        if not (np.isfinite(v) and v > low):
            raise InputError(f"--{what}: expected a positive number, got {v!r}")
    for what, v in (("settle", args.settle), ("noise", args.noise)):
        if not (np.isfinite(v) and v >= 0):
            raise InputError(f"--{what}: expected a number >= 0, got {v!r}")
    if not (np.isfinite(args.mass_error) and args.mass_error > -1.0):
        raise InputError(f"--mass-error: expected a relative error > -1, got {args.mass_error!r}")
    if not (np.isfinite(args.offset) and abs(args.offset) <= np.pi):
        raise InputError(f"--offset: expected an initial error with |offset| <= pi (half a turn) [rad or m], got {args.offset!r}")
    if not args.relinearize_period >= 0:  # NaN too; inf: the first gain is kept
        raise InputError(f"--relinearize-period: expected a period >= 0 [s], got {args.relinearize_period!r}")
    if not 1 <= args.max_ticks <= MAX_TICKS:
        raise InputError(f"--max-ticks: expected an integer from 1 to {MAX_TICKS:,}, got {args.max_ticks}")
    check_steps(args.move_time + args.settle, 1.0 / args.rate, "--move-time + --settle at --rate",
                limit=args.max_ticks, lift="--max-ticks", most=MAX_TICKS)
    if args.coulomb_smoothing is None:
        args.coulomb_smoothing = 0.0 if args.integrator == "rk4" else ADAPTIVE_COULOMB_SMOOTHING
    if not (np.isfinite(args.coulomb_smoothing) and args.coulomb_smoothing >= 0):
        raise InputError(f"--coulomb-smoothing: expected a velocity >= 0 [rad/s] (0: the exact sign), "
                         f"got {args.coulomb_smoothing!r}")
    if args.max_evaluations < 1:
        raise InputError(f"--max-evaluations: expected an integer >= 1, got {args.max_evaluations}")
    if args.tf_every is None:
        args.tf_every = max(1, int(round(args.rate / TF_RATE)))
    if args.tf_every < 1:
        raise InputError(f"--tf-every: expected an integer >= 1, got {args.tf_every}")


def _reference(args: argparse.Namespace, model: Any, start: np.ndarray, goal: np.ndarray, frame: Any, task: bool) -> Any:
    """The move from ``start`` to ``goal`` (joint positions, shape (nq,) [rad or m]) in
    --move-time: a straight line of ``frame`` for a task-space law, else a joint-space plan."""
    from ..kinematics import frame_pose
    from ..trajectory import cartesian_motion, plan

    if task:
        reference: Any = cartesian_motion(frame_pose(model, start, frame), frame_pose(model, goal, frame),
                                          duration=args.move_time, profile=args.profile)
    else:
        reference = plan(args.profile, start, goal, duration=args.move_time)
    return reference


def _write_files(args: argparse.Namespace, model: Any, result: Any, task: bool) -> dict[str, str]:
    """The plot, the rosbag2 recording and the CSV asked for, into --out: kind -> path."""
    from ..io import plot_simulation, write_rosbag, write_simulation_csv

    out = output_dir(args)
    files: dict[str, str] = {}
    stem = f"simulate_{model.name}"
    if not args.no_plot:
        files["plot"] = str(plot_simulation(result, out / f"{stem}.png", notes=_friction_notes(model, args, task)))
    if not args.no_bag:
        files["rosbag2"] = str(write_rosbag(result, model, out / stem, tf_every=args.tf_every))
    if args.csv:
        files["csv"] = str(write_simulation_csv(result, out / f"{stem}.csv"))
    return files


def _joint_rows(model: Any, m: Any, task: bool) -> tuple[list[str], list[list[Any]]]:
    """(headers, rows) of the per-joint table: errors e = q^d - q [rad or m] (with Khalil
    [9.28]'s predicted rms when known), peak torque [N m or N] and energy [J]."""
    if task:
        # a task reference has no joint path: the joints get their efforts, the frame its error
        headers = ["joint", "peak torque", "energy [J]"]
        rows: list[list[Any]] = [[n, float(m.peak_torque[i]), float(m.energy_per_joint[i])]
                                 for i, n in enumerate(model.joint_names)]
        return headers, rows
    headers = ["joint", "rms error", "max error", "final error", "peak torque", "energy [J]"]
    if m.predicted_rms_error is not None:
        headers.insert(2, "[9.28] rms")
    rows = []
    for i, n in enumerate(model.joint_names):
        row: list[Any] = [n, float(m.rms_error[i]), float(m.max_error[i]), float(m.final_error[i]), float(m.peak_torque[i]), float(m.energy_per_joint[i])]
        if m.predicted_rms_error is not None:
            row.insert(2, float(m.predicted_rms_error[i]))
        rows.append(row)
    return headers, rows


def _report_text(args: argparse.Namespace, model: Any, result: Any, wall: float, files: dict[str, str], task: bool,
                 pushed: dict[str, Any] | None = None) -> str:
    """The text report: the run, the task error (task-space laws), the joint table, energy and
    faults, the first messages, the files written."""
    m = result.metrics
    headers, rows = _joint_rows(model, m, task)
    lines = [
        f"{model.name}: {result.controller} at {args.rate:g} Hz, {args.profile} move of {args.move_time:g} s + {args.settle:g} s, "
        f"{result.t.size} ticks ({args.integrator}) in {wall:.2f} s",
    ]
    if args.coulomb_smoothing > 0 and np.any(np.asarray(model.coulomb) > 0):
        lines.append(f"plant: Coulomb friction smoothed, Fc tanh(qd / {args.coulomb_smoothing:g} rad/s)")
    if args.mass_error:
        lines.append(f"controller model: link masses and inertias x {1.0 + args.mass_error:g} (Khalil [9.28] predicts the error column)")
    if task:
        lines.append(f"task error of {result.frame}: rms {m.task_rms_error:.3g} m, max {m.task_max_error:.3g} m")
        lines.append(format_table(["axis", "rms error [m]", "max error [m]", "final error [m]"], _task_error_rows(result)))
        lines.append("torques [N m or N]")
    else:
        lines.append("errors e = q^d - q [rad or m], torques [N m or N]")
    lines.append(format_table(headers, rows))
    lines.append(
        f"energy {m.energy:.4g} J, saturated {m.saturated_fraction:.1%} of ticks, fault ticks {m.fault_count}"
        + (", PLANT DIVERGED" if m.diverged else "")
    )
    for t, msg in result.messages[:5]:
        lines.append(f"  t = {t:.3f} s: {_in_cli_words(msg)}")
    if _friction_notes(model, args, task):
        lines.append(f"the torque steps at t = 0 and {args.move_time:g} s are Coulomb friction (Khalil [7.26]) switching "
                     "with the sign of the joint velocities as the joints start and stop")
    if pushed is not None:
        lines.extend(_push.report_lines(pushed, list(model.joint_names)))
    for k, v in files.items():
        lines.append(f"{k}: {v}")
    return "\n".join(lines)


#: The library's names of the ways out that a diverged run's message offers, as this command spells them.
_CLI_WORDS = (("coulomb_smoothing > 0", "--coulomb-smoothing V > 0"), ("raise max_evaluations", "raise --max-evaluations"),
              ("the rk4 integrator", "--integrator rk4"))


def _in_cli_words(message: str) -> str:
    """A run's message with the options it names spelt as this command's."""
    for library, cli in _CLI_WORDS:
        message = message.replace(library, cli)
    return message


def _friction_notes(model: Any, args: argparse.Namespace, task: bool) -> list[tuple[float, str]]:
    """Where the torques step because the robot has Coulomb friction (its sign follows the joint
    velocity, Khalil [7.26]): as the joints start and as they stop; none without it."""
    if task or not np.any(np.asarray(model.coulomb) > 0):
        return []
    return [(0.0, "joints start: Coulomb friction switches"),
            (float(args.move_time), "joints stop: Coulomb friction switches")]
