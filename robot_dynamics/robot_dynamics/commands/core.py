"""Core subcommands: ``info``, ``torque`` (inverse dynamics), ``accel`` (direct dynamics),
``mass-matrix``."""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from ._common import CommonOptions, emit, format_table, load_model, state_vector


def register(sub: Any, parents: CommonOptions) -> None:
    robot = [parents.robot, parents.json]
    p = sub.add_parser("info", parents=robot, help="describe a robot: joints, limits, masses")
    p.add_argument("--list", action="store_true", help="list the bundled robots and exit")
    p.set_defaults(func=run_info)

    title = "state (comma lists in joint order; default zeros)"
    position = argparse.ArgumentParser(add_help=False)
    position.add_argument_group(title).add_argument("--q", help="joint positions [rad or m]")
    motion = argparse.ArgumentParser(add_help=False)
    g = motion.add_argument_group(title)
    g.add_argument("--qd", help="joint velocities [rad/s or m/s]")
    g.add_argument("--gravity", help="gravity vector in the base frame, default 0,0,-9.81")
    g.add_argument("--no-friction", action="store_true", help="leave joint friction out")

    p = sub.add_parser("torque", parents=[*robot, position, motion], help="inverse dynamics: joint torques for q, qd, qdd")
    _group(p, title).add_argument("--qdd", help="joint accelerations [rad/s^2 or m/s^2]")
    p.set_defaults(func=run_torque)

    p = sub.add_parser("accel", parents=[*robot, position, motion], help="direct dynamics: joint accelerations for q, qd, tau")
    _group(p, title).add_argument("--tau", help="joint torques [N m or N] (default: zero, the arm falls)")
    p.set_defaults(func=run_accel)

    p = sub.add_parser("mass-matrix", parents=[*robot, position], help="joint-space inertia matrix A(q)")
    p.set_defaults(func=run_mass_matrix)

    p = sub.add_parser("urdf", parents=parents, help="print the robot as URDF (e.g. a DH YAML table converted), "
                       "or write it into --out")
    p.set_defaults(func=run_urdf)


def _group(parser: argparse.ArgumentParser, title: str) -> Any:
    """The parser's argument group of that title (one copied from a parent), so that an option of
    the state lands beside the others in --help."""
    for group in parser._action_groups:  # noqa: SLF001 - argparse has no public look-up
        if group.title == title:
            return group
    return parser.add_argument_group(title)


def run_info(args: argparse.Namespace) -> int:
    from ..model import DEFAULT_ROBOT, list_robots

    if args.list:
        robots = list_robots()
        emit(args, {"robots": robots, "default": DEFAULT_ROBOT},
             "\n".join(f"{r}{'  (default)' if r == DEFAULT_ROBOT else ''}" for r in robots))
        return 0
    from ..model import check_model

    m = load_model(args, report_issues=False)  # listed below, declared ones too
    issues = check_model(m, include_accepted=True)
    joints = [
        {
            "name": n,
            "type": "continuous" if m.continuous[i] else m.joint_type[m.body_joint_names.index(n)],
            "lower": float(m.lower[i]),
            "upper": float(m.upper[i]),
            "velocity": float(m.velocity_limit[i]),
            "effort": float(m.effort_limit[i]),
            "viscous": float(m.viscous[i]),
            "coulomb": float(m.coulomb[i]),
            "static_friction": None if m.static_friction is None else float(m.static_friction[i]),
            "stribeck": None if m.stribeck is None else float(m.stribeck[i]),
            "rotor_inertia": float(m.rotor_inertia[i]),
        }
        for i, n in enumerate(m.joint_names)
    ]
    data = {
        "name": m.name,
        "base_link": m.base_link,
        "end_effector": m.end_effector,
        "nq": m.nq,
        "bodies": m.nb,
        "frames": len(m.frame_names),
        "total_mass": m.total_mass(),
        "mimic_joints": [n for n in m.body_joint_names if n not in m.joint_names],
        "joints": joints,
        "model_issues": [{"kind": i.kind, "name": i.name, "message": i.message, "accepted": i.accepted} for i in issues],
    }

    def text() -> str:
        head = (
            f"robot {m.name}: {m.nq} joints, {m.nb} moving bodies, {len(m.frame_names)} frames, "
            f"moving mass {m.total_mass():.3f} kg\nbase {m.base_link!r}, end effector {m.end_effector!r}"
        )
        if data["mimic_joints"]:
            head += f"\nmimic joints: {data['mimic_joints']}"
        rows = [[j["name"], j["type"], j["lower"], j["upper"], j["velocity"], j["effort"], j["viscous"], j["coulomb"], j["rotor_inertia"]] for j in joints]
        heads = ["joint", "type", "lower", "upper", "velocity", "effort", "Fv", "Fc", "Ia"]
        if m.static_friction is not None:  # Khalil [7.26]: static friction and Stribeck decay
            heads[8:8] = ["Fst", "B"]
            for r, j in zip(rows, joints):
                r[8:8] = [j["static_friction"], j["stribeck"]]
        checks = [f"model checks: {len(issues) or 'no'} issue{'' if len(issues) == 1 else 's'}"
                  + (f" ({sum(i.accepted is not None for i in issues)} declared accepted)" if issues else "")]
        checks += [f"  {i.kind}: {i.message}" + (f" [accepted: {i.accepted}]" if i.accepted else "") for i in issues]
        return head + "\n\n" + format_table(heads, rows) + "\n\n" + "\n".join(checks)

    emit(args, data, text)
    return 0


