"""``robot-dynamics time-optimal [WAYPOINTS]``: the fastest timing of a path of waypoints under the
joint velocity, acceleration and torque limits (and the motors' torque limits through the drive
train), by :func:`robot_dynamics.trajectory.time_optimal` (TOPP-RA).

WAYPOINTS is a CSV file (a header of joint names in any order, or no header and the columns in
the model's joint order) or a YAML file (a list of waypoints, or a mapping with ``joint_names``
and ``waypoints``). Without it the path runs from the start of ``trajectory`` (zeros, inside the
limits) through a bend to its goal. Writes ``time_optimal.csv`` (t, q, qd, qdd, the joint torques
and, with motor limits, the motor torques) and ``time_optimal.png`` (the phase plane and the
torques against their limits) into --out.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import numpy as np

from ._common import CommonOptions, default_displacement, emit, format_table, load_model, output_dir, write_atomic

#: The rate [Hz] (at least) at which the summary's peaks and torque ratios are taken: the limits
#: of the timing hold between its grid points, and a 1 kHz resampling shows that they do.
CHECK_RATE = 1000.0
#: Most samples of that check (a long motion is checked at a lower rate).
MAX_CHECK_ROWS = 200_000
#: The file suffixes a waypoint file may have.
CSV_SUFFIXES, YAML_SUFFIXES = (".csv",), (".yaml", ".yml")


def register(sub: Any, parents: CommonOptions) -> None:
    p = sub.add_parser(
        "time-optimal",
        parents=parents,
        help="the fastest timing of a path of waypoints under torque limits (TOPP-RA); CSV + PNG",
        description="Time a path through the waypoints of a CSV or YAML file (a C2 cubic spline, chord-length "
        "parameter) as fast as the joint velocity, acceleration and torque limits allow, and the motors' torque "
        "limits through the drive train: time-optimal path parameterization by reachability analysis (TOPP-RA, "
        "Pham and Pham 2018). Limits default to the model's (URDF velocity and effort). Writes time_optimal.csv "
        "and time_optimal.png (the phase plane s-sdot and the torques against their limits) into --out.",
    )
    p.add_argument("waypoints", nargs="?", metavar="WAYPOINTS",
                   help="CSV (header of joint names, or none: the model's joint order) or YAML (a list of waypoints, "
                        "or a mapping with joint_names and waypoints) [rad or m]; default: a path from the start of "
                        "`trajectory` through a bend to its goal")
    g = p.add_argument_group("limits (one value for every joint, or a comma list; inf for none)")
    g.add_argument("--velocity-limit", metavar="V", help="joint velocity limits [rad/s or m/s] (default: the URDF's)")
    g.add_argument("--acceleration-limit", metavar="A", help="joint acceleration limits [rad/s^2 or m/s^2] (default: none)")
    g.add_argument("--torque-limit", metavar="TAU", help="joint torque limits [N m or N] (default: the URDF's effort limits)")
    g.add_argument("--motor-torque-limit", metavar="TAU",
                   help="torque limits at the motors, in the drive train's input order [N m] (default: none): the joint "
                        "torques mapped through the structure matrix, rotor inertia and friction included")
    p.add_argument("--grid-points", type=int, default=1001, help="points of the path parameter's grid (default 1001)")
    p.add_argument("--rate", type=float, default=100.0, help="sampling rate of the written table [Hz] (default 100)")
    p.add_argument("--no-plot", action="store_true", help="do not write the PNG")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import InputError, PathInfeasibleError
    from ..trajectory import time_optimal

    model = load_model(args)
    n, names = model.nq, model.joint_names
    motors = _motor_names(model)
    if not 2 <= args.grid_points <= 1_000_000:
        raise InputError(f"--grid-points: expected an integer from 2 to 1,000,000, got {args.grid_points}")
    if not math.isfinite(args.rate) or args.rate <= 0:
        raise InputError(f"--rate: expected a rate > 0 Hz, got {args.rate}")
    waypoints = default_waypoints(model) if args.waypoints is None else read_waypoints(args.waypoints, model)
    limits = {
        "velocity_limit": _limit_option(args.velocity_limit, n, "--velocity-limit", names),
        "acceleration_limit": _limit_option(args.acceleration_limit, n, "--acceleration-limit", names),
        "torque_limit": _limit_option(args.torque_limit, n, "--torque-limit", names),
        "motor_torque_limit": _limit_option(args.motor_torque_limit, n, "--motor-torque-limit", motors),
    }
    import scipy.interpolate  # noqa: F401 - the spline's module, imported here: the compute time is the timing's own

    try:
        traj = time_optimal(model, waypoints, grid_points=args.grid_points, **limits)
    except PathInfeasibleError as exc:
        hint = "--motor-torque-limit" if f"motor '{exc.joint}'" in str(exc) else "--torque-limit"
        raise PathInfeasibleError(f"{exc}; raise {hint} or move the path", s=exc.s, joint=exc.joint,
                                  torque=exc.torque, limit=exc.limit) from None
    from .trajectory import MAX_TABLE_ROWS

    rows = traj.duration * args.rate + 1.0
    if not rows <= MAX_TABLE_ROWS:
        raise InputError(f"--rate: {rows:.3g} rows at {args.rate:g} Hz over {traj.duration:.4g} s, more than the "
                         f"table's {MAX_TABLE_ROWS:,}; lower --rate")
    peaks = _peaks(traj, args.rate)
    out = output_dir(args)
    csv_path = _write_table(out / "time_optimal.csv", traj, args.rate, names, motors)
    png_path = None if args.no_plot else plot_time_optimal(out / "time_optimal.png", traj, names, motors, model.name)
    _report(args, model, traj, waypoints, peaks, motors, (csv_path, png_path))
    return 0


def _report(args: argparse.Namespace, model: Any, traj: Any, waypoints: np.ndarray, peaks: dict[str, np.ndarray],
            motors: tuple[str, ...], files: tuple[Any, Any]) -> None:
    """Print the summary (or its JSON): the duration, per joint the peaks against the limits and
    the peak torque ratio, per motor the same when motor limits are given, the compute time."""
    names = model.joint_names
    acc = traj.acceleration_limit if traj.acceleration_limit is not None else np.full(model.nq, np.inf)
    ratio = _ratio(peaks["tau"], traj.torque_limit)
    rows = [[names[j], peaks["qd"][j], traj.velocity_limit[j], peaks["qdd"][j], acc[j], peaks["tau"][j],
             traj.torque_limit[j], ratio[j]] for j in range(model.nq)]
    motor_rows = []
    if traj.motor_torque_limit is not None:
        mratio = _ratio(peaks["tau_motor"], traj.motor_torque_limit)
        motor_rows = [[motors[k], peaks["tau_motor"][k], traj.motor_torque_limit[k], mratio[k]] for k in range(model.nq)]
    csv_path, png_path = files
    data = {
        "robot": model.name,
        "waypoints_file": args.waypoints,
        "waypoints": waypoints,
        "grid_points": int(traj.grid.size),
        "duration": traj.duration,
        "compute_time": traj.compute_time,
        "rate": args.rate,
        "check_rate": peaks["rate"],
        "joints": [dict(zip(["name", "peak_velocity", "velocity_limit", "peak_acceleration", "acceleration_limit",
                             "peak_torque", "torque_limit", "torque_ratio"], r)) for r in rows],
        "motors": [dict(zip(["name", "peak_torque", "torque_limit", "torque_ratio"], r)) for r in motor_rows] or None,
        "csv": str(csv_path),
        "png": None if png_path is None else str(png_path),
    }

    def text() -> str:
        where = args.waypoints or "the default path"
        lines = [
            f"{model.name}: time-optimal timing of {len(waypoints)} waypoints ({where}), duration {traj.duration:.4f} s, "
            f"computed in {1e3 * traj.compute_time:.1f} ms on {traj.grid.size} grid points",
            format_table(["joint", "|qd| max", "qd limit", "|qdd| max", "qdd limit", "|tau| max", "tau limit",
                          "|tau| / limit"], rows),
        ]
        if motor_rows:
            lines.append(format_table(["motor", "|tau| max", "tau limit", "|tau| / limit"], motor_rows))
        lines.append(f"peaks over a {peaks['rate']:g} Hz resampling; wrote {csv_path}"
                     + ("" if png_path is None else f" and {png_path}"))
        return "\n".join(lines)

    emit(args, data, text)


def _ratio(peak: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """|tau| max / limit per coordinate, 0 where the limit is inf (none)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(limit), peak / limit, 0.0)


