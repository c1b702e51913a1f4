"""``robot-dynamics excite``: an optimised excitation trajectory for identification.

A periodic Fourier series per joint, at rest at the start pose, optimised for the condition
number of the base regressor within the position, velocity, acceleration and effort limits.
Writes ``excitation.csv`` (t, q, qd, qdd at --rate), ``excitation_trajectory.yaml`` (the
trajectory_msgs/JointTrajectory to send to the arm's trajectory controller) and
``excitation.png``.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ._common import CommonOptions, emit, format_table, load_model, output_dir, parse_vector, show_progress


def register(sub: Any, parents: CommonOptions) -> None:
    p = sub.add_parser(
        "excite",
        parents=parents,
        help="optimised excitation trajectory for dynamic identification (CSV, JointTrajectory YAML, PNG)",
        description="Design a periodic Fourier excitation (Swevers; Khalil 7.5.4) minimising the condition "
        "number of the base regressor within the model's limits.",
    )
    p.add_argument("--frequency", type=float, default=0.2, help="fundamental frequency [Hz] (default 0.2)")
    p.add_argument("--harmonics", type=int, default=4, help="number of harmonics (default 4)")
    p.add_argument("--periods", type=int, default=4, help="periods to run (default 4)")
    p.add_argument("--start", help="rest pose, comma list (default: the middle of each joint range)")
    p.add_argument("--margin", type=float, default=0.05, help="fraction of each position range kept free (default 0.05)")
    p.add_argument("--rate", type=float, default=100.0, help="rate of the written table [Hz] (default 100)")
    p.add_argument("--maxiter", type=int, default=40, help="optimiser iterations (default 40)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random start (default 0)")
    p.set_defaults(func=run)


def _check(args: argparse.Namespace) -> None:
    from ..errors import InputError

    for what, v in (("frequency", args.frequency), ("rate", args.rate)):
        if not (np.isfinite(v) and 0 < v <= 1e4):
            raise InputError(f"--{what}: expected a positive number up to 1e4 [Hz], got {v!r}")
    for what, v, lo, hi in (("harmonics", args.harmonics, 2, 20), ("periods", args.periods, 1, 100),
                            ("maxiter", args.maxiter, 0, 1000)):
        if not lo <= v <= hi:
            raise InputError(f"--{what}: expected an integer from {lo} to {hi}, got {v}")
    if not (np.isfinite(args.margin) and 0 <= args.margin < 0.5):
        raise InputError(f"--margin: expected a fraction in [0, 0.5), got {args.margin!r}")
    if args.periods / args.frequency * args.rate > 2e6:
        raise InputError("--rate x duration: more than 2,000,000 rows; lower --rate or --periods")


def joint_trajectory_document(names: list[str], t: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> dict[str, Any]:
    """trajectory_msgs/JointTrajectory fields as YAML-ready data (``ros2 action send_goal`` takes
    ``{trajectory: <this>}`` for a FollowJointTrajectory controller)."""
    points = []
    for k in range(t.size):
        sec = int(np.floor(t[k]))
        points.append({
            "positions": [float(x) for x in q[k]],
            "velocities": [float(x) for x in qd[k]],
            "accelerations": [float(x) for x in qdd[k]],
            "time_from_start": {"sec": sec, "nanosec": int(round((t[k] - sec) * 1e9)) % 1_000_000_000},
        })
    return {"joint_names": list(names), "points": points}


def run(args: argparse.Namespace) -> int:
    import yaml

    from ..identification import FourierExcitation, design_excitation, write_csv
    from ..identification.report import plot_excitation
    from ..trajectory import sample_table
    from ._common import write_atomic

    _check(args)
    model = load_model(args)
    q0 = None if args.start is None else parse_vector(args.start, model.nq, "start", model.joint_names)
    design = design_excitation(model, q0=q0, frequency=args.frequency, harmonics=args.harmonics, periods=1,
                               margin=args.margin, seed=args.seed, maxiter=args.maxiter, progress=show_progress(args))
    one = design.trajectory
    traj = FourierExcitation(one.q0, one.frequency, one.a, one.b, periods=args.periods)
    out = output_dir(args)
    t, q, qd, qdd = sample_table(traj, args.rate)
    files = [write_csv(out / "excitation.csv", model.joint_names, t, q, qd=qd, qdd=qdd)]
    doc = joint_trajectory_document(list(model.joint_names), t, q, qd, qdd)
    files.append(write_atomic(out / "excitation_trajectory.yaml", yaml.safe_dump(doc, sort_keys=False)))
    files.append(plot_excitation(design, model.joint_names, out / "excitation.png"))
    usage = {k: v.tolist() for k, v in design.usage.items()}
    data = {
        "robot": model.name,
        "frequency": one.frequency,
        "harmonics": one.harmonics,
        "periods": args.periods,
        "duration": traj.duration,
        "condition_number": design.condition,
        "random_start_condition_number": design.initial_condition,
        "limit_usage": usage,
        "coefficients_a": one.a.tolist(),
        "coefficients_b": one.b.tolist(),
        "start": one.q0.tolist(),
        "files": [str(f) for f in files],
    }

    def text() -> str:
        rows = [[name] + [float(design.usage[k][j]) for k in ("position", "velocity", "acceleration", "effort")]
                for j, name in enumerate(model.joint_names)]
        return "\n".join([
            f"excitation for {model.name}: {one.harmonics} harmonics of {one.frequency:g} Hz, {args.periods} periods "
            f"({traj.duration:g} s), at rest at the start and at the end of every period",
            f"condition number of the base regressor: {design.condition:.1f} (random start {design.initial_condition:.1f})",
            "peak use of each limit (1 = at the limit):",
            format_table(["joint", "position", "velocity", "acceleration", "effort"], rows),
            "wrote " + ", ".join(str(f) for f in files),
        ])

    emit(args, data, text)
    return 0
