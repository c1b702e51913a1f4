"""``robot-dynamics drivetrain``: what the gear train does to the torques (Chen & Wang, seed 000).

Three models of the same geared robot along a fast rest-to-rest motion:

* ``no_rotors``: the virtual chain alone (gears lumped into their carriers as rigid masses);
* ``armature``: plus the diagonal armature sum_j I_j b_jk^2 (what Pinocchio, MuJoCo and Drake do);
* ``full``: plus the secondary links' full coupling M_s, C_s (virtual link approach).

Joint torques G and input (motor) torques xi = A^-1 G are tabulated, written as CSV and plotted.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..io import save_figure
from ._common import CommonOptions, emit, format_table, output_dir, parse_vector, write_csv

DEFAULT_GEARED_ROBOT = "three_dof_geared"
MODELS = ("no_rotors", "armature", "full")
LABELS = {"no_rotors": "no rotors (virtual chain)", "armature": "diagonal armature", "full": "full coupling"}


def register(sub: Any, parents: CommonOptions) -> None:
    p = sub.add_parser(
        "drivetrain",
        parents=parents,
        help="geared robots: torques of three drive-train models (no rotors, diagonal armature, full coupling) along a fast motion",
        description="Compares the joint and motor torques of a geared robot computed with no rotor dynamics, with the "
        "diagonal armature of other libraries, and with the full gear-train coupling of the virtual link approach, along "
        f"a quintic rest-to-rest motion. Default robot: {DEFAULT_GEARED_ROBOT}. Writes drivetrain_comparison.csv and "
        "drivetrain_comparison.png into --out.",
    )
    p.add_argument("--start", help="start joint positions (default: 20%% of each joint's range)")
    p.add_argument("--goal", help="goal joint positions (default: 80%% of each joint's range)")
    p.add_argument("--duration", type=float, default=1.2, help="motion time [s] (default 1.2: fast)")
    p.add_argument("--samples", type=int, default=241, help="samples along the motion (default 241)")
    p.add_argument("--no-plot", action="store_true", help="do not write the PNG")
    p.add_argument("--symbolic", action="store_true",
                   help="print M_s(q) and C_s(q, qd) of the gear train in closed form (sympy, eq. 44) instead of the comparison")
    p.set_defaults(func=run)


def _default_points(model: Any) -> tuple[np.ndarray, np.ndarray]:
    lo = np.where(np.isfinite(model.lower), model.lower, -1.5)
    hi = np.where(np.isfinite(model.upper), model.upper, 1.5)
    return lo + 0.2 * (hi - lo), lo + 0.8 * (hi - lo)


def run(args: argparse.Namespace) -> int:
    from .. import rnea
    from ..drivetrain import diagonal_armature_model, virtual_chain_model
    from ..trajectory import plan

    model = _geared_model(args)
    dt = model.drivetrain
    if args.symbolic:
        return _print_symbolic(args, model)
    _check_motion_options(args)
    start, goal = _default_points(model)
    if args.start:
        start = parse_vector(args.start, model.nq, "start", model.joint_names)
    if args.goal:
        goal = parse_vector(args.goal, model.nq, "goal", model.joint_names)

    traj = plan("quintic", start, goal, duration=args.duration)
    t = np.linspace(0.0, args.duration, args.samples)
    q, qd, qdd = traj.sample(t)
    variants = {"no_rotors": virtual_chain_model(model), "armature": diagonal_armature_model(model), "full": model}
    G = {k: rnea(m, q, qd, qdd) for k, m in variants.items()}  # seed 000 eq. (23), friction included
    xi = {k: g @ dt.A_inv.T for k, g in G.items()}  # xi = A^-1 G, eq. (22)

    joints = _difference_stats(G, model.joint_names)
    actuators = _difference_stats(xi, dt.inputs)
    result: dict[str, Any] = {
        "robot": model.name,
        "duration": args.duration,
        "start": start.tolist(),
        "goal": goal.tolist(),
        "models": {k: LABELS[k] for k in MODELS},
        "structure_matrix": dt.A.tolist(),
        "joints": joints,
        "actuators": actuators,
    }
    out = output_dir(args)
    files = [_write_csv(out / "drivetrain_comparison.csv", model, t, q, G, xi)]
    if not args.no_plot:
        files.append(str(_plot(out / "drivetrain_comparison.png", model, t, G, xi)))
    result["files"] = files
    emit(args, result, lambda: _report_text(model, args.duration, start, goal, joints, actuators, files))
    return 0


def _geared_model(args: argparse.Namespace) -> Any:
    """The robot of --robot / --urdf (default :data:`DEFAULT_GEARED_ROBOT`); InputError unless
    its gear train has rotor inertia coupled to the joints."""
    from ..errors import InputError
    from ..model import list_robots, load_robot
    from ._common import load_model

    if getattr(args, "robot", None) or getattr(args, "urdf", None):
        model = load_model(args)
    else:
        model = load_robot(DEFAULT_GEARED_ROBOT)
        if getattr(args, "drivetrain", None):
            raise InputError("--drivetrain needs --robot or --urdf (the default geared robot has its own)")
    dt = model.drivetrain
    if dt is None or not dt.coupled:
        geared = [r for r in list_robots() if "geared" in r]
        raise InputError(
            f"robot {model.name!r} has no gear train with rotor inertia to compare; give a drive-train YAML with "
            f"secondary_links (--drivetrain) or a geared robot: {geared}"
        )
    return model


def _print_symbolic(args: argparse.Namespace, model: Any) -> int:
    """--symbolic: print M_s(q) and C_s(q, qd) of the gear train in closed form (eq. 44)."""
    from ..drivetrain.symbolic import format_coupling, symbolic_coupling

    sc = symbolic_coupling(model)
    n = model.nq
    result_sym = {
        "robot": model.name,
        "joints": {f"q{i + 1}": name for i, name in enumerate(model.joint_names)},
        "inertia": {str(s): v for s, v in sc.inertia.values()},
        "M_s": [[str(sc.M_s[i, j]) for j in range(n)] for i in range(n)],
        "C_s": [str(sc.C_s[i]) for i in range(n)],
    }
    emit(args, result_sym, lambda: format_coupling(model, sc))
    return 0


def _check_motion_options(args: argparse.Namespace) -> None:
    """InputError for a --duration or --samples the comparison cannot take."""
    from ..errors import InputError

    if not np.isfinite(args.duration) or args.duration <= 0:
        raise InputError(f"--duration must be > 0 s, got {args.duration}")
    if args.samples < 3:
        raise InputError(f"--samples must be >= 3, got {args.samples}")
    if args.samples > 100_000:
        raise InputError(f"--samples: at most 100,000 points along the motion, got {args.samples:,}")


def _difference_stats(values: dict[str, np.ndarray], names: tuple[str, ...]) -> list[dict[str, Any]]:
    """Per column of ``values[model]`` (shape (K, len(names)) [N m]): the peak |full| and the
    max and rms difference of each simpler model from the full one."""
    out = []
    for i, name in enumerate(names):
        full = values["full"][:, i]
        row: dict[str, Any] = {"name": name, "peak_full": float(np.abs(full).max())}
        for k in ("no_rotors", "armature"):
            d = values[k][:, i] - full
            row[f"max_diff_{k}"] = float(np.abs(d).max())
            row[f"rms_diff_{k}"] = float(np.sqrt(np.mean(d**2)))
        out.append(row)
    return out


def _write_csv(path: Any, model: Any, t: np.ndarray, q: np.ndarray, G: dict[str, np.ndarray],
               xi: dict[str, np.ndarray]) -> str:
    """drivetrain_comparison.csv: t (K,) [s], q (K, nq), then per model G (K, nq) and xi (K, nq)
    [N m]; the path written."""
    dt = model.drivetrain
    header = ["t", *[f"q_{n}" for n in model.joint_names]]
    cols = [t[:, None], q]
    for k in MODELS:
        header += [f"G_{k}_{n}" for n in model.joint_names] + [f"xi_{k}_{n}" for n in dt.inputs]
        cols += [G[k], xi[k]]
    return write_csv(path, header, cols)


def _report_text(model: Any, duration: float, start: np.ndarray, goal: np.ndarray, joints: list[dict[str, Any]],
                 actuators: list[dict[str, Any]], files: list[str]) -> str:
    """The text report: the motion, then the joint and the input torque differences."""
    heads = ["", "peak |full| [N m]", "max |no rotors - full|", "rms", "max |armature - full|", "rms"]

    def rows(stat: list[dict[str, Any]]) -> list[list[Any]]:
        return [[r["name"], r["peak_full"], r["max_diff_no_rotors"], r["rms_diff_no_rotors"],
                 r["max_diff_armature"], r["rms_diff_armature"]] for r in stat]

    return "\n".join([
        f"{model.name}: quintic motion in {duration:g} s from {np.round(start, 3).tolist()} "
        f"to {np.round(goal, 3).tolist()}",
        "models: no rotors = virtual chain; armature = + diagonal sum_j I_j b_jk^2 (peer libraries); "
        "full = + gear-train coupling M_s, C_s",
        "",
        "joint torques G [N m]",
        format_table(["joint", *heads[1:]], rows(joints)),
        "",
        "input (motor) torques xi = A^-1 G [N m]",
        format_table(["input", *heads[1:]], rows(actuators)),
        "",
        "wrote " + ", ".join(files),
    ])


def _plot(path: Any, model: Any, t: np.ndarray, G: dict[str, np.ndarray], xi: dict[str, np.ndarray]) -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = model.nq
    dt = model.drivetrain
    styles = {"no_rotors": ("tab:gray", ":"), "armature": ("tab:blue", "--"), "full": ("tab:red", "-")}
    fig, axes = plt.subplots(n, 3, figsize=(14, 2.6 * n + 1), sharex=True, squeeze=False)
    for i in range(n):
        ax = axes[i, 0]
        for k in MODELS:
            c, ls = styles[k]
            ax.plot(t, G[k][:, i], color=c, ls=ls, label=LABELS[k])
        ax.set_ylabel(f"G {model.joint_names[i]} [N m]")
        ax = axes[i, 1]
        for k in ("no_rotors", "armature"):
            c, ls = styles[k]
            ax.plot(t, G[k][:, i] - G["full"][:, i], color=c, ls=ls, label=f"{LABELS[k]} - full")
        ax.axhline(0.0, color="k", lw=0.5)
        ax.set_ylabel(f"error {model.joint_names[i]} [N m]")
        ax = axes[i, 2]
        for k in MODELS:
            c, ls = styles[k]
            ax.plot(t, xi[k][:, i], color=c, ls=ls, label=LABELS[k])
        ax.set_ylabel(f"xi {dt.inputs[i]} [N m]")
    axes[0, 0].set_title("joint torques G")
    axes[0, 1].set_title("error of the simpler models")
    axes[0, 2].set_title("motor torques xi = A^-1 G")
    axes[0, 0].legend(fontsize=8, loc="best")
    axes[0, 1].legend(fontsize=8, loc="best")
    for ax in axes[-1]:
        ax.set_xlabel("t [s]")
    for ax in axes.flat:
        ax.grid(alpha=0.3)
    fig.suptitle(f"{model.name}: drive-train models along a fast motion (virtual link approach)")
    fig.tight_layout()
    return save_figure(fig, path)