def _gravity(args: argparse.Namespace) -> np.ndarray | None:
    if getattr(args, "gravity", None) is None:
        return None
    from ._common import parse_vector

    return parse_vector(args.gravity, 3, "gravity")


def run_torque(args: argparse.Namespace) -> int:
    from ..dynamics import gravity_torques, rnea

    m = load_model(args)
    q, qd, qdd = (state_vector(args, k, m) for k in ("q", "qd", "qdd"))
    g = _gravity(args)
    tau = rnea(m, q, qd, qdd, gravity=g, friction=not args.no_friction)
    tau_g = gravity_torques(m, q, gravity=g)
    use = np.where(np.isfinite(m.effort_limit) & (m.effort_limit > 0), np.abs(tau) / m.effort_limit * 100, np.nan)
    data = {"robot": m.name, "joint_names": list(m.joint_names), "q": q, "qd": qd, "qdd": qdd,
            "tau": tau, "gravity_torque": tau_g, "effort_limit": m.effort_limit}
    rows = [[n, q[i], qd[i], qdd[i], tau[i], tau_g[i], "-" if np.isnan(use[i]) else f"{use[i]:.1f}%"]
            for i, n in enumerate(m.joint_names)]
    emit(args, data, lambda: f"inverse dynamics of {m.name} [N m or N]\n"
         + format_table(["joint", "q", "qd", "qdd", "tau", "gravity", "of limit"], rows))
    return 0


def run_accel(args: argparse.Namespace) -> int:
    from ..dynamics import aba

    m = load_model(args)
    q, qd, tau = (state_vector(args, k, m) for k in ("q", "qd", "tau"))
    qdd = aba(m, q, qd, tau, gravity=_gravity(args), friction=not args.no_friction)
    data = {"robot": m.name, "joint_names": list(m.joint_names), "q": q, "qd": qd, "tau": tau, "qdd": qdd}
    rows = [[n, q[i], qd[i], tau[i], qdd[i]] for i, n in enumerate(m.joint_names)]
    emit(args, data, lambda: f"direct dynamics of {m.name} [rad/s^2 or m/s^2]\n"
         + format_table(["joint", "q", "qd", "tau", "qdd"], rows))
    return 0


def run_mass_matrix(args: argparse.Namespace) -> int:
    from ..dynamics import crba

    m = load_model(args)
    q = state_vector(args, "q", m)
    M = crba(m, q)
    data = {"robot": m.name, "joint_names": list(m.joint_names), "q": q, "mass_matrix": M}
    rows = [[n, *M[i]] for i, n in enumerate(m.joint_names)]
    emit(args, data, lambda: f"joint-space inertia matrix A(q) of {m.name} [kg m^2, kg m, kg]\n"
         + format_table(["", *m.joint_names], rows))
    return 0


def run_urdf(args: argparse.Namespace) -> int:
    from ..errors import ModelError
    from ._common import output_dir, write_atomic

    m = load_model(args)
    if m.description is None:
        raise ModelError(f"robot {m.name!r} has no URDF description")
    path = write_atomic(output_dir(args) / f"{m.name}.urdf", m.description) if args.out else None
    if args.json:
        emit(args, {"robot": m.name, "urdf": m.description, "file": None if path is None else str(path)}, "")
    elif path is not None:
        print(path)
    else:
        print(m.description, end="")
    return 0
