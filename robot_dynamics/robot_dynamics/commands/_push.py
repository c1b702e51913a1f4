"""``robot-dynamics simulate --push FORCE``: a push at the tool of the moving arm, and the momentum
observer that feels it.

A wrench (--push, --push-moment) pushes --push-frame (default: the tool) from --push-at for
--push-time while ``simulate`` runs its move; a :class:`~robot_dynamics.observers.MomentumObserver`
on the same model runs on the recorded motion and torques. ``simulate`` then also prints the
detection (instant, delay, isolated joint, false alarms), the force estimated at the end of the
push and per joint the residual against the true external torque, and writes beside its own files:

* ``push_<robot>.png``: per joint the residual, the true external torque, the threshold and
  the detection instant;
* ``push_<robot>.csv`` with --csv: t, then per joint the true external torque, the residual and
  the threshold, and the collision flag.

The run itself (the push included) is ``simulate``'s recording.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..errors import InputError
from ._common import format_table, output_dir, parse_vector, write_csv

#: The plant's and the observer's Coulomb smoothing with --push when --coulomb-smoothing is not
#: given [rad/s]: the simulated plant's exact sign chatters at rest from one RK4 step to the next,
#: which no observer sampled at the ticks can follow.
PUSH_COULOMB_SMOOTHING = 0.02


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The push group of ``simulate``'s options."""
    g = p.add_argument_group("push (the momentum observer)")
    g.add_argument("--push", metavar="FORCE", help="push the tool with this force, base axes [N], comma list, e.g. "
                   "-30,20,-20; the momentum observer runs on the run and push_<robot>.png shows its residual")
    g.add_argument("--push-moment", default="0,0,0", help="moment of the push, base axes [N m] (default 0,0,0)")
    g.add_argument("--push-frame", help="the frame pushed (default: the tool, the tip of the longest chain)")
    g.add_argument("--push-at", type=float, default=0.6, help="start of the push [s] (default 0.6)")
    g.add_argument("--push-time", type=float, default=0.2, help="its duration [s] (default 0.2)")
    g.add_argument("--observer-gain", type=float, default=None, help="K_O [1/s] (default the observer's, 100)")
    g.add_argument("--observer-threshold", help="fixed part of the threshold [N m], a number or nq values "
                                                "(default 2 %% of each effort limit)")
    g.add_argument("--observer-relative", type=float, default=None, help="part of the threshold that grows with "
                                                                         "the model torque (default 0.05)")


def prepare(args: argparse.Namespace) -> None:
    """Before simulate's own checks: the push's checks, and its Coulomb smoothing's default."""
    if args.push is None:
        return
    if args.coulomb_smoothing is None:
        args.coulomb_smoothing = PUSH_COULOMB_SMOOTHING
    for what, v, low in (("push-at", args.push_at, -1.0), ("push-time", args.push_time, 0.0)):
        if not (np.isfinite(v) and v > low and v >= 0):
            raise InputError(f"--{what}: expected a {'positive ' if low == 0.0 else ''}number of seconds, got {v!r}")
    if args.push_at + args.push_time > args.move_time + args.settle:
        raise InputError(f"--push-at + --push-time: the push ends at {args.push_at + args.push_time:g} s, after the "
                         f"run's {args.move_time + args.settle:g} s (--move-time + --settle)")


def external_wrench(args: argparse.Namespace, model: Any) -> Any:
    """The push as the simulation's :class:`~robot_dynamics.simulation.ExternalWrench`, or None."""
    if args.push is None:
        return None
    from ..simulation import ExternalWrench

    args.push_frame = model.moving_frame(args.push_frame) if args.push_frame else model.end_effector
    wrench = np.concatenate([parse_vector(args.push, 3, "push"), parse_vector(args.push_moment, 3, "push-moment")])
    args.push_wrench = wrench
    t0, t1, zero = args.push_at, args.push_at + args.push_time, np.zeros(6)
    return ExternalWrench(args.push_frame, lambda t: wrench if t0 <= t < t1 else zero)


def _observer(args: argparse.Namespace, model: Any) -> Any:
    from ..observers import MomentumObserver

    options: dict[str, Any] = {"coulomb_smoothing": args.coulomb_smoothing}
    if args.observer_gain is not None:
        options["gain"] = args.observer_gain
    if args.observer_relative is not None:
        options["relative"] = args.observer_relative
    if args.observer_threshold is not None:
        one = "," not in args.observer_threshold
        values = parse_vector(args.observer_threshold, 1 if one else model.nq, "observer-threshold", model.joint_names)
        options["threshold"] = values[0] if one else values
    return MomentumObserver(model, **options)


