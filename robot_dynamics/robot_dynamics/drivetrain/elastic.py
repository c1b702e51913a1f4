"""Robots with elastic joints (Khalil 7.3.8, [7.34]-[7.35]).

The state doubles: link positions q and rotor positions qM reflected through the gear ratios.
With the spring torque k (qM - q),

    A(q) qdd + C(q, qd) qd + Q(q) + Gamma_f(qd) = k (qM - q)                      [7.35a]
    Ia qMdd + Fvm qMd + Fcm sign(qMd) + k (qM - q) = Gamma                          [7.35b]

where the link side is the robot's full rigid dynamics (drive-train terms included) and
Ia, Fvm, Fcm, k come from the ``elastic:`` section of the drive-train YAML.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dynamics import aba, kinetic_energy, potential_energy, rnea
from ..dynamics._common import joint_inputs
from ..errors import ModelError
from ..model.robot_model import RobotModel
from .model import ElasticJoints

__all__ = ["ElasticInverse", "elastic_parameters", "elastic_inverse_dynamics", "elastic_aba", "elastic_energy"]

Array = NDArray[np.float64]


class ElasticInverse(NamedTuple):
    """Inverse dynamics of an elastic-joint robot along a desired link motion, each (..., nq).

    Attributes:
        motor_torque: Gamma of [7.35b] [N m].
        link_torque: the spring torque k (qM - q) the links need [N m].
        qm, qmd, qmdd: rotor positions, velocities, accelerations (joint side).
    """

    motor_torque: Array
    link_torque: Array
    qm: Array
    qmd: Array
    qmdd: Array


def elastic_parameters(model: RobotModel) -> ElasticJoints:
    """The elastic-joint parameters of the model; ModelError when it has none."""
    dt = model.drivetrain
    if dt is None or dt.elastic is None:
        raise ModelError(
            "The model has no elastic joints: add an 'elastic:' section (stiffness, motor_inertia "
            "per joint) to its drive-train YAML"
        )
    return dt.elastic


def elastic_inverse_dynamics(
    model: RobotModel,
    q: ArrayLike,
    qd: ArrayLike,
    qdd: ArrayLike,
    qddd: ArrayLike,
    qdddd: ArrayLike,
    gravity: ArrayLike | None = None,
    f_ext: Mapping[str, ArrayLike] | None = None,
    *,
    friction: bool = True,
    step: float = 2e-3,
) -> ElasticInverse:
    """Motor torques that make the links follow q(t) (Khalil [7.35], Spong's flexible-joint inverse).

    From [7.35a], qM = q + k^-1 tau(t) with tau the rigid inverse dynamics; [7.35b] needs
    qMdd = qdd + k^-1 taudd, so the desired motion must be four times differentiable. tau's
    time derivatives are taken on the trajectory's Taylor polynomial (5-point stencils of
    half-width ``2 step`` [s]; error O(step^2)).

    Args:
        q, qd, qdd, qddd, qdddd: desired link motion and its derivatives, (..., nq).
        gravity, f_ext, friction: as in :func:`robot_dynamics.rnea` (joint friction on the link side).
        step: stencil step [s].

    Returns:
        :class:`ElasticInverse`.
    """
    el = elastic_parameters(model)
    (q0, v0, a0, j0, s0), batch = joint_inputs(model, q=q, qd=qd, qdd=qdd, qddd=qddd, qdddd=qdddd)
    hs = np.array([-2.0, -1.0, 0.0, 1.0, 2.0]) * step
    H = hs[:, None, None]
    # The desired motion at t + s from its Taylor polynomial, all stencil points in one batch.
    qs = q0 + H * v0 + H**2 / 2 * a0 + H**3 / 6 * j0 + H**4 / 24 * s0
    vs = v0 + H * a0 + H**2 / 2 * j0 + H**3 / 6 * s0
    as_ = a0 + H * j0 + H**2 / 2 * s0
    fx = None if not f_ext else {k: np.broadcast_to(np.asarray(w, float), (5, q0.shape[0], 6)) for k, w in f_ext.items()}
    tau = rnea(model, qs, vs, as_, gravity, fx, friction=friction)  # (5, N, nq)
    tau0 = tau[2]
    taud = (tau[0] - 8 * tau[1] + 8 * tau[3] - tau[4]) / (12 * step)
    taudd = (-tau[0] + 16 * tau[1] - 30 * tau[2] + 16 * tau[3] - tau[4]) / (12 * step**2)
    k = el.stiffness
    qm = q0 + tau0 / k  # [7.35a]: k (qM - q) = tau
    qmd = v0 + taud / k
    qmdd = a0 + taudd / k
    gamma = el.motor_inertia * qmdd + el.motor_viscous * qmd + el.motor_coulomb * np.sign(qmd) + tau0  # [7.35b]
    shape = batch + (model.nq,)
    return ElasticInverse(*(x.reshape(shape) for x in (gamma, tau0, qm, qmd, qmdd)))


def elastic_aba(
    model: RobotModel,
    q: ArrayLike,
    qd: ArrayLike,
    qm: ArrayLike,
    qmd: ArrayLike,
    motor_torque: ArrayLike,
    gravity: ArrayLike | None = None,
    f_ext: Mapping[str, ArrayLike] | None = None,
    *,
    friction: bool = True,
) -> tuple[Array, Array]:
    """Direct dynamics of the doubled state: (qdd, qmdd) from [7.35a] and [7.35b], each (..., nq)."""
    el = elastic_parameters(model)
    (qf, qdf, qmf, qmdf, gf), batch = joint_inputs(model, q=q, qd=qd, qm=qm, qmd=qmd, motor_torque=motor_torque)
    spring = el.stiffness * (qmf - qf)  # the spring drives the links
    qdd = aba(model, qf, qdf, spring, gravity, f_ext, friction=friction)
    motor_friction = el.motor_viscous * qmdf + el.motor_coulomb * np.sign(qmdf) if friction else 0.0
    qmdd = (gf - motor_friction - spring) / el.motor_inertia
    shape = batch + (model.nq,)
    return np.reshape(qdd, shape), qmdd.reshape(shape)


def elastic_energy(
    model: RobotModel, q: ArrayLike, qd: ArrayLike, qm: ArrayLike, qmd: ArrayLike, gravity: ArrayLike | None = None
) -> Array:
    """Total energy [J]: links + rotors 1/2 Ia qMd^2 + springs 1/2 (q - qM)^T k (q - qM) [7.34], (...)."""
    el = elastic_parameters(model)
    (qf, qdf, qmf, qmdf), batch = joint_inputs(model, q=q, qd=qd, qm=qm, qmd=qmd)
    E = kinetic_energy(model, qf, qdf) + potential_energy(model, qf, gravity)
    E = E + 0.5 * (el.motor_inertia * qmdf**2).sum(-1) + 0.5 * (el.stiffness * (qf - qmf) ** 2).sum(-1)
    return E.reshape(batch)