def _motor_names(model: Any) -> tuple[str, ...]:
    """The drive train's inputs (its motors), or the joints of a robot without one."""
    dt = model.drivetrain
    return tuple(dt.inputs) if dt is not None else tuple(model.joint_names)


def _peaks(traj: Any, rate: float) -> dict[str, Any]:
    """Largest |qd|, |qdd|, |tau| (and |tau| at the motors) per coordinate, each (nq,), over a
    resampling at :data:`CHECK_RATE` or ``rate`` whichever is higher (lower for a long motion)."""
    from ..trajectory import sample_times

    check = max(rate, CHECK_RATE)
    if traj.duration * check > MAX_CHECK_ROWS:
        check = MAX_CHECK_ROWS / traj.duration
    t = sample_times(traj.duration, check)
    _, qd, qdd = traj.sample(t)
    out = {"rate": check, "qd": np.max(np.abs(qd), axis=0), "qdd": np.max(np.abs(qdd), axis=0),
           "tau": np.max(np.abs(traj.torques(t)), axis=0)}
    if traj.motor_torque_limit is not None:
        out["tau_motor"] = np.max(np.abs(traj.motor_torques(t)), axis=0)
    return out


def _write_table(path: Path, traj: Any, rate: float, names: tuple[str, ...], motors: tuple[str, ...]) -> Path:
    """time_optimal.csv: t (K,) [s]; q, qd, qdd (K, nq) [rad, rad/s, rad/s^2 or m, ...]; tau (K, nq)
    [N m or N]; with motor limits tau_motor (K, nq) [N m] in the drive train's input order. The
    path written (atomically)."""
    from ..trajectory import sample_table

    t, q, qd, qdd = sample_table(traj, rate)
    header = ["t"] + [f"{kind}_{s}" for kind in ("q", "qd", "qdd", "tau") for s in names]
    columns = [t, q, qd, qdd, traj.torques(t)]
    if traj.motor_torque_limit is not None:
        header += [f"tau_motor_{s}" for s in motors]
        columns.append(traj.motor_torques(t))
    table = np.column_stack(columns) + 0.0  # no "-0" in the file
    row_format = "%.17g" + ",%.12g" * (table.shape[1] - 1)
    lines = [",".join(header)] + [row_format % row for row in map(tuple, table.tolist())]
    return write_atomic(path, "\n".join(lines) + "\n")


