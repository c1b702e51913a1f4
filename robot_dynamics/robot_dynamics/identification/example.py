"""A complete identification without hardware: a simulated arm that differs from its URDF.

The "true" arm is the nominal model with every mass and inertia off by up to ``spread``
(tens of percent), centres of mass moved, friction and rotor inertias changed. It tracks an
excitation under computed torque built on the nominal model (``simulation.simulate``); the
recording gets encoder quantisation, position noise, effort noise and effort quantisation, and
is written through the project's rosbag2 writer, so identification reads it as it reads a
real arm's bag.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from ..model.robot_model import RobotModel
from ..trajectory.base import Trajectory

__all__ = ["Noise", "perturbed_arm", "record_simulated"]

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Noise:
    """Measurement imperfections of a real arm's joint states.

    Attributes:
        encoder_bits: position quantisation 2 pi / 2^bits [rad] (17-bit absolute encoders).
        position: standard deviation of the position noise [rad].
        effort: standard deviation of the effort noise, as a fraction of each effort limit
            (motor-current noise of servo drives: about 0.5 %).
        effort_step: effort quantisation [N m].
    """

    encoder_bits: int = 17
    position: float = 2e-5
    effort: float = 0.005
    effort_step: float = 0.01


def perturbed_arm(model: RobotModel, *, spread: float = 0.3, seed: int = 0) -> RobotModel:
    """The nominal model with masses, inertias, centres of mass, rotor inertias and friction
    off by up to ``spread`` (relative); Coulomb and viscous friction and a rotor inertia added
    where the model has none.
    Inertias stay physically consistent (scaled, then rotated by a small random rotation)."""
    from scipy.spatial.transform import Rotation

    rng = np.random.default_rng(seed)
    nb, nq = model.nb, model.nq
    f = 1.0 + rng.uniform(-spread, spread, nb)
    R = Rotation.from_rotvec(rng.normal(scale=0.1, size=(nb, 3))).as_matrix()
    inertia = np.einsum("bij,bjk,blk->bil", R, model.inertia_com, R) * (1.0 + rng.uniform(-spread, spread, nb))[:, None, None]
    com = model.com + rng.uniform(-0.02, 0.02, (nb, 3))
    viscous = np.where(model.viscous > 0, model.viscous, 0.5) * (1.0 + rng.uniform(-spread, spread, nq))
    coulomb = np.where(model.coulomb > 0, model.coulomb, 1.0) * (1.0 + rng.uniform(-spread, spread, nq))
    # CAD leaves out the motors and gears: where the model has no rotor inertia the arm gets the
    # armature of a typical servo with a 100:1 gear (N^2 Jm = 1e4 x 1e-5 kg m^2 = 0.1 kg m^2).
    rotor = np.where(model.rotor_inertia > 0, model.rotor_inertia, 0.1) * (1.0 + rng.uniform(-spread, spread, nq))
    return model.replace(mass=model.mass * f, com=com, inertia_com=inertia, viscous=viscous, coulomb=coulomb,
                         rotor_inertia=rotor, name=f"{model.name}_true")


def record_simulated(
    true: RobotModel,
    nominal: RobotModel,
    trajectory: Trajectory,
    path: str | os.PathLike[str],
    *,
    noise: Noise = Noise(),
    rate: float = 1000.0,
    seed: int = 0,
    start_time: float = 1.7e9,
) -> Path:
    """Run ``trajectory`` on the true arm under computed torque (nominal model) and write the
    noisy joint states (positions, velocities, efforts) to the rosbag2 folder ``path``."""
    from ..control import ComputedTorque
    from ..io import write_rosbag
    from ..simulation import simulate

    # The arm's own position controller: computed torque on the nominal model, with the typical
    # armature where the URDF has none (without it, a light wrist joint gets almost no stiffness
    # and sticks in its Coulomb friction: the recording would not excite it).
    tuned = nominal.replace(rotor_inertia=np.where(nominal.rotor_inertia > 0, nominal.rotor_inertia, 0.1))
    ctrl = ComputedTorque(tuned, omega=25.0, xi=1.0, friction_velocity="desired")
    res = simulate(true, ctrl, trajectory, control_rate=rate, settle=0.0, progress=False,
                   coulomb_smoothing=0.001)
    rng = np.random.default_rng(seed)
    step = 2.0 * np.pi / 2**noise.encoder_bits
    q = np.round((res.q + rng.normal(scale=noise.position, size=res.q.shape)) / step) * step
    limit = np.where(np.isfinite(true.effort_limit), true.effort_limit, 100.0)
    tau = res.tau + rng.normal(size=res.tau.shape) * noise.effort * limit
    tau = np.round(tau / noise.effort_step) * noise.effort_step
    noisy = dataclasses.replace(res, q=q, tau=tau, qd=np.full_like(res.qd, np.nan))
    return write_rosbag(noisy, true, path, start_time=start_time, tf_every=1000)
