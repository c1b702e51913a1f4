"""``robot-dynamics push``: a push at the tool of a moving arm, and the momentum observer that feels it.

With no argument: the iiwa14 moves from a bent pose under computed torque at 1 kHz (as
``simulate``), a wrench of 40 N pushes its tool from t = 0.6 s for 0.2 s, and a
:class:`~robot_dynamics.observers.MomentumObserver` on the same model runs on the recorded
motion and torques. Prints the detection (instant, delay, isolated joint, false alarms), the
wrench estimated at the end of the push and per joint the residual against the true external
torque, and writes into --out (default ./robot_dynamics_out):

* ``push_<robot>.png``: per joint the residual, the true external torque, the threshold and
  the detection instant;
* ``push_<robot>.csv``: t, then per joint the true external torque, the residual and the
  threshold, and the collision flag;
* ``push_<robot>/``: the run as a rosbag2 folder (MCAP), as ``simulate`` writes it.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..errors import InputError
from ._common import (
    CommonOptions,
    check_steps,
    default_displacement,
    emit,
    format_table,
    load_model,
    output_dir,
    parse_vector,
    task_start_pose,
    write_csv,
)

#: The robot of the example when neither --robot nor --urdf is given.
PUSH_ROBOT = "iiwa14"
#: --coulomb-smoothing's default [rad/s]: the simulated plant's exact sign chatters at rest from
#: one RK4 step to the next, which no observer sampled at the ticks can follow.
COULOMB_SMOOTHING = 0.02


def register(sub: Any, parents: CommonOptions) -> None:
    p = sub.add_parser(
        "push",
        parents=parents,
        help="a push at the tool of a moving arm and the momentum observer that detects it: PNG, CSV, rosbag2",
        description="Simulate a move under computed torque with a wrench pushing a frame of the arm, run the "
        "generalized momentum observer on the recorded motion, and report the detection, the isolated joint and "
        "the estimated wrench (default robot: iiwa14).",
    )
    g = p.add_argument_group("push")
    g.add_argument("--frame", help="the frame pushed (default: the tool, the tip of the longest chain)")
    g.add_argument("--force", default="-30,20,-20", help="force at the frame's origin, base axes [N] (default -30,20,-20)")
    g.add_argument("--moment", default="0,0,0", help="moment, base axes [N m] (default 0,0,0)")
    g.add_argument("--push-at", type=float, default=0.6, help="start of the push [s] (default 0.6)")
    g.add_argument("--push-time", type=float, default=0.2, help="its duration [s] (default 0.2)")
    g.add_argument("--move-time", type=float, default=1.0, help="duration of the move [s] (default 1.0)")
    g.add_argument("--settle", type=float, default=0.5, help="time simulated after the move [s] (default 0.5)")
    g.add_argument("--rate", type=float, default=1000.0, help="controller and observer rate [Hz] (default 1000)")
    g.add_argument("--coulomb-smoothing", type=float, default=COULOMB_SMOOTHING, metavar="V",
                   help="velocity scale v_s [rad/s] of the Coulomb friction Fc tanh(qd / v_s), in the plant and the "
                        f"observer alike (0: the sign; default {COULOMB_SMOOTHING:g})")
    g = p.add_argument_group("observer")
    g.add_argument("--gain", type=float, default=None, help="K_O [1/s] (default the observer's, 100)")
    g.add_argument("--threshold", help="fixed part of the threshold [N m], a number or nq values "
                                       "(default 2 %% of each effort limit)")
    g.add_argument("--relative", type=float, default=None, help="part of the threshold that grows with the model "
                                                                 "torque (default the observer's, 0.05)")
    g.add_argument("--velocity-noise", type=float, default=0.0, help="std of the noise on the velocities the "
                                                                     "controller and the observer read [rad/s]")
    g.add_argument("--seed", type=int, default=0, help="seed of the noise (default 0)")
    g = p.add_argument_group("files")
    g.add_argument("--no-plot", action="store_true", help="do not write the PNG")
    g.add_argument("--no-bag", action="store_true", help="do not write the rosbag2 recording")
    g.add_argument("--no-csv", action="store_true", help="do not write the CSV")
    p.set_defaults(func=run)


def _check(args: argparse.Namespace) -> None:
    for what, v in (("move-time", args.move_time), ("rate", args.rate), ("push-time", args.push_time)):
        if not (np.isfinite(v) and v > 0):
            raise InputError(f"--{what}: expected a positive number, got {v!r}")
    for what, v in (("settle", args.settle), ("push-at", args.push_at), ("velocity-noise", args.velocity_noise),
                    ("coulomb-smoothing", args.coulomb_smoothing)):
        if not (np.isfinite(v) and v >= 0):
            raise InputError(f"--{what}: expected a number >= 0, got {v!r}")
    if args.push_at + args.push_time > args.move_time + args.settle:
        raise InputError(f"--push-at + --push-time: the push ends at {args.push_at + args.push_time:g} s, after the "
                         f"run's {args.move_time + args.settle:g} s (--move-time + --settle)")
    check_steps(args.move_time + args.settle, 1.0 / args.rate, "--move-time + --settle at --rate")


def _observer(args: argparse.Namespace, model: Any) -> Any:
    from ..observers import MomentumObserver

    options: dict[str, Any] = {"coulomb_smoothing": args.coulomb_smoothing}
    if args.gain is not None:
        options["gain"] = args.gain
    if args.relative is not None:
        options["relative"] = args.relative
    if args.threshold is not None:
        parts = args.threshold.split(",")
        options["threshold"] = (parse_vector(args.threshold, model.nq, "threshold", model.joint_names)
                                if len(parts) > 1 else parse_vector(args.threshold, 1, "threshold")[0])
    return MomentumObserver(model, **options)


def _simulate(args: argparse.Namespace, model: Any, frame: str, wrench: np.ndarray) -> Any:
    """The move under computed torque with the push (an ExternalWrench held over each tick)."""
    from ..control import ComputedTorque
    from ..simulation import ExternalWrench, Logging, Noise, PlantOptions, Simulation, SimulationOptions
    from ..simulation.options import Integration
    from ..trajectory import plan

    start = task_start_pose(model)
    goal = np.clip(start + 0.5 * default_displacement(model.nq), np.where(np.isfinite(model.lower), model.lower, -np.inf),
                   np.where(np.isfinite(model.upper), model.upper, np.inf))
    t0, t1 = args.push_at, args.push_at + args.push_time
    zero = np.zeros(6)
    push = ExternalWrench(frame, lambda t: wrench if t0 <= t < t1 else zero)
    options = SimulationOptions(integration=Integration(rate=args.rate),
                                noise=Noise(velocity=args.velocity_noise, wrench=push, seed=args.seed),
                                plant=PlantOptions(coulomb_smoothing=args.coulomb_smoothing),
                                logging=Logging(progress=None))
    sim = Simulation(model, ComputedTorque(model), plan("quintic", start, goal, duration=args.move_time),
                     args.move_time + args.settle, options)
    sim.reset(start)
    return sim.run()


def _observe(args: argparse.Namespace, model: Any, result: Any, frame: str, point_force: bool) -> dict[str, Any]:
    """The observer over the run (its velocities with the noise drawn anew): residual, threshold,
    collision and isolated joint per tick, and the wrench it estimates at the push's last tick (a
    force at the frame's origin with ``point_force``: [force; 0])."""
    obs = _observer(args, model)
    K, n = result.t.size, model.nq
    rng = np.random.default_rng([args.seed, 44])
    qd = result.qd + (rng.normal(0.0, args.velocity_noise, (K, n)) if args.velocity_noise > 0 else 0.0)
    r, th, hit = np.empty((K, n)), np.empty((K, n)), np.zeros(K, dtype=bool)
    joints: list[str | None] = []
    last = int(np.searchsorted(result.t, args.push_at + args.push_time)) - 1
    estimate = np.full(6, np.nan)
    for k in range(K):
        out = obs.update(float(result.t[k]), result.q[k], qd[k], result.tau[k])
        r[k], th[k], hit[k] = out.external_torque, out.threshold, out.collision
        joints.append(out.joint)
        if k == last:
            estimate = np.concatenate([obs.wrench(frame, point_force=True), np.zeros(3)]) if point_force \
                else obs.wrench(frame)
    return {"residual": r, "threshold": th, "collision": hit, "joints": joints, "wrench": estimate, "observer": obs}


