"""``robot-dynamics quadruped-yaw`` and ``quadruped-pitch``: the two scenarios of section 4 of
Liu & Ben-Tzvi (quadruped with a 2-dof tail, feet on the ground, virtual work principle).

* ``quadruped-yaw`` (section 4.1): forward simulation from rest under the torque profile
  tau_a = [0, 0, 15, 15, 20.5, 20.5, -7.7, -10 sin(31.4 t)], tau_p = 0 (Fig. 6).
* ``quadruped-pitch`` (section 4.2): inverse dynamics of the pitch motion, then forward
  simulation under the required torques, without and with the feedback of Fig. 7 (Figs. 8-9).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ..io import save_figure
from ._common import CommonOptions, emit, format_table, output_dir, write_csv

_NAMES = ("p_x", "p_y", "p_z", "phi_x", "phi_y", "phi_z", "theta_ta", "theta_tb")


def register(sub: Any, parents: CommonOptions) -> None:
    common = argparse.ArgumentParser(add_help=False)
    g = common.add_argument_group("quadruped")
    g.add_argument("--params", help="parameters YAML (default: the bundled Table 1, config/quadruped_tail.yaml)")
    g.add_argument("--dt", type=float, default=1e-3, help="RK4 step [s] (default 1e-3; the paper uses 1e-4)")
    g.add_argument("--check", action="store_true",
                   help="cross-check the model with the general closed-chain layer at a few samples")
    g.add_argument("--no-plot", action="store_true", help="do not write the PNGs")

    p = sub.add_parser(
        "quadruped-yaw", parents=[parents.json, parents.out, common],
        help="quadruped with a tail (Liu & Ben-Tzvi 4.1): forward simulation of the yaw manoeuvre; CSV + PNG",
        description="Forward dynamics M nu_dot + C + G = F of the quadruped with its feet on the ground, from rest "
        "under the torque profile of section 4.1. Writes quadruped_yaw.csv and quadruped_yaw.png into --out. "
        "The run stops with a report if a leg leaves its workspace.",
    )
    p.add_argument("--duration", type=float, default=0.35, help="simulated time [s] (default 0.35)")
    p.set_defaults(func=run_yaw)

    p = sub.add_parser(
        "quadruped-pitch", parents=[parents.json, parents.out, common],
        help="quadruped with a tail (Liu & Ben-Tzvi 4.2): inverse dynamics of the pitch motion, forward "
        "simulation with and without the feedback of Fig. 7; CSV + PNGs",
        description="Required torques of the pitch motion by virtual work (eq. 41, tau_p = 0), then three forward "
        "runs: from the desired initial state (inverse-then-forward consistency), from rest without "
        "feedback, and from rest with the compensation tau_c of Fig. 7. Writes quadruped_pitch.csv, "
        "quadruped_pitch_motion.png and quadruped_pitch_torques.png into --out.",
    )
    p.add_argument("--duration", type=float, default=0.9, help="simulated time [s] (default 0.9, three periods)")
    p.add_argument("--kp", type=float, default=400.0, help="feedback stiffness [1/s^2] (default 400)")
    p.add_argument("--kd", type=float, default=40.0, help="feedback damping [1/s] (default 40)")
    p.set_defaults(func=run_pitch)


def _setup(args: argparse.Namespace) -> Any:
    from ..closedchain.quadruped_params import load_quadruped_params
    from ..errors import InputError

    for name in ("duration", "dt"):
        v = getattr(args, name)
        if not np.isfinite(v) or v <= 0:
            raise InputError(f"--{name} must be a positive number, got {v}")
    if args.dt > args.duration:
        raise InputError(f"--dt ({args.dt}) must not exceed --duration ({args.duration})")
    from ._common import check_steps

    check_steps(args.duration, args.dt, "--duration / --dt")
    return load_quadruped_params(args.params)


def _check(params: Any, q: np.ndarray, nu: np.ndarray, nud: np.ndarray) -> dict[str, float]:
    """Largest relative differences paper model vs. general layer at the given states."""
    from ..closedchain.quadruped import QuadrupedTail, rates_from_velocity
    from ..closedchain.quadruped_tree import quadruped_mechanism

    quad, mech = QuadrupedTail(params), quadruped_mechanism(params)
    qd, qdd = rates_from_velocity(q, nu, nud)
    ta, tg = quad.inverse_dynamics(q, qd, qdd), mech.inverse_dynamics(q, qd, qdd)
    aa, ag = quad.forward_dynamics(q, qd, ta), mech.forward_dynamics(q, qd, ta)
    Ma, Mg = quad.mass_matrix(q), mech.mass_matrix(q)
    rel = lambda a, b: float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))  # noqa: E731
    return {"samples": float(len(q)), "torques": rel(ta, tg), "accelerations": rel(aa, ag), "mass_matrix": rel(Ma, Mg)}


def run_yaw(args: argparse.Namespace) -> int:
    from ..closedchain.quadruped_sim import yaw_manoeuvre

    params = _setup(args)
    sim = yaw_manoeuvre(params, args.duration, args.dt)
    out = output_dir(args)
    files = [write_csv(out / "quadruped_yaw.csv", ["t", *_NAMES, *(f"tau_a_{k}" for k in range(8)), "energy", "work"],
                  [sim.t, sim.q, sim.tau_a, sim.kinetic + sim.potential, sim.work])]
    if not args.no_plot and len(sim.t) > 1:
        files.append(_plot_yaw(out, sim))
    check = _check(params, sim.q[:: max(1, len(sim.t) // 4)], sim.nu[:: max(1, len(sim.t) // 4)],
                   sim.nu_dot[:: max(1, len(sim.t) // 4)]) if args.check else None
    final = sim.q[-1]
    data = {
        "scenario": "section 4.1, yaw manoeuvre",
        "ok": sim.ok,
        "message": sim.message,
        "t_end": float(sim.t[-1]),
        "final_q": dict(zip(_NAMES, final)),
        "energy_balance_error_J": float(np.max(np.abs(sim.energy_error))),
        "check": check,
        "files": files,
    }

    def text() -> str:
        idx = np.unique(np.linspace(0, len(sim.t) - 1, 8).astype(int))
        rows = [[float(sim.t[k]), *(float(v) for v in sim.q[k])] for k in idx]
        lines = [f"quadruped-yaw (Liu & Ben-Tzvi 4.1): {sim.message}",
                 format_table(["t [s]", *_NAMES], rows),
                 f"energy balance |E - E0 - W| max {data['energy_balance_error_J']:.3g} J"]
        if check:
            lines.append("general layer agreement (max relative): torques {torques:.2e}, accelerations "
                         "{accelerations:.2e}, mass matrix {mass_matrix:.2e}".format(**check))
        lines += [f"wrote {f}" for f in files]
        return "\n".join(lines)

    emit(args, data, text)
    if not sim.ok:
        _stopped("quadruped-yaw", sim.message)
    return 0  # the report is the answer, a stopped run's too (it says where and why)


def run_pitch(args: argparse.Namespace) -> int:
    from ..closedchain.quadruped import inverse_dynamics, kinematics, velocity_from_rates
    from ..closedchain.quadruped_sim import pitch_motion, pitch_trajectory
    from ..errors import InputError

    params = _setup(args)
    if not (np.isfinite(args.kp) and np.isfinite(args.kd) and args.kp >= 0 and args.kd >= 0):
        raise InputError(f"--kp and --kd must be >= 0, got {args.kp}, {args.kd}")
    # the gains must stay resolvable by the RK4 step: kp dt^2 and kd dt well below 1
    if args.kp * args.dt**2 > 0.5 or args.kd * args.dt > 0.5:
        raise InputError(f"--kp {args.kp:g} / --kd {args.kd:g} are too stiff for --dt {args.dt:g} s (RK4 diverges): "
                         f"keep kp <= {0.5 / args.dt**2:g} and kd <= {0.5 / args.dt:g}, or lower --dt")
    res = pitch_motion(params, args.duration, args.dt, args.kp, args.kd)
    ol, rest, cl = res.open_loop, res.open_loop_rest, res.closed_loop
    err = lambda s: np.abs(s.q - res.q_desired[: len(s.t)]).max(axis=1)  # noqa: E731
    tc = np.abs(res.tau_compensation).max(axis=1)
    cond = np.linalg.cond(kinematics(params, res.q_desired).J_tau_a)
    # the redundancy of section 2.4: the minimum-norm split over all 14 actuators
    qd_des, qdd_des = pitch_trajectory(params, res.t)[1:]
    nu_des, nud_des = velocity_from_rates(res.q_desired, qd_des, qdd_des)
    mn = inverse_dynamics(params, res.q_desired, nu_des, nud_des, distribution="min_norm")
    mn_max = float(max(np.abs(mn.tau_a).max(), np.abs(mn.tau_p).max()))
    out = output_dir(args)
    n = len(cl.t)
    files = [write_csv(out / "quadruped_pitch.csv",
                  ["t", *(f"q_desired_{k}" for k in _NAMES), *(f"q_closed_{k}" for k in _NAMES),
                   *(f"tau_required_{k}" for k in range(8)), *(f"tau_c_{k}" for k in range(8))],
                  [res.t[:n], res.q_desired[:n], cl.q, res.tau_required[:n], res.tau_compensation])]
    if not args.no_plot:
        files += _plot_pitch(out, res)
    check = None
    if args.check:
        idx = slice(None, None, max(1, len(res.t) // 4))
        q, qd, qdd = pitch_trajectory(params, res.t[idx])
        nu, nud = velocity_from_rates(q, qd, qdd)
        check = _check(params, q, nu, nud)
    tail = slice(int(0.8 * n), None)
    data = {
        "scenario": "section 4.2, pitch motion",
        "open_loop_from_desired": {"ok": ol.ok, "message": ol.message, "max_error": float(err(ol).max())},
        "open_loop_from_rest": {"ok": rest.ok, "message": rest.message, "max_error": float(err(rest).max())},
        "closed_loop_from_rest": {"ok": cl.ok, "message": cl.message, "max_error": float(err(cl).max()),
                                  "final_error": float(err(cl)[-1])},
        "compensation_torque_max_Nm": {"start": float(tc[0]), "last_20_percent": float(tc[tail].max())},
        "required_torque_max_Nm": dict(zip(("ha_1", "ha_2", "k_1", "k_2", "k_3", "k_4", "ta", "tb"),
                                           np.abs(res.tau_required).max(axis=0))),
        "min_norm_all_14_max_Nm": mn_max,
        "J_tau_a_condition": {"min": float(cond.min()), "max": float(cond.max())},
        "gains": {"kp": res.kp, "kd": res.kd},
        "check": check,
        "files": files,
    }

    def text() -> str:
        rows = [
            ["from desired state, no feedback", ol.message, float(err(ol).max())],
            ["from rest, no feedback", rest.message, float(err(rest).max())],
            ["from rest, feedback (Fig. 7)", cl.message, float(err(cl).max())],
        ]
        lines = ["quadruped-pitch (Liu & Ben-Tzvi 4.2): required torques by virtual work (eq. 41, tau_p = 0)",
                 format_table(["forward run", "status", "max |q - q_d|"], rows),
                 f"compensation torque max |tau_c|: {tc[0]:.4g} N m at t = 0, {tc[tail].max():.4g} N m over the "
                 f"last 20% (decaying)",
                 f"J_tau_a condition number along the motion: {cond.min():.4g} .. {cond.max():.4g}",
                 f"largest required torque: {np.abs(res.tau_required).max():.4g} N m with tau_p = 0 (eq. 41), "
                 f"{mn_max:.4g} N m with the minimum-norm split over all 14 actuators"]
        if check:
            lines.append("general layer agreement (max relative): torques {torques:.2e}, accelerations "
                         "{accelerations:.2e}, mass matrix {mass_matrix:.2e}".format(**check))
        lines += [f"wrote {f}" for f in files]
        return "\n".join(lines)

    emit(args, data, text)
    for what, run in (("open loop", ol), ("closed loop", cl)):
        if not run.ok:
            _stopped("quadruped-pitch", f"{what}: {run.message}")
    return 0  # the report is the answer, a stopped run's too (it says where and why)


def _stopped(command: str, message: str) -> None:
    """One line on stderr for a run that stopped early (its report, on stdout, has the rest)."""
    import sys

    print(f"robot-dynamics {command}: note: {' '.join(str(message).split())}", file=sys.stderr)


def _plot_yaw(out: Any, sim: Any) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    for k, lab in enumerate(("p_x", "p_y", "p_z")):
        axes[0].plot(sim.t, sim.q[:, k] - sim.q[0, k], label=f"{lab} - {sim.q[0, k]:g}")
    axes[0].set_ylabel("torso position change [m]")
    for k, lab in ((3, "phi_x"), (4, "phi_y"), (5, "phi_z")):
        axes[1].plot(sim.t, np.degrees(sim.q[:, k]), label=lab)
    axes[1].set_ylabel("torso angles [deg]")
    for k, lab in ((6, "theta_ta"), (7, "theta_tb")):
        axes[2].plot(sim.t, np.degrees(sim.q[:, k]), label=lab)
    axes[2].set_ylabel("tail angles [deg]")
    axes[2].set_xlabel("t [s]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    fig.suptitle("Quadruped with tail, yaw manoeuvre (section 4.1)")
    return str(save_figure(fig, out / "quadruped_yaw.png"))


def _plot_pitch(out: Any, res: Any) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    fig, axes = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    for ax, (k, lab) in zip(axes, ((3, "phi_x (pitch)"), (7, "theta_tb"))):
        ax.plot(res.t, np.degrees(res.q_desired[:, k]), "k-", lw=2, label="desired")
        r = res.open_loop_rest
        ax.plot(r.t, np.degrees(r.q[:, k]), "o", ms=3, mfc="none", markevery=8, label="no feedback, from rest")
        ax.plot(res.closed_loop.t, np.degrees(res.closed_loop.q[:, k]), "--", label="with feedback (Fig. 7)")
        ax.set_ylabel(f"{lab} [deg]")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=8)
    axes[-1].set_xlabel("t [s]")
    fig.suptitle("Quadruped with tail, pitch motion (section 4.2, Fig. 8)")
    files.append(str(save_figure(fig, out / "quadruped_pitch_motion.png")))

    fig, axes = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    labels = ("ha_1", "ha_2", "k_1", "k_2", "k_3", "k_4", "ta", "tb")
    for k, lab in enumerate(labels):
        axes[0].plot(res.t, res.tau_required[:, k], label=lab)
    axes[0].set_ylabel("required tau_a [N m]")
    n = len(res.closed_loop.t)
    for k, lab in enumerate(labels):
        axes[1].plot(res.t[:n], res.tau_compensation[:, k], label=lab)
    axes[1].set_yscale("symlog", linthresh=1e-2)
    axes[1].set_ylabel("compensation tau_c [N m]")
    axes[1].set_xlabel("t [s]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize=7, ncol=4)
    fig.suptitle("Required and compensation torques (section 4.2, Fig. 9)")
    files.append(str(save_figure(fig, out / "quadruped_pitch_torques.png")))
    return files
