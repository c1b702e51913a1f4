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
    """Khalil [7.28]: Gamma_f = diag(qd) Fv + diag(sign(qd)) Fc, (N, nq)."""
    return model.viscous * qd + model.coulomb * np.sign(qd)


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
