"""Draw docs/cartesian_impedance_iiwa14.png, the iiwa14 held by the Cartesian impedance, pushed, and
docs/cartesian_velocity_barrier_iiwa14.png, its joints' speeds when the target jumps.

    python docs/cartesian_figure.py [PUSHED.png [JUMP.png]]

Simulations at 1 kHz (RK4, the bundled model with its friction in the plant and the controller),
the tool held at its pose with 1000 N/m and 100 N m/rad, damping ratio 0.7. The first: a push of
10 N along x at the tool from 0.5 s to 2.0 s; the figure shows the tool's displacement against
the static prediction F / K, and the joint velocities (the null space at rest). The second: the
target jumps 0.43 m toward the base at 0.1 s; each joint's speed over its velocity limit with the
velocity barrier and without it (the model's velocity limits removed).
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import robot_dynamics as rd  # noqa: E402
from robot_dynamics.control import CartesianImpedance, TaskReference  # noqa: E402
from robot_dynamics.kinematics import frame_pose  # noqa: E402
from robot_dynamics.simulation import ExternalWrench, Noise, PlantOptions, Simulation, SimulationOptions  # noqa: E402

Q0 = np.array([0.2, 0.6, -0.3, -1.2, 0.4, 0.9, 0.1])
FORCE = np.array([10.0, 0.0, 0.0, 0.0, 0.0, 0.0])
STIFFNESS = np.array([1000.0, 1000.0, 1000.0, 100.0, 100.0, 100.0])


PLANT = PlantOptions(friction=True, coulomb_smoothing=0.02)


def main(out: Path) -> None:
    model = rd.load_robot("iiwa14")
    T0 = frame_pose(model, Q0, model.end_effector)
    hold = TaskReference(T0, np.zeros(6), np.zeros(6))
    push = ExternalWrench(model.end_effector, lambda t: FORCE if 0.5 <= t < 2.0 else np.zeros(6))
    options = SimulationOptions(noise=Noise(wrench=push), plant=PLANT)
    sim = Simulation(model, CartesianImpedance(model, STIFFNESS, 0.7), lambda t: hold, 3.0, options)
    sim.reset(Q0)
    res = sim.run()
    p = np.array([frame_pose(model, q, model.end_effector)[:3, 3] for q in res.q]) - T0[:3, 3]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for k, axis in enumerate("xyz"):
        ax1.plot(res.t, 1e3 * p[:, k], label=f"tool {axis}")
    ax1.axhline(1e3 * FORCE[0] / STIFFNESS[0], color="k", ls="--", lw=0.8, label="F / K = 10 mm")
    ax1.axvspan(0.5, 2.0, color="0.9", label="10 N push along x")
    ax1.set_ylabel("displacement [mm]")
    ax1.set_title("iiwa14, Cartesian impedance 1000 N/m, damping ratio 0.7: a 10 N push at the tool")
    ax1.legend(loc="upper right", fontsize=8)
    ax2.plot(res.t, res.qd, lw=0.8)
    ax2.set_ylabel("joint velocities [rad/s]")
    ax2.set_xlabel("t [s]")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def jump(out: Path) -> None:
    model = rd.load_robot("iiwa14")
    T0 = frame_pose(model, Q0, model.end_effector)
    T1 = T0.copy()
    T1[:3, 3] += [-0.35, 0.0, -0.25]
    target = lambda t: TaskReference(T0 if t < 0.1 else T1, np.zeros(6), np.zeros(6))  # noqa: E731
    unlimited = model.replace(velocity_limit=np.full(model.nq, np.inf))
    fig, axes = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for ax, controller_model, what in ((axes[0], unlimited, "without the velocity barrier"),
                                       (axes[1], model, "with the velocity barrier")):
        sim = Simulation(model, CartesianImpedance(controller_model, STIFFNESS, 0.7), target, 1.1,
                         SimulationOptions(plant=PLANT))
        sim.reset(Q0)
        res = sim.run()
        speed = np.abs(res.qd) / model.velocity_limit
        for k in range(model.nq):
            ax.plot(res.t, speed[:, k], lw=0.8, label=f"joint {k + 1}")
        ax.axhline(1.0, color="k", ls="--", lw=0.8, label="velocity limit")
        ax.set_ylabel("|qd| / limit")
        ax.set_title(f"{what}: at most {speed.max():.4f} times a limit", fontsize=10)
    axes[0].legend(loc="upper right", fontsize=7, ncol=2)
    axes[1].set_xlabel("t [s]")
    fig.suptitle("iiwa14, Cartesian impedance 1000 N/m: the target jumps 0.43 m at 0.1 s")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("cartesian_impedance_iiwa14.png"))
    jump(Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).with_name("cartesian_velocity_barrier_iiwa14.png"))
