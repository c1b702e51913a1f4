"""Outputs of the core recorded before the compiled kernels replaced the numpy recursions.

``python test/core_reference.py`` wrote ``test/data/core_reference.npz`` once, with the numpy
implementation of the core (commit "RobotModel: static friction ..."); test_core_reference.py
checks that every public algorithm still gives those numbers to 1e-12 relative. The cases
cover every bundled robot (the geared three_dof_geared with its coupled gear train, the PUMA
with its rotor inertias and friction), random trees with prismatic, continuous, fixed, mimic
joints and massless links, external wrenches, static friction ([7.26]) and another gravity.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import numpy as np

import robot_dynamics as rd
from robot_dynamics.testing import random_tree_urdf

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "core_reference.npz")
N_STATES = 5


def models() -> Iterator[tuple[str, rd.RobotModel]]:
    """The recorded models, by case name."""
    for name in rd.list_robots():
        yield name, rd.load_robot(name)
    for seed in range(3):
        rng = np.random.default_rng(500 + seed)
        yield f"tree{seed}", rd.load_urdf(random_tree_urdf(rng, 9, n_fixed=2, mimic=seed == 2))
    puma = rd.load_robot("puma560")
    yield "puma560_static", puma.replace(static_friction=1.6 * puma.coulomb, stribeck=np.full(puma.nq, 8.0))


def states(model: rd.RobotModel, seed: int) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    q = rng.uniform(lo, hi, (N_STATES, model.nq))
    qd = rng.normal(0.0, 1.5, (N_STATES, model.nq))
    qdd = rng.normal(0.0, 3.0, (N_STATES, model.nq))
    tau = rng.normal(0.0, 5.0, (N_STATES, model.nq))
    wrench = rng.normal(0.0, 10.0, (N_STATES, 6))
    return q, qd, qdd, tau, wrench


def outputs(model: rd.RobotModel, seed: int) -> dict[str, Callable[[], np.ndarray]]:
    """Each recorded quantity as a thunk (evaluated by the recorder and by the test)."""
    q, qd, qdd, tau, wrench = states(model, seed)
    tool = model.frame_names[-1]  # the frame the values were recorded for
    mid = model.frame_names[len(model.frame_names) // 2]
    g = np.array([0.3, -0.2, -9.6])
    out: dict[str, Callable[[], np.ndarray]] = {
        "rnea": lambda: rd.rnea(model, q, qd, qdd),
        "rnea_nofriction_g": lambda: rd.rnea(model, q, qd, qdd, gravity=g, friction=False),
        "rnea_fext": lambda: rd.rnea(model, q, qd, qdd, f_ext={tool: wrench, mid: 0.5 * wrench}),
        "crba": lambda: rd.crba(model, q),
        "gravity": lambda: rd.gravity_torques(model, q),
        "bias": lambda: rd.bias_torques(model, q, qd),
        "coriolis": lambda: rd.coriolis_matrix(model, q, qd),
        "kinetic": lambda: rd.kinetic_energy(model, q, qd),
        "potential": lambda: rd.potential_energy(model, q),
        "frame_poses": lambda: rd.frame_poses(model, q),
        "jacobian": lambda: rd.jacobian(model, q, tool),
        "jacobian_mid": lambda: rd.jacobian(model, q, mid),
        "frame_velocity": lambda: rd.frame_velocity(model, q, qd, tool),
        "jdot_qd": lambda: rd.jacobian_dot_qdot(model, q, qd, tool),
        "rnea_one": lambda: rd.rnea(model, q[0], qd[0], qdd[0]),
        "crba_one": lambda: rd.crba(model, q[0]),
    }
    if model.total_mass() > 0:
        out["aba"] = lambda: rd.aba(model, q, qd, tau)
        out["aba_fext_g"] = lambda: rd.aba(model, q, qd, tau, gravity=g, f_ext={tool: wrench})
        out["aba_one"] = lambda: rd.aba(model, q[0], qd[0], tau[0])
    return out


def record() -> None:
    data = {}
    for k, (case, model) in enumerate(models()):
        for key, thunk in outputs(model, 100 + k).items():
            data[f"{case}/{key}"] = thunk()
    np.savez_compressed(PATH, **data)
    print(f"recorded {len(data)} arrays to {PATH}")


if __name__ == "__main__":
    record()