def _observe(args: argparse.Namespace, model: Any, result: Any) -> dict[str, Any]:
    """The observer over the run: residual, threshold, collision and isolated joint per tick, and
    the wrench it estimates at the push's last tick (a force at the frame's origin when the push
    has no moment: [force; 0])."""
    obs = _observer(args, model)
    K, n = result.t.size, model.nq
    r, th, hit = np.empty((K, n)), np.empty((K, n)), np.zeros(K, dtype=bool)
    joints: list[str | None] = []
    last = int(np.searchsorted(result.t, args.push_at + args.push_time)) - 1
    point_force = not np.any(args.push_wrench[3:])
    estimate = np.full(6, np.nan)
    for k in range(K):
        out = obs.update(float(result.t[k]), result.q[k], result.qd[k], result.tau[k])
        r[k], th[k], hit[k] = out.external_torque, out.threshold, out.collision
        joints.append(out.joint)
        if k == last:
            estimate = np.concatenate([obs.wrench(args.push_frame, point_force=True), np.zeros(3)]) if point_force \
                else obs.wrench(args.push_frame)
    return {"residual": r, "threshold": th, "collision": hit, "joints": joints, "wrench": estimate, "last": last,
            "gain": obs.gain}


def true_torque(result: Any) -> np.ndarray:
    """The external joint torque over each period [t_(k-1), t_k], which the residual at t_k follows:
    the log's disturbance of tick k - 1 (held over that period); zero before the first tick."""
    return np.vstack([np.zeros((1, result.disturbance.shape[1])), result.disturbance[:-1]])


def observe(args: argparse.Namespace, model: Any, result: Any) -> tuple[dict[str, Any], dict[str, str]]:
    """The observer over a pushed run: the push's summary (for --json and the text) and its files."""
    seen = _observe(args, model, result)
    t, hit, last = result.t, seen["collision"], seen["last"]
    after = hit & (t >= args.push_at)
    first = int(np.argmax(after)) if after.any() else None
    detected = None if first is None else float(t[first])
    true = true_torque(result)
    summary = {
        "frame": args.push_frame, "wrench": args.push_wrench, "push_at": args.push_at, "push_time": args.push_time,
        "gain": seen["gain"], "detected": detected, "delay": None if detected is None else detected - args.push_at,
        "first_joint": None if first is None else seen["joints"][first], "joint": seen["joints"][last],
        "false_alarms": int(np.count_nonzero(hit & (t < args.push_at))),
        "estimated_wrench": seen["wrench"], "peak_external_torque": np.abs(result.disturbance).max(axis=0),
        "external_torque_at_end": true[last], "residual_at_end": seen["residual"][last],
    }
    return summary, _write_files(args, model, result, seen, detected)


def _write_files(args: argparse.Namespace, model: Any, result: Any, seen: dict[str, Any],
                 detected: float | None) -> dict[str, str]:
    from ..io import plot_residual

    out = output_dir(args)
    stem = f"push_{model.name}"
    files: dict[str, str] = {}
    true = true_torque(result)
    names = list(model.joint_names)
    if not args.no_plot:
        force = float(np.linalg.norm(args.push_wrench[:3]))
        title = (f"{model.name}: a push of {force:.3g} N at {args.push_frame}, momentum observer "
                 f"K_O = {float(seen['gain'].max()):g} /s at {args.rate:g} Hz")
        files["push plot"] = str(plot_residual(result.t, seen["residual"], true, seen["threshold"], names,
                                               out / f"{stem}.png", detected=detected,
                                               window=(args.push_at, args.push_at + args.push_time), title=title))
    if args.csv:
        header = ["t", *(f"tau_ext_{n}" for n in names), *(f"residual_{n}" for n in names),
                  *(f"threshold_{n}" for n in names), "collision"]
        files["push csv"] = write_csv(out / f"{stem}.csv", header,
                                      [result.t, true, seen["residual"], seen["threshold"], seen["collision"].astype(float)])
    return files


def report_lines(push: dict[str, Any], joint_names: list[str]) -> list[str]:
    """The push's part of simulate's text report."""
    w = push["wrench"]
    lines = [f"push: {np.linalg.norm(w[:3]):.3g} N and {np.linalg.norm(w[3:]):.3g} N m at {push['frame']} from "
             f"t = {push['push_at']:g} s for {push['push_time']:g} s"]
    if push["detected"] is None:
        lines.append("  not detected: lower --observer-threshold or --observer-relative, or push harder")
    else:
        lines.append(f"  detected at t = {push['detected']:.4f} s ({1e3 * push['delay']:.1f} ms after the push began) "
                     f"on {push['first_joint']}; isolated joint at the push's end: {push['joint']}")
    lines.append(f"  false alarms before the push: {push['false_alarms']} ticks")
    e = push["estimated_wrench"]
    lines.append(f"  at the push's end: estimated force {np.array2string(e[:3], precision=2)} N, moment "
                 f"{np.array2string(e[3:], precision=2)} N m; true {np.array2string(w[:3], precision=2)} N, "
                 f"{np.array2string(w[3:], precision=2)} N m")
    rows = [[n, float(push["peak_external_torque"][i]), float(push["external_torque_at_end"][i]),
             float(push["residual_at_end"][i])] for i, n in enumerate(joint_names)]
    lines.append(format_table(["joint", "peak |tau_ext|", "tau_ext at the end", "residual at the end"], rows))
    return lines
