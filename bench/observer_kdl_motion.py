"""The recorded motion of the observer benchmark against KDL (robot_dynamics_control's
bench_observer_kdl): a push at the tool during a computed-torque move, written as CSV.

    python bench/observer_kdl_motion.py --robot iiwa14|puma560 --out FILE.csv [--duration 3.0]
                                        [--push-at 1.0] [--push-time 1.0] [--force FX FY FZ]

The model is the robot's URDF alone, as KDL's kdl_parser reads it: no drive train (no rotor
inertia) and no friction (the URDF's joint damping and friction set to zero), since KDL's
ChainExternalWrenchEstimator models neither; the plant, the controller and both observers share
it. The move: from rest at a pose inside the joint limits, a quintic of each joint by its own
amount over --duration less 0.5 s, then at rest, under computed torque (omega = 20 rad/s, xi = 1)
at 1 kHz, integrated by RK4 with 4 substeps. The push: a force (--force [N], base axes) at the
tool's frame origin from --push-at for --push-time seconds, raised and lowered over 50 ms by a
half cosine; the plant sees J(q)^T F, held over each tick as the commands are.

Columns: ``t`` [s], then per joint (model order) ``q_<joint>`` [rad], ``qd_<joint>`` [rad/s],
``tau_<joint>`` [N m] (the command of the tick, held until the next) and ``ext_<joint>`` [N m]
(the true external joint torque J^T F of the tick, held alike). One row a tick, from t = 0.
Deterministic: no noise, so the same command writes the same file.
"""

from __future__ import annotations

import argparse
import io
import math
import sys
import warnings

import numpy as np

import robot_dynamics as rd
from robot_dynamics.commands._common import write_atomic
from robot_dynamics.control import ComputedTorque
from robot_dynamics.errors import ModelWarning
from robot_dynamics.model.registry import robot_files
from robot_dynamics.simulation import ExternalWrench, Integration, Noise, PlantOptions, Simulation, SimulationOptions
from robot_dynamics.trajectory import plan

#: Per robot: the tool's frame, the start pose (fractions of each joint's range) and the default push [N].
ROBOTS = {
    "iiwa14": ("iiwa_link_ee", (0.6, 0.35, 0.6, 0.65, 0.6, 0.4, 0.6), (-30.0, 20.0, -20.0)),
    "puma560": ("tool0", (0.55, 0.4, 0.6, 0.45, 0.55, 0.5), (-30.0, 20.0, -20.0)),
}
#: Each joint's move [rad], the main job's amounts (the first nq of them).
MOVE = np.array([0.5, -0.4, 0.3, 0.8, -0.6, 1.0, 0.5])
RAMP = 0.05  # the push's rise and fall [s]


def frictionless_model(robot: str) -> rd.RobotModel:
    """The robot's URDF alone (no drive train) with its friction set to zero: nq joints, no rotor inertia."""
    urdf, _ = robot_files(robot)
    with warnings.catch_warnings():  # the issues the robot's drive-train YAML declares accepted (the PUMA 560's link 3)
        warnings.simplefilter("ignore", ModelWarning)
        model = rd.load_urdf(urdf)
    zero = np.zeros(model.nq)
    return model.replace(viscous=zero, coulomb=zero.copy(), static_friction=None, stribeck=None,
                         rotor_inertia=zero.copy())


def push_profile(force: np.ndarray, start: float, length: float):
    """f(t) -> (6,): [force; 0] times a window from ``start`` for ``length`` s, half-cosine ramps of RAMP s."""
    def wrench(t: float) -> np.ndarray:
        s = t - start
        if s < 0.0 or s > length:
            return np.zeros(6)
        edge = min(s, length - s, RAMP) / RAMP
        scale = 0.5 - 0.5 * math.cos(math.pi * edge)
        return np.concatenate([scale * force, np.zeros(3)])
    return wrench


def record(robot: str, duration: float, push_at: float, push_time: float, force: np.ndarray):
    """The simulated run: (model, result) of the move with the push."""
    frame, fractions, _ = ROBOTS[robot]
    model = frictionless_model(robot)
    q0 = model.lower + np.asarray(fractions) * (model.upper - model.lower)
    move = plan("quintic", q0, q0 + MOVE[: model.nq], duration=duration - 0.5)
    options = SimulationOptions(integration=Integration(rate=1000.0, substeps=4),
                                noise=Noise(wrench=ExternalWrench(frame, push_profile(force, push_at, push_time))),
                                plant=PlantOptions(friction=False))
    sim = Simulation(model, ComputedTorque(model, omega=20.0, xi=1.0), move, duration, options)
    sim.reset(q0)
    return model, sim.run()


def csv_text(model: rd.RobotModel, result) -> str:
    """The CSV: t, then q_, qd_, tau_ and ext_ of each joint (model order), full precision."""
    names = model.joint_names
    header = ["t"] + [f"{kind}_{j}" for kind in ("q", "qd", "tau", "ext") for j in names]
    table = np.column_stack([result.t, result.q, result.qd, result.tau, result.disturbance])
    out = io.StringIO()
    out.write(",".join(header) + "\n")
    np.savetxt(out, table, delimiter=",", fmt="%.17g")
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", choices=sorted(ROBOTS), default="iiwa14")
    parser.add_argument("--out", required=True, help="the CSV to write")
    parser.add_argument("--duration", type=float, default=3.0, help="the run [s] (>= 1.5)")
    parser.add_argument("--push-at", type=float, default=1.0, help="the push's start [s]")
    parser.add_argument("--push-time", type=float, default=1.0, help="the push's length [s] (>= 0.1)")
    parser.add_argument("--force", type=float, nargs=3, default=None, help="the push's force [N], base axes")
    args = parser.parse_args(argv)
    if not (args.duration >= 1.5 and args.push_time >= 2 * RAMP and 0.0 <= args.push_at < args.duration):
        parser.error("expected --duration >= 1.5 s, --push-time >= 0.1 s and 0 <= --push-at < --duration")
    force = np.asarray(args.force if args.force is not None else ROBOTS[args.robot][2], dtype=float)
    model, result = record(args.robot, args.duration, args.push_at, args.push_time, force)
    path = write_atomic(args.out, csv_text(model, result))
    peak = float(np.max(np.abs(result.disturbance)))
    print(f"wrote {path}: {args.robot}, {len(result.t)} ticks over {args.duration:g} s, "
          f"push of {np.linalg.norm(force):.1f} N at {ROBOTS[args.robot][0]} from t = {args.push_at:g} s "
          f"for {args.push_time:g} s (largest external joint torque {peak:.2f} N m)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
