"""Input handling shared by the dynamics algorithms (validated once, at the boundary)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import as_batch, broadcast_batch
from ..errors import InputError
from ..model.robot_model import RobotModel
from ..spatial import cross

Array = NDArray[np.float64]


def joint_inputs(
    model: RobotModel, **arrays: ArrayLike
) -> tuple[list[Array], tuple[int, ...]]:
    """Validate joint-space arrays of shape (..., nq) and broadcast them to one batch (N, nq)."""
    parsed = [as_batch(a, model.nq, name, model.joint_names) for name, a in arrays.items()]
    try:
        return broadcast_batch(parsed)
    except ValueError:
        shapes = {name: np.shape(a) for name, a in arrays.items()}
        raise InputError(f"Batch shapes do not broadcast: {shapes}") from None


def base_acceleration(model: RobotModel, gravity: ArrayLike | None) -> Array:
    """Spatial base acceleration [0; -g] that stands for gravity (Featherstone's trick), (6,)."""
    g = model.gravity if gravity is None else np.asarray(gravity, dtype=float)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise InputError(f"gravity: expected 3 finite numbers [m/s^2] in the base frame, got {gravity!r}")
    return np.concatenate([np.zeros(3), -g])


def body_velocities_of(model: RobotModel, qd: Array) -> Array:
    """Body joint velocities from independent ones, (N, nq) -> (N, nb)."""
    return qd @ model.mimic_matrix.T if model.has_mimic else qd


def to_joint_space(model: RobotModel, tau_body: Array) -> Array:
    """Body joint forces to independent-joint forces (G^T tau_b), (N, nb) -> (N, nq)."""
    return tau_body @ model.mimic_matrix if model.has_mimic else tau_body


def joint_friction(model: RobotModel, qd: Array) -> Array:
    """Khalil [7.26]: Gamma_f = Fc sign(qd) + Fv qd + (Fst - Fc) sign(qd) exp(-|qd| B), (N, nq).

    Without static friction on the model this is [7.28]: diag(qd) Fv + diag(sign(qd)) Fc.
    """
    tau = model.viscous * qd + model.coulomb * np.sign(qd)
    if model.static_friction is not None:
        decay = 0.0 if model.stribeck is None else model.stribeck
        tau = tau + (model.static_friction - model.coulomb) * np.sign(qd) * np.exp(-np.abs(qd) * decay)
    return tau


def external_body_forces(
    model: RobotModel,
    f_ext: Mapping[str, ArrayLike] | None,
    batch: tuple[int, ...],
    E: Array,
    r: Array,
) -> Array | None:
    """Wrenches exerted by links on the environment as body-frame spatial forces, (N, nb, 6).

    Each ``f_ext[link]`` is ``[force; moment]`` (..., 6) in base axes, moment about the link
    frame's origin (Khalil's f_en [7.30]). Returns None when there are none.
    """
    if not f_ext:
        return None
    from ..kinematics import _poses_from_transforms

    N = E.shape[0]
    Tb = _poses_from_transforms(model, E, r)
    out = np.zeros((N, model.nb, 6))
    for link, w in f_ext.items():
        k = model.frame_index(link)
        body = int(model.frame_body[k])
        wf, wb = as_batch(w, 6, f"f_ext[{link!r}] ([fx, fy, fz, tx, ty, tz])")
        try:
            wf = np.broadcast_to(wf.reshape(wb + (6,)), batch + (6,)).reshape(N, 6)
        except ValueError:
            raise InputError(f"f_ext[{link!r}]: batch shape {wb} does not match the state's {batch}") from None
        if body < 0:
            continue  # a wrench on the base is taken by the base
        R, pb = Tb[:, body, :3, :3], Tb[:, body, :3, 3]
        p_link = (Tb[:, body] @ model.frame_placement[k])[:, :3, 3]
        F, M = wf[:, :3], wf[:, 3:]
        M_body_origin = M + cross(p_link - pb, F)
        Rt = np.swapaxes(R, -1, -2)
        out[:, body, :3] += (Rt @ M_body_origin[..., None])[..., 0]
        out[:, body, 3:] += (Rt @ F[..., None])[..., 0]
    return out


def secondary_link_forces(model: RobotModel, v: Array, a: Array, qd: Array, qdd: Array, f: Array) -> Array:
    """Relative-motion terms of the drive train's secondary links inside the Newton-Euler pass.

    Chen & Wang (seed 000) split a secondary link j (gear, rotor) carried by body c into the
    virtual link (its mass lumped into c, already in the body inertias) and its spin
    beta_j = b_j . theta relative to c about the axis e_j (eq. 11). For an axisymmetric link
    whose centre of mass is on e_j, the spin adds to the carrier the couple
    ``n_j = I_j (e_j betadd_j + w_c x e_j betad_j)`` (rate of the relative angular momentum
    I_j e_j betad_j, carried by the bearing), and the torque along the spin coordinate is
    ``I_j (e_j . alpha_c + betadd_j)``; by virtual work it reaches the joints as b_j^T times
    that. Together they are G_s = M_s thetadd + C_s of eqs. (14)-(21) for any constant b.

    Args:
        v, a: body velocities and accelerations of the forward pass, (N, nb, 6).
        qd, qdd: independent joint velocities and accelerations, (N, nq).
        f: body forces, (N, nb, 6); the couples are added in place.

    Returns:
        The joint torques of the spin coordinates, B^T tau_s, (N, nq).
    """
    dt = model.drivetrain
    bd = qd @ dt.B.T  # eq. (11): betad_j = sum_k b_jk thetad_k, (N, nr)
    bdd = qdd @ dt.B.T
    N, nr = bd.shape
    on = dt.carrier_body >= 0  # links carried by the base: the carrier does not move
    cb = dt.carrier_body[on]
    w_c = np.zeros((N, nr, 3))
    al_c = np.zeros((N, nr, 3))
    w_c[:, on] = v[:, cb, :3]
    al_c[:, on] = a[:, cb, :3]
    h = dt.inertia[:, None] * dt.axis_body  # I_j e_j
    n = h * bdd[..., None] + cross(w_c, h * bd[..., None])
    for j in np.flatnonzero(on):
        f[:, dt.carrier_body[j], :3] += n[:, j]
    tau_s = np.einsum("jk,njk->nj", h, al_c) + dt.inertia * bdd
    return tau_s @ dt.B


def secondary_link_kinetic_energy(model: RobotModel, v: Array, qd: Array) -> Array:
    """Kinetic energy of the secondary links' relative motion, eq. (14), (N,).

    ``K_j = 1/2 I_j betad_j^2 + I_j betad_j (e_j . w_c)`` (the rest is in the virtual links).
    """
    dt = model.drivetrain
    bd = qd @ dt.B.T
    N, nr = bd.shape
    on = dt.carrier_body >= 0
    w_c = np.zeros((N, nr, 3))
    w_c[:, on] = v[:, dt.carrier_body[on], :3]
    proj = np.einsum("jk,njk->nj", dt.axis_body, w_c)
    return (dt.inertia * (0.5 * bd**2 + bd * proj)).sum(-1)