def run(args: argparse.Namespace) -> int:
    if not getattr(args, "robot", None) and not getattr(args, "urdf", None):
        args.robot = PUSH_ROBOT
    model = load_model(args)
    _check(args)
    frame = model.moving_frame(args.frame) if args.frame else model.end_effector
    wrench = np.concatenate([parse_vector(args.force, 3, "force"), parse_vector(args.moment, 3, "moment")])
    result = _simulate(args, model, frame, wrench)
    seen = _observe(args, model, result, frame, point_force=not np.any(wrench[3:]))
    t, hit = result.t, seen["collision"]
    during = (t >= args.push_at) & (t < args.push_at + args.push_time)
    after = hit & (t >= args.push_at)
    first = int(np.argmax(after)) if after.any() else None
    detected = None if first is None else float(t[first])
    files = _write_files(args, model, result, seen, detected)
    last = int(np.searchsorted(t, args.push_at + args.push_time)) - 1
    data = {
        "robot": model.name, "frame": frame, "wrench": wrench, "push_at": args.push_at, "push_time": args.push_time,
        "gain": seen["observer"].gain, "detected": detected,
        "delay": None if detected is None else detected - args.push_at,
        "first_joint": None if first is None else seen["joints"][first], "joint": seen["joints"][last],
        "false_alarms": int(np.count_nonzero(hit & ~during & (t < args.push_at))),
        "estimated_wrench": seen["wrench"], "joint_names": list(model.joint_names),
        "peak_external_torque": np.abs(result.disturbance).max(axis=0),
        "external_torque_at_end": _true_torque(result)[last], "residual_at_end": seen["residual"][last],
        "files": files,
    }
    emit(args, data, lambda: _report_text(data))
    return 0 if detected is not None else 1


