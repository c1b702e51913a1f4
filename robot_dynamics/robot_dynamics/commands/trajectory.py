"""``robot-dynamics trajectory``: plan a joint or task-space trajectory, print its duration and
peaks, write a CSV table (t, q, qd, qdd) and a PNG of position/velocity/acceleration."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..io import save_figure
from ._common import default_displacement, emit, format_table, load_model, output_dir, parse_vector, task_start_pose, write_atomic



#: Most rows of the written table (trajectory.csv): a bound before any sampling, so that the
#: command answers in seconds (1,000,000 rows took 13-29 s to format and write on 2 loaded cores).
MAX_TABLE_ROWS = 200_000


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    from ..trajectory.planning import DEFAULT_JERK_PER_ACCELERATION
    from ..trajectory.splines import SPLINES
    from ..trajectory.synchronization import PROFILES

    p = sub.add_parser(
        "trajectory",
        parents=parents,
        help="plan a point-to-point or via-point trajectory (minimum time by default); CSV + PNG",
        description="Joint-space profiles (Khalil chapter 8: linear, cubic, quintic, bang_bang, trapezoidal, "
        "continuous_acceleration; double_s; splines through --via points) or a task-space straight line "
        "(--cartesian, --rotation). Limits default from the URDF (velocity) and effort / max inertia "
        "(acceleration). Writes trajectory.csv and trajectory.png into --out.",
    )
    p.add_argument("--profile", "-p", default="trapezoidal", choices=[*PROFILES, *SPLINES], help="time law (default trapezoidal: the minimum-time law under the velocity and acceleration "
                        "limits, the job of this command; `simulate` follows a quintic of a given --move-time)")
    p.add_argument("--start", help="start joint positions, comma list (default zeros, inside the limits)")
    p.add_argument("--goal", help="goal joint positions (default: start + 0.5, -0.4, 0.3, 0.8, -0.6, 1.0, ... rad, inside the limits)")
    p.add_argument("--via", action="append", default=[], help="via point for the splines, comma list; repeat in order")
    p.add_argument("--velocity", help="joint velocity limits kv, one value or a comma list (default URDF)")
    p.add_argument("--acceleration", help="joint acceleration limits ka (default: Khalil's estimate of what the "
                                          "motors can give, effort / max inertia, often far above a data sheet's; "
                                          "the torque scaling then keeps the efforts within limits)")
    p.add_argument("--jerk", help=f"joint jerk limits for double_s (default {DEFAULT_JERK_PER_ACCELERATION:g} x ka)")
    p.add_argument("--duration", type=float, help="total time [s] instead of the minimum time")
    p.add_argument("--rate", type=float, default=100.0, help="sampling rate of the table [Hz] (default 100)")
    p.add_argument("--no-sync", action="store_true", help="each joint in its own minimum time (no synchronisation)")
    p.add_argument("--torque-scaling", dest="torque_scaling", action="store_true", default=None,
                   help="slow down until |tau| <= effort limits (rnea); the default unless --duration is given")
    p.add_argument("--no-torque-scaling", dest="torque_scaling", action="store_false",
                   help="keep the kinematic minimum time even where it exceeds the effort limits")
    g = p.add_argument_group("task space (Khalil 8.4): straight line + rotation about one axis from the start pose")
    g.add_argument("--cartesian", help="translation dx,dy,dz [m] of the end effector in base axes")
    g.add_argument("--frame", help="the moved frame (default: the tip of the longest moving chain)")
    g.add_argument("--rotation", help="rotation ux,uy,uz,angle_deg about an axis of the end-effector frame")
    g.add_argument("--linear-velocity", type=float, default=0.25, help="[m/s] (default 0.25)")
    g.add_argument("--linear-acceleration", type=float, default=1.0, help="[m/s^2] (default 1)")
    g.add_argument("--angular-velocity", type=float, default=1.0, help="[rad/s] (default 1)")
    g.add_argument("--angular-acceleration", type=float, default=2.0, help="[rad/s^2] (default 2)")
    g.add_argument("--orientation", choices=("axis", "euler", "rpy"), default="axis",
                   help="orientation interpolation: about one axis [8.54] (default), Khalil's Euler angles "
                        "[8.55] or roll-pitch-yaw; angular limits per angle for the last two")
    p.add_argument("--no-plot", action="store_true", help="do not write the PNG")
    p.set_defaults(func=run)


def _limits(text: str | None, n: int, what: str, default: np.ndarray) -> np.ndarray:
    if text is None:
        return default
    parts = [s for s in text.replace(" ", ",").split(",") if s]
    if len(parts) == 1:
        return parse_vector(parts[0], 1, what) * np.ones(n)
    return parse_vector(text, n, what)


def run(args: argparse.Namespace) -> int:
    from ..errors import InputError
    from ..trajectory import DEFAULT_JERK_PER_ACCELERATION, PROFILES, Trajectory, model_limits, plan, sample_table

    model = load_model(args)
    n, names = model.nq, model.joint_names
    task = args.cartesian is not None or args.rotation is not None
    start, goal = _start_goal(args, model, task)
    kv_m, ka_m = model_limits(model)
    kv = _limits(args.velocity, n, "velocity", kv_m)
    ka = _limits(args.acceleration, n, "acceleration", ka_m)
    kj = _limits(args.jerk, n, "jerk", DEFAULT_JERK_PER_ACCELERATION * ka)
    if not np.isfinite(args.rate) or args.rate <= 0:
        raise InputError(f"--rate: expected a rate > 0 Hz, got {args.rate}")
    info: dict[str, Any] = {"robot": model.name, "profile": args.profile}
    traj: Trajectory

    if task:
        traj, goal = _task_space_trajectory(args, model, start, info)
    elif args.profile in PROFILES:
        if args.via:
            raise InputError("--via: via points need a spline profile (cubic_spline, quintic_spline, trigonometric_spline)")
        traj = plan(args.profile, start, goal, kv, ka, kj, args.duration, synchronize=not args.no_sync, model=model)
    else:
        traj = _spline_trajectory(args, model, start, goal, kv, ka, info)

    traj, tcheck = _torque_limited(args, model, traj)
    t, q, qd, qdd = sample_table(traj, args.rate)
    vpk, apk = np.max(np.abs(qd), axis=0), np.max(np.abs(qdd), axis=0)
    tau_pk = np.max(np.abs(tcheck.tau), axis=0)
    rows = [
        [names[j], start[j], goal[j], vpk[j], kv[j], apk[j], ka[j], tau_pk[j], model.effort_limit[j]]
        for j in range(n)
    ]
    out = output_dir(args)
    csv_path = _write_csv(out / "trajectory.csv", names, t, q, qd, qdd)
    png_path = None if args.no_plot else _plot_fine(out / "trajectory.png", traj, names, f"{model.name}: {args.profile}")
    info.update(
        duration=traj.duration,
        samples=int(t.size),
        rate=args.rate,
        joints=[
            dict(zip(["name", "start", "goal", "peak_velocity", "velocity_limit", "peak_acceleration",
                      "acceleration_limit", "peak_torque", "effort_limit"], r))
            for r in rows
        ],
        torque_ratio=tcheck.ratio,
        torque_feasible=tcheck.feasible,
        csv=str(csv_path),
        png=None if png_path is None else str(png_path),
    )

    def text() -> str:
        head = f"{model.name}: {args.profile} trajectory, duration {traj.duration:.4f} s, {t.size} samples at {args.rate:g} Hz"
        torque = (
            f"peak |tau| / effort = {tcheck.ratio:.3f} at t={tcheck.time:.3f} s ({tcheck.joint}): "
            + ("within the effort limits" if tcheck.feasible else "EXCEEDS the effort limits (try --torque-scaling)")
        )
        files = f"wrote {csv_path}" + ("" if png_path is None else f" and {png_path}")
        tab = format_table(["joint", "start", "goal", "|qd| max", "kv", "|qdd| max", "ka", "|tau| max", "effort"], rows)
        return "\n".join([head, tab, torque, files])

    emit(args, info, text)
    return 0


def _start_goal(args: argparse.Namespace, model: Any, task: bool) -> tuple[np.ndarray, np.ndarray]:
    """Start and goal joint positions, shape (nq,) [rad or m]: --start (default zeros, or a
    bent pose for a task-space move, inside the limits) and --goal (default start + the
    default displacement, clipped to the limits)."""
    n, names = model.nq, model.joint_names
    lo = np.where(np.isfinite(model.lower), model.lower, -np.inf)
    hi = np.where(np.isfinite(model.upper), model.upper, np.inf)
    if args.start is not None:
        start = parse_vector(args.start, n, "start", names)
    else:
        start = task_start_pose(model) if task else np.clip(np.zeros(n), lo, hi)
    goal = np.clip(start + default_displacement(n), lo, hi) if args.goal is None else parse_vector(args.goal, n, "goal", names)
    return start, goal


def _task_space_trajectory(args: argparse.Namespace, model: Any, start: np.ndarray, info: dict[str, Any]) -> tuple[Any, np.ndarray]:
    """A straight line of the frame plus a rotation about one axis from its pose at ``start``
    (Khalil 8.4), turned into joint space; (trajectory, goal joint positions (nq,)).
    The task-space figures go into ``info["task_space"]``."""
    from ..errors import InputError, RobotDynamicsError
    from ..kinematics import frame_pose
    from ..spatial import rotation_about_axis
    from ..trajectory import PROFILES, cartesian_motion, task_space_to_joint

    frame = model.moving_frame(args.frame)
    T0 = frame_pose(model, start, frame)
    T1 = T0.copy()
    if args.cartesian is not None:
        T1[:3, 3] += parse_vector(args.cartesian, 3, "cartesian")
    if args.rotation is not None:
        r = parse_vector(args.rotation, 4, "rotation")
        norm = np.linalg.norm(r[:3])
        if norm == 0:
            raise InputError("--rotation: the axis ux,uy,uz must not be zero")
        T1[:3, :3] = T0[:3, :3] @ rotation_about_axis(r[:3] / norm, np.radians(r[3]))
    if args.profile not in PROFILES:
        raise InputError(f"--profile: task space uses a point-to-point profile, one of {list(PROFILES)}")
    motion = cartesian_motion(
        T0, T1, args.linear_velocity, args.linear_acceleration, args.angular_velocity, args.angular_acceleration,
        profile=args.profile, duration=args.duration, orientation=args.orientation,
    )
    try:
        report = task_space_to_joint(model, motion, start, frame=frame, rate=args.rate, position_only=model.nq < 6)
    except RobotDynamicsError as exc:
        if "singular" not in str(exc):
            raise
        bent = ",".join(f"{x:g}" for x in task_start_pose(model))
        raise InputError(f"{exc}; start from a bent pose, e.g. --start {bent}") from None
    info.update(
        task_space={
            "distance_m": motion.distance,
            "orientation": args.orientation,
            "axis": getattr(motion, "axis", None),
            "angle_rad": getattr(motion, "angle", None),
            "angle_increments_rad": getattr(motion, "increments", None),
            "min_singular_value": report.min_singular_value,
            "max_joint_velocity_ratio": report.max_velocity_ratio,
        }
    )
    return report.trajectory, report.q[-1]


def _spline_trajectory(args: argparse.Namespace, model: Any, start: np.ndarray, goal: np.ndarray, kv: np.ndarray,
                       ka: np.ndarray, info: dict[str, Any]) -> Any:
    """A spline from ``start`` through the --via points to ``goal`` (each shape (nq,)); with
    --duration, each segment's share of it follows its longest joint chord over kv. The
    points go into ``info["via_points"]``."""
    from ..trajectory import spline_through

    vias = [parse_vector(v, model.nq, "via", model.joint_names) for v in args.via]
    points = np.vstack([start, *vias, goal])
    durations = None
    if args.duration is not None:
        chord = np.max(np.abs(np.diff(points, axis=0)) / kv, axis=1)
        chord = np.where(chord > 0, chord, np.max(chord) if np.max(chord) > 0 else 1.0)
        durations = args.duration * chord / np.sum(chord)
    traj = spline_through(args.profile, points, durations, kv, ka)
    info["via_points"] = points
    return traj


def _torque_limited(args: argparse.Namespace, model: Any, traj: Any) -> tuple[Any, Any]:
    """(trajectory, torque check): slowed to the effort limits by default (or checked only);
    InputError when the table at --rate would pass :data:`MAX_TABLE_ROWS`."""
    from ..errors import InputError
    from ..trajectory import check_torques, scale_to_torque_limits

    # Khalil's remark after [8.3]: kinematic limits alone can ask for more torque than the
    # actuators have; by default the command slows the motion until it is feasible.
    scale = args.torque_scaling if args.torque_scaling is not None else args.duration is None
    if scale:
        traj, tcheck = scale_to_torque_limits(model, traj, rate=max(args.rate, 200.0))
    else:
        tcheck = check_torques(model, traj, rate=max(args.rate, 200.0))
    rows = traj.duration * args.rate + 1.0
    if not rows <= MAX_TABLE_ROWS:  # the CSV's rows are formatted in Python: about 75,000 a second
        raise InputError(f"--rate: {rows:.3g} rows at {args.rate:g} Hz over {traj.duration:.4g} s, more than the table's "
                         f"{MAX_TABLE_ROWS:,}; lower --rate or shorten --duration")
    return traj, tcheck


def _write_csv(path: Any, names: Any, t: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> Any:
    """trajectory.csv: t (K,) [s], q, qd, qdd (K, nq) [rad, rad/s, rad/s^2 or m, ...]; the path written."""
    header = ["t"] + [f"q_{s}" for s in names] + [f"qd_{s}" for s in names] + [f"qdd_{s}" for s in names]
    table = np.column_stack([t, q, qd, qdd]) + 0.0  # no "-0" in the file
    row_format = "%.17g" + ",%.12g" * (table.shape[1] - 1)  # one %-format per row: half the time of f-strings
    lines = [",".join(header)] + [row_format % row for row in map(tuple, table.tolist())]
    return write_atomic(path, "\n".join(lines) + "\n")


def _plot_fine(path: Any, traj: Any, names: Any, title: str) -> Any:
    """The PNG of ``traj``, titled ``title`` and its duration; the path written."""
    # the plot samples the trajectory finely, whatever the table's rate, so that steps of
    # acceleration look like steps
    tp = np.linspace(0.0, traj.duration, 2001) if traj.duration > 0 else np.zeros(1)
    return _plot(path, tp, *traj.sample(tp), names, f"{title}, {traj.duration:.3f} s")


def _plot(path: Any, t: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray, names: Any, title: str) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    for ax, data, label in zip(axes, (q, qd, qdd), ("position [rad or m]", "velocity [rad/s or m/s]", "acceleration [rad/s² or m/s²]")):
        for j, name in enumerate(names):
            ax.plot(t, data[:, j], label=name)
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].set_title(title)
    axes[0].legend(loc="best", fontsize="small", ncol=min(len(names), 4))
    axes[-1].set_xlabel("time [s]")
    return save_figure(fig, path)
