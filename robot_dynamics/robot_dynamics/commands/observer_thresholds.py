"""``robot-dynamics observer-thresholds RECORDING...``: the momentum observer's thresholds from a
recording of collision-free motion (the false-alarm margin the data shows).

RECORDING is a rosbag2 folder (MCAP or sqlite3) with /joint_states, or a CSV (t, q_<joint>,
tau_<joint>, optionally qd_<joint>), read as ``identify`` reads them; several are one recording
of several segments. The observer (:func:`robot_dynamics.observers.tune_thresholds`) runs over it
and per joint the fixed threshold is chosen that keeps --margin over the largest residual.

Prints per joint the residual's peak (and when), the relative part, the threshold and the margin
it keeps; writes ``observer_thresholds.yaml`` (the observer's parameters per joint in model order:
``joints``, ``gain``, ``thresholds``, ``relative``) and ``observer_thresholds.png`` (the residual and
the threshold over time).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..errors import InputError
from ._common import CommonOptions, emit, format_table, load_model, output_dir, parse_vector, write_atomic

#: The files the command writes in --out.
YAML_NAME, PLOT_NAME = "observer_thresholds.yaml", "observer_thresholds.png"


def register(sub: Any, parents: CommonOptions) -> None:
    p = sub.add_parser(
        "observer-thresholds",
        parents=parents,
        help="the collision observer's thresholds from a recording of collision-free motion (rosbag2 or CSV)",
        description="Run the momentum observer over recorded joint states of collision-free motion and choose "
        "per joint the fixed threshold that keeps --margin over the largest residual (the false-alarm margin "
        "the data shows); prints the margins, writes the thresholds as YAML and a plot.",
    )
    p.add_argument("recordings", nargs="+", metavar="RECORDING", help="rosbag2 folder(s) or CSV file(s) of /joint_states")
    g = p.add_argument_group("observer")
    g.add_argument("--gain", default="100", help="K_O [1/s], a number or nq values (default 100)")
    g.add_argument("--margin", type=float, default=1.5, help="safety factor of the thresholds over the largest "
                   "residual of the recording, >= 1 (default 1.5)")
    g.add_argument("--relative", default="0.05", help="part of the threshold that grows with the model torque, a "
                   "number, nq values or 'fit' (chosen with the fixed part for the smallest mean threshold; default 0.05)")
    g.add_argument("--floor", default="0", help="least fixed threshold [N m or N], a number or nq values (default 0)")
    g.add_argument("--coulomb-smoothing", type=float, default=0.0,
                   help="v_s [rad/s] of the observer's Coulomb friction Fc tanh(qd / v_s) (default 0: the sign)")
    g.add_argument("--no-friction", dest="friction", action="store_false", help="leave the model's friction out")
    g.add_argument("--torque", choices=("held", "measured"), default="held",
                   help="the recorded efforts are commands held to the next sample (default) or measured torques")
    p.add_argument("--no-plot", action="store_true", help=f"skip {PLOT_NAME}")
    p.set_defaults(func=run)


def _joint_values(text: str, model: Any, what: str) -> Any:
    """A number or nq comma-separated numbers."""
    one = "," not in text.strip(", ")
    values = parse_vector(text, 1 if one else model.nq, what, model.joint_names)
    return float(values[0]) if one else values


def yaml_text(tuning: Any, model: Any) -> str:
    """The observer's parameters as YAML, with the recording and the margins as comments."""
    import yaml

    head = [f"# momentum observer thresholds of {model.name} from {tuning.source or 'a recording'}:",
            f"# the fixed part keeps a margin of {tuning.margin:g} over the largest collision-free residual.",
            "# threshold_j(t) = thresholds_j + relative_j |tau_j - r_j| (through the residual's lag) [N m or N]",
            f"# peak |r| per joint: {[float(f'{v:.6g}') for v in tuning.peak]}",
            f"# margin kept per joint: {[float(f'{v:.4g}') if np.isfinite(v) else 'inf' for v in tuning.worst_margin]}"]
    body = yaml.safe_dump(tuning.parameters(), sort_keys=False, default_flow_style=None)
    return "\n".join(head) + "\n" + body


def run(args: argparse.Namespace) -> int:
    from ..identification import concatenate, read_recording
    from ..observers import tune_thresholds

    if not (np.isfinite(args.coulomb_smoothing) and args.coulomb_smoothing >= 0):
        raise InputError(f"--coulomb-smoothing: expected a velocity >= 0 [rad/s], got {args.coulomb_smoothing!r}")
    model = load_model(args)
    gain, floor = _joint_values(args.gain, model, "gain"), _joint_values(args.floor, model, "floor")
    relative = "fit" if args.relative.strip() == "fit" else _joint_values(args.relative, model, "relative")
    recording = concatenate([read_recording(r, model) for r in args.recordings])
    tuning = tune_thresholds(model, recording, gain=gain, margin=args.margin, relative=relative, floor=floor,
                             friction=args.friction, coulomb_smoothing=args.coulomb_smoothing, torque=args.torque)
    out = output_dir(args)
    files = [str(write_atomic(out / YAML_NAME, yaml_text(tuning, model)))]
    if not args.no_plot:
        files.append(str(_plot(tuning, model, out / PLOT_NAME)))
    data = {
        "robot": model.name, "recordings": list(args.recordings), "samples": int(tuning.t.size),
        "duration": recording.duration, "velocity": tuning.velocity, "margin": tuning.margin,
        "joint_names": list(model.joint_names), "gain": tuning.gain, "relative": tuning.relative,
        "thresholds": tuning.threshold, "peak": tuning.peak, "peak_time": tuning.peak_time - tuning.t[0],
        "margin_kept": tuning.worst_margin, "false_alarms": tuning.false_alarms(), "files": files,
    }
    emit(args, data, lambda: _report(data))
    return 0


def _report(data: dict[str, Any]) -> str:
    lines = [f"observer thresholds of {data['robot']} from {', '.join(data['recordings'])}: {data['samples']} samples "
             f"over {data['duration']:.3g} s (peaks timed from its start), velocities {data['velocity']}, K_O = "
             f"{', '.join(f'{g:g}' for g in np.unique(data['gain']))} /s, margin {data['margin']:g}"]
    rows = [[name, float(data["peak"][j]), float(data["peak_time"][j]), float(data["relative"][j]),
             float(data["thresholds"][j]), float(data["margin_kept"][j])] for j, name in enumerate(data["joint_names"])]
    lines.append(format_table(["joint", "peak |r|", "at [s]", "relative", "threshold", "margin kept"], rows))
    lines.append(f"false alarms over the recording with these thresholds: {data['false_alarms']} samples")
    lines.append("wrote " + ", ".join(data["files"]))
    return "\n".join(lines)


def _plot(tuning: Any, model: Any, path: Any) -> Any:
    from ..io import plot_residual

    t = tuning.t - tuning.t[0]
    title = (f"{model.name}: collision-free recording, K_O = {float(tuning.gain.max()):g} /s, "
             f"thresholds with a margin of {tuning.margin:g}")
    return plot_residual(t, tuning.residual, None, tuning.thresholds(),
                         list(model.joint_names), path, title=title)