def _true_torque(result: Any) -> np.ndarray:
    """The external joint torque over each period [t_(k-1), t_k], which the residual at t_k follows:
    the log's disturbance of tick k - 1 (held over that period)."""
    return np.vstack([result.disturbance[:1] * 0.0, result.disturbance[:-1]])


def _write_files(args: argparse.Namespace, model: Any, result: Any, seen: dict[str, Any],
                 detected: float | None) -> dict[str, str]:
    from ..io import plot_residual, write_rosbag

    out = output_dir(args)
    stem = f"push_{model.name}"
    files: dict[str, str] = {}
    true = _true_torque(result)
    names = list(model.joint_names)
    if not args.no_plot:
        force = np.linalg.norm(parse_vector(args.force, 3, "force"))
        title = (f"{model.name}: a push of {force:.3g} N at {args.frame or model.end_effector}, momentum observer "
                 f"K_O = {float(seen['observer'].gain.max()):g} /s at {args.rate:g} Hz")
        files["plot"] = str(plot_residual(result.t, seen["residual"], true, seen["threshold"], names, out / f"{stem}.png",
                                          detected=detected, window=(args.push_at, args.push_at + args.push_time),
                                          title=title))
    if not args.no_csv:
        header = ["t", *(f"tau_ext_{n}" for n in names), *(f"residual_{n}" for n in names),
                  *(f"threshold_{n}" for n in names), "collision"]
        files["csv"] = write_csv(out / f"{stem}.csv", header,
                                 [result.t, true, seen["residual"], seen["threshold"], seen["collision"].astype(float)])
    if not args.no_bag:
        files["rosbag2"] = str(write_rosbag(result, model, out / stem, tf_every=max(1, int(round(args.rate / 100.0)))))
    return files


def _report_text(data: dict[str, Any]) -> str:
    lines = [f"{data['robot']}: a push of {np.linalg.norm(data['wrench'][:3]):.3g} N and "
             f"{np.linalg.norm(data['wrench'][3:]):.3g} N m at {data['frame']} from t = {data['push_at']:g} s "
             f"for {data['push_time']:g} s"]
    if data["detected"] is None:
        lines.append("not detected: lower --threshold or --relative, or push harder")
    else:
        lines.append(f"detected at t = {data['detected']:.4f} s ({1e3 * data['delay']:.1f} ms after the push began) on "
                     f"{data['first_joint']}; isolated joint at the push's end: {data['joint']}")
    lines.append(f"false alarms before the push: {data['false_alarms']} ticks")
    w = data["estimated_wrench"]
    lines.append(f"at the push's end: estimated force {np.array2string(w[:3], precision=2)} N, moment "
                 f"{np.array2string(w[3:], precision=2)} N m; true {np.array2string(data['wrench'][:3], precision=2)} N, "
                 f"{np.array2string(data['wrench'][3:], precision=2)} N m")
    rows = [[n, float(data["peak_external_torque"][i]), float(data["external_torque_at_end"][i]),
             float(data["residual_at_end"][i])] for i, n in enumerate(data["joint_names"])]
    lines.append(format_table(["joint", "peak |tau_ext|", "tau_ext at the end", "residual at the end"], rows))
    lines.extend(f"{kind}: {path}" for kind, path in data["files"].items())
    return "\n".join(lines)