def _limit_option(text: str | None, n: int, option: str, names: tuple[str, ...]) -> float | np.ndarray | None:
    """A limits option: None when absent, one value (every coordinate) or ``n`` values, each a
    number > 0 or ``inf`` (none); InputError naming the option otherwise."""
    from ..errors import InputError

    if text is None:
        return None
    parts = [s for s in text.replace(" ", ",").split(",") if s]
    try:
        values = np.array([float(s) for s in parts])
    except ValueError:
        raise InputError(f"{option}: expected one number or {n} comma-separated numbers, got {text!r}") from None
    if values.size not in (1, n):
        raise InputError(f"{option}: expected one value or {n} ({', '.join(names)}), got {values.size}")
    if np.any(np.isnan(values)) or np.any(values <= 0):
        raise InputError(f"{option}: limits must be > 0 (inf for none), got {text!r}")
    return float(values[0]) if values.size == 1 else values


def default_waypoints(model: Any) -> np.ndarray:
    """The path of the command without a file, (3, nq) [rad or m]: from the start of ``trajectory``
    (zeros, inside the limits) through a bend to its goal (start + its default displacement),
    every waypoint inside the joint limits."""
    lo = np.where(np.isfinite(model.lower), model.lower, -np.inf)
    hi = np.where(np.isfinite(model.upper), model.upper, np.inf)
    start = np.clip(np.zeros(model.nq), lo, hi)
    move = default_displacement(model.nq)
    bend = 0.5 * move + 0.3 * np.resize([1.0, -1.0, 1.0], model.nq)
    return np.vstack([start, np.clip(start + bend, lo, hi), np.clip(start + move, lo, hi)])


