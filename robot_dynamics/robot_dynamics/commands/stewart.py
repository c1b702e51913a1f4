"""``robot-dynamics stewart``: inverse dynamics of the Stewart platform along the test motion of
Lopes (2009), Section 5: actuator lengths, velocities, accelerations (Fig. 4), actuator forces
(Fig. 5) and their split into platform, cylinder and piston contributions (Fig. 6); CSV + PNGs.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..io import save_figure
from ._common import CommonOptions, emit, format_table, output_dir, parse_vector, write_csv


def register(sub: Any, parents: CommonOptions) -> None:
    p = sub.add_parser(
        "stewart",
        parents=[parents.json, parents.out],
        help="Stewart platform (Lopes 2009): leg lengths and forces along the P1 -> P2 -> P1 test motion; CSV + PNGs",
        description="Inverse dynamics of the 6-UPS Stewart platform by the generalized momentum approach, along "
        "third-order trigonometric splines P1 -> P2 -> P1. Writes stewart.csv, stewart_fig4_actuators.png, "
        "stewart_fig5_forces.png and stewart_fig6_contributions.png into --out. --check compares the forces "
        "with the general closed-chain layer (RNEA on the U-P-S spanning tree with loop closures).",
    )
    p.add_argument("--params", help="parameters YAML (default: the bundled Table 2, config/stewart_platform.yaml)")
    p.add_argument("--p1", help="start/end pose x,y,z [mm],psi,theta,phi [deg] (default the YAML's P1)")
    p.add_argument("--p2", help="middle pose, same units (default the YAML's P2)")
    p.add_argument("--segment-duration", type=float, help="duration of each spline segment [s] (default the YAML's)")
    p.add_argument("--samples", type=int, default=400, help="samples per segment (default 400)")
    p.add_argument("--check", action="store_true", help="cross-check every 20th sample with the general layer")
    p.add_argument("--op-counts", action="store_true",
                   help="also count the operations of the Coriolis/centripetal matrices (generalized momentum, "
                        "Lagrange, Lagrange-Koditschek) beside the paper's Table 1")
    p.add_argument("--no-plot", action="store_true", help="do not write the PNGs")
    p.set_defaults(func=run)


#: --p1 and --p2 units [mm, deg] to SI [m, rad]: x, y, z, psi, theta, phi.
_TO_SI = np.array([1e-3] * 3 + [np.pi / 180] * 3)


def run(args: argparse.Namespace) -> int:
    from ..closedchain import stewart as st
    from ..trajectory.splines import trigonometric_spline

    params = st.load_stewart_parameters(args.params)
    P1, P2, dur = _test_motion(args, params)
    spline = trigonometric_spline(np.stack([P1, P2, P1]), dur)
    t = np.linspace(0.0, 2.0 * dur, 2 * args.samples + 1)
    x, xd, xdd = spline.sample(t)
    d = st.stewart_dynamics(params, x, xd, xdd)  # raises on an unreachable or singular pose
    kin = st.stewart_kinematics(params, x, xd)
    l_ddot = np.gradient(kin.length_rates, t, axis=0, edge_order=2)

    legs = _leg_summaries(d)
    result: dict[str, Any] = {
        "mechanism": params.name,
        "P1": (P1 / _TO_SI).tolist(),
        "P2": (P2 / _TO_SI).tolist(),
        "segment_duration": dur,
        "legs": legs,
    }
    rows = [[leg["leg"], *(leg[k] for k in list(leg)[1:])] for leg in legs]
    if args.check:
        result["general_layer_max_relative_difference"] = _general_layer_difference(params, x, xd, xdd, d.tau)
    counts = lagrange_counts = None
    if args.op_counts:
        counts, lagrange_counts = _operation_counts(result)

    out = output_dir(args)
    files = [_write_csv(out / "stewart.csv", t, x, d)]
    if not args.no_plot:
        files += _plots(out, t, d.lengths, kin.length_rates, l_ddot, d)
    result["files"] = files

    def text() -> str:
        s = [f"Stewart platform {params.name}: P1 -> P2 -> P1, {dur:g} s per segment, {len(t)} samples",
             format_table(["leg", "l min [m]", "l max [m]", "F min [N]", "F max [N]", "|platform| [N]",
                           "|cylinders| [N]", "|pistons| [N]"], rows)]
        if "general_layer_max_relative_difference" in result:
            s.append(f"general closed-chain layer: max relative difference {result['general_layer_max_relative_difference']:.2e}")
        if args.op_counts:
            s += _operation_count_lines(counts, lagrange_counts)
        s.append("wrote " + ", ".join(files))
        return "\n".join(s)

    emit(args, result, text)
    return 0


def _test_motion(args: argparse.Namespace, params: Any) -> tuple[np.ndarray, np.ndarray, float]:
    """(P1, P2 [m, rad], shape (6,), segment duration [s]) of the test motion: the YAML's,
    or --p1, --p2 and --segment-duration; InputError for bad options."""
    from ..closedchain import stewart as st
    from ..errors import InputError

    P1, P2, dur = st.test_motion_points(params)
    if args.p1:
        P1 = parse_vector(args.p1, 6, "p1") * _TO_SI
    if args.p2:
        P2 = parse_vector(args.p2, 6, "p2") * _TO_SI
    if args.segment_duration is not None:
        if not np.isfinite(args.segment_duration) or args.segment_duration <= 0:
            raise InputError(f"--segment-duration must be > 0 s, got {args.segment_duration}")
        dur = args.segment_duration
    if args.samples < 2:
        raise InputError(f"--samples must be >= 2, got {args.samples}")
    if args.samples > 100_000:
        raise InputError(f"--samples: at most 100,000 per half motion, got {args.samples:,}")
    return P1, P2, dur


def _leg_summaries(d: Any) -> list[dict[str, Any]]:
    """Per leg: its length range [m], force range [N] and the peak |.| of the platform,
    cylinder and piston contributions to its force [N] (Lopes 2009, Figs. 4-6)."""
    from ..closedchain import stewart as st

    legs = []
    for i, name in enumerate(st.ACTUATOR_NAMES):
        legs.append({
            "leg": name,
            "length_min": float(d.lengths[:, i].min()),
            "length_max": float(d.lengths[:, i].max()),
            "force_min": float(d.tau[:, i].min()),
            "force_max": float(d.tau[:, i].max()),
            "platform_peak": float(np.abs(d.tau_platform[:, i]).max()),
            "cylinders_peak": float(np.abs(d.tau_cylinders[:, i]).max()),
            "pistons_peak": float(np.abs(d.tau_pistons[:, i]).max()),
        })
    return legs


def _general_layer_difference(params: Any, x: np.ndarray, xd: np.ndarray, xdd: np.ndarray, tau: np.ndarray) -> float:
    """Max relative difference of the actuator forces ``tau`` (shape (K, 6) [N]) from those of
    the general closed-chain layer (RNEA on the U-P-S spanning tree), on every 20th sample."""
    from ..closedchain import actuator_forces, complete_state
    from ..closedchain import stewart as st

    mech = st.stewart_closed_chain(params)
    sel = slice(None, None, 20)
    q, qd, qdd = complete_state(mech, x[sel], xd[sel], xdd[sel], q_guess=st.tree_coordinates(mech, params, x[sel]))
    tau_g = actuator_forces(mech, q, qd, qdd).tau
    return float(np.abs(tau_g - tau[sel]).max() / np.abs(tau_g).max())


def _operation_counts(result: dict[str, Any]) -> tuple[Any, Any]:
    """The operation counts of the Coriolis/centripetal matrices by the generalized momentum
    approach and by Lagrange's forms, beside the paper's Table 1, put into ``result``;
    (counts, Lagrange counts)."""
    from ..closedchain.stewart_opcount import PAPER_TABLE1, operation_counts

    counts = operation_counts()
    result["operation_counts"] = {k: {**c._asdict(), "paper": PAPER_TABLE1.get(k)} for k, c in counts.items()}
    from ..closedchain.stewart_lagrange import FORMS, lagrange_operation_counts
    from ..closedchain.stewart_opcount import PAPER_TABLE1_ALL

    lagrange_counts = {f: lagrange_operation_counts(f) for f in FORMS}
    result["operation_counts_lagrange"] = {
        f: {k: {**c._asdict(), "paper": PAPER_TABLE1_ALL[f].get(k)} for k, c in rows.items()}
        for f, rows in lagrange_counts.items()
    }
    return counts, lagrange_counts


def _operation_count_lines(counts: Any, lagrange_counts: Any) -> list[str]:
    """The text of --op-counts: both tables of operations with their headings."""
    from ..closedchain.stewart_lagrange import format_lagrange_counts
    from ..closedchain.stewart_opcount import format_counts

    return ["operations of the Coriolis/centripetal matrices (paper: Table 1, generalized momentum):",
            format_counts(counts),
            "the same matrices by Lagrange and Koditschek's form (paper: Table 1's other columns):",
            format_lagrange_counts(lagrange_counts)]


def _write_csv(path: Any, t: np.ndarray, x: np.ndarray, d: Any) -> str:
    """stewart.csv: t (K,) [s], the pose x (K, 6) [m, rad], leg lengths (K, 6) [m], forces and
    their three contributions (K, 6) each [N]; the path written."""
    header = ["t", *[f"x{k}" for k in range(6)], *[f"l{i}" for i in range(1, 7)], *[f"tau{i}" for i in range(1, 7)],
              *[f"tau_platform{i}" for i in range(1, 7)], *[f"tau_cylinders{i}" for i in range(1, 7)],
              *[f"tau_pistons{i}" for i in range(1, 7)]]
    return write_csv(path, header, [t, x, d.lengths, d.tau, d.tau_platform, d.tau_cylinders, d.tau_pistons])


def _plots(out: Any, t: np.ndarray, l: np.ndarray, ld: np.ndarray, ldd: np.ndarray, d: Any) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"leg {i}" for i in range(1, 7)]
    files = []
    fig, axes = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
    for ax, data, ylabel in zip(axes, (l, ld, ldd), ("length [m]", "velocity [m/s]", "acceleration [m/s²]")):
        ax.plot(t, data)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
    axes[0].set_title("Actuator trajectories (Lopes 2009, Fig. 4)")
    axes[0].legend(labels, ncol=3, fontsize=8)
    axes[-1].set_xlabel("time [s]")
    files.append(str(save_figure(fig, out / "stewart_fig4_actuators.png")))

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(t, d.tau)
    ax.set_title("Actuator forces (Lopes 2009, Fig. 5)")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("force [N]")
    ax.legend(labels, ncol=3, fontsize=8)
    ax.grid(True, alpha=0.3)
    files.append(str(save_figure(fig, out / "stewart_fig5_forces.png")))

    fig, axes = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
    for ax, data, title in zip(axes, (d.tau_platform, d.tau_cylinders, d.tau_pistons),
                               ("moving platform", "six cylinders", "six pistons")):
        ax.plot(t, data)
        ax.set_ylabel("force [N]")
        ax.set_title(f"contribution of the {title}", fontsize=10)
        ax.grid(True, alpha=0.3)
    axes[0].legend(labels, ncol=3, fontsize=8)
    axes[-1].set_xlabel("time [s]")
    fig.suptitle("Split of the actuator forces (Lopes 2009, Fig. 6)")
    files.append(str(save_figure(fig, out / "stewart_fig6_contributions.png")))
    return files