def read_waypoints(path: str, model: Any) -> np.ndarray:
    """The waypoints of a CSV or YAML file in the model's joint order, (K, nq) [rad or m], K >= 2.

    CSV: one waypoint a row; a first row of joint names (any order, every joint once) or none
    (the columns in ``model.joint_names`` order); blank lines and lines starting with ``#`` are
    skipped. YAML: a list of waypoints (each a list in joint order), or a mapping with
    ``waypoints`` and optionally ``joint_names`` (their order).

    Raises:
        InputError: a file that cannot be read or parsed, a suffix other than .csv, .yaml,
            .yml, a joint unknown or missing, a row of the wrong length, a value that is not a
            finite number, fewer than two waypoints, or a waypoint outside the joint limits.
    """
    from ..errors import InputError

    file = Path(path)
    suffix = file.suffix.lower()
    if suffix not in CSV_SUFFIXES + YAML_SUFFIXES:
        raise InputError(f"WAYPOINTS: expected a .csv, .yaml or .yml file, got {path!r}")
    try:
        text = file.read_text(encoding="utf-8-sig")  # a spreadsheet's byte-order mark is no part of the header
    except OSError as exc:
        raise InputError(f"WAYPOINTS: cannot read {path!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"WAYPOINTS: {path!r} is not UTF-8 text") from None
    header, rows = _csv_rows(text, file.name) if suffix in CSV_SUFFIXES else _yaml_rows(text, file.name)
    points = _in_model_order(header, rows, model, file.name)
    _check_inside_limits(points, model, file.name)
    return points


def _number(value: Any, where: str) -> float:
    from ..errors import InputError

    if isinstance(value, bool):  # YAML's true/false: a number by Python's rules, not by the file's
        raise InputError(f"{where}: expected a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{where}: expected a number, got {value!r}") from None
    if not math.isfinite(x):
        raise InputError(f"{where}: expected a finite number, got {value!r}")
    return x


def _csv_rows(text: str, name: str) -> tuple[list[str] | None, list[list[Any]]]:
    """(header or None, the rows' cells) of a CSV text; rows keep their line numbers for the errors."""
    lines = [(i + 1, line.strip()) for i, line in enumerate(text.splitlines())]
    lines = [(i, line) for i, line in lines if line and not line.startswith("#")]
    header = None
    if lines:
        cells = [c.strip() for c in lines[0][1].split(",")]
        try:
            [float(c) for c in cells]
        except ValueError:
            header = cells
            lines = lines[1:]
    rows = [[(f"{name} line {i}", c.strip()) for c in line.split(",")] for i, line in lines]
    return header, rows


def _yaml_rows(text: str, name: str) -> tuple[list[str] | None, list[list[Any]]]:
    """(joint_names or None, the waypoints' cells) of a YAML text."""
    import yaml

    from ..errors import InputError

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"malformed YAML {name!r},{where}: {problem}") from None
    header = None
    if isinstance(data, dict):
        unknown = sorted(str(k) for k in data if k not in ("joint_names", "waypoints"))
        if unknown or "waypoints" not in data:
            raise InputError(f"{name}: expected the keys joint_names (optional) and waypoints, got {sorted(map(str, data))}")
        header, data = data.get("joint_names"), data["waypoints"]
        if header is not None and (not isinstance(header, list) or not all(isinstance(h, str) for h in header)):
            raise InputError(f"{name}: joint_names: expected a list of joint names, got {header!r}")
    if not isinstance(data, list) or not all(isinstance(row, list) for row in data):
        raise InputError(f"{name}: expected a list of waypoints, each a list of joint positions")
    rows = [[(f"{name} waypoint {k + 1}", v) for v in row] for k, row in enumerate(data)]
    return header, rows


def _in_model_order(header: list[str] | None, rows: list[list[Any]], model: Any, name: str) -> np.ndarray:
    """The rows as a (K, nq) array in ``model.joint_names`` order; InputError for a joint unknown,
    repeated or missing, a row of another length, a value that is no finite number, K < 2."""
    from ..errors import InputError, UnknownNameError

    names = model.joint_names
    order = list(range(model.nq))
    if header is not None:
        for h in header:
            if h not in names:
                raise InputError(f"{name}: {UnknownNameError('joint', h, names)}")
        missing = [j for j in names if j not in header]
        repeated = sorted({h for h in header if header.count(h) > 1})
        if missing or repeated:
            what = f"no column for {', '.join(missing)}" if missing else f"{', '.join(repeated)} named twice"
            raise InputError(f"{name}: {what}; expected each of {list(names)} once")
        order = [header.index(j) for j in names]
    width = model.nq if header is None else len(header)
    points = np.empty((len(rows), model.nq))
    for k, row in enumerate(rows):
        if len(row) != width:
            where = row[0][0] if row else f"{name} waypoint {k + 1}"
            form = "" if header is not None else f" ({', '.join(names)}, the model's order; or a header of joint names)"
            raise InputError(f"{where}: expected {width} values{form}, got {len(row)}")
        values = [_number(v, where) for where, v in row]
        points[k] = [values[i] for i in order]
    if len(points) < 2:
        raise InputError(f"{name}: expected at least 2 waypoints, got {len(points)}")
    return points


def _check_inside_limits(points: np.ndarray, model: Any, name: str) -> None:
    from ..errors import InputError

    outside = (points < model.lower - 1e-12) | (points > model.upper + 1e-12)
    if np.any(outside):
        k, j = map(int, np.argwhere(outside)[0])
        raise InputError(f"{name} waypoint {k + 1}: {model.joint_names[j]} = {points[k, j]:g} is outside its limits "
                         f"[{model.lower[j]:g}, {model.upper[j]:g}]")


def plot_time_optimal(path: Path, traj: Any, names: tuple[str, ...], motors: tuple[str, ...], title: str) -> Path:
    """The PNG of a time-optimal timing: the phase plane (s, sdot) with the maximum-velocity
    curve, the controllable sets' upper bound and the chosen profile; the joint torques over
    time as fractions of their limits (dashed at +-1), and the motor torques likewise when
    motor limits are given. The path written (atomically)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..io import save_figure

    motor = traj.motor_torque_limit is not None
    fig, axes = plt.subplots(3 if motor else 2, 1, figsize=(10, 10.5 if motor else 7.5), constrained_layout=True)
    _plot_phase_plane(axes[0], traj)
    fig.suptitle(f"{title}: time-optimal timing, {traj.duration:.3f} s")
    axes[0].set_title("the phase plane: the path's speed along it", fontsize="medium")
    t = np.linspace(0.0, traj.duration, 2001) if traj.duration > 0 else np.zeros(1)
    _plot_ratios(axes[1], t, traj.torques(t), traj.torque_limit, names, "joint")
    if motor:
        _plot_ratios(axes[2], t, traj.motor_torques(t), traj.motor_torque_limit, motors, "motor")
    axes[-1].set_xlabel("time [s]")
    return save_figure(fig, path)


def _plot_phase_plane(ax: Any, traj: Any) -> None:
    s = traj.grid
    bound = np.where(np.isfinite(traj.max_velocity), traj.max_velocity, np.nan)
    top = np.nanmax(np.concatenate([traj.controllable[np.isfinite(traj.controllable)], traj.sd_grid, [1e-9]]))
    ax.fill_between(s, 0.0, np.minimum(traj.controllable, 10 * top), color="tab:green", alpha=0.12,
                    label="controllable (reaches the end at rest)")
    ax.plot(s, traj.sd_grid, color="black", lw=2.5, label="time-optimal profile")
    # the bounds over the profile: where it runs on one of them, the bound shows on it
    ax.plot(s, traj.controllable, color="tab:green", lw=1.0, ls="--", label="controllable sets' upper bound")
    ax.plot(s, bound, color="tab:red", lw=1.0, label="maximum-velocity curve (the limits alone)")
    ax.set_xlim(0.0, 1.0)
    ax.set_ylim(0.0, 1.3 * top)
    ax.set_xlabel("path parameter s")
    ax.set_ylabel("ṡ [1/s]")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")


def _plot_ratios(ax: Any, t: np.ndarray, tau: np.ndarray, limit: np.ndarray, names: tuple[str, ...], kind: str) -> None:
    """tau / limit per coordinate over time, dashed lines at +-1 (the limits); a coordinate
    without a limit (inf) is left out and named."""
    for j, name in enumerate(names):
        if np.isfinite(limit[j]):
            ax.plot(t, tau[:, j] / limit[j], lw=1.2, label=f"{name}, limit {limit[j]:g}")
    free = [n for j, n in enumerate(names) if not np.isfinite(limit[j])]
    for y in (-1.0, 1.0):
        ax.axhline(y, color="black", ls="--", lw=1.0, label="the limits" if y > 0 else None)
    ax.set_ylim(-1.15, 1.15)
    ax.set_ylabel(f"{kind} torque / its limit")
    ax.set_title(f"the {kind} torques against their limits" + (f" (no limit: {', '.join(free)})" if free else ""),
                 fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small")
