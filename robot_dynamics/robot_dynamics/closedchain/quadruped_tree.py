"""The quadruped with a tail as a general closed chain: spanning tree + four fixed feet.

The same mechanism as :mod:`robot_dynamics.closedchain.quadruped`, described for the general
layer (:mod:`robot_dynamics.closedchain.general`): a floating torso (six joints
``torso_x, _y, _z, _yaw, _pitch, _roll``, ``R = Rz Ry Rx`` as eq. (1) of the paper), four
legs ``theta_ha_i`` (about y of the leg frame), ``theta_hb_i`` (about -x: the thigh is
``R_y(ha) R_x(-hb) [0, 0, -l_th]``, eq. 22), ``theta_k_i`` (about x after a half turn, so that
theta_k is the interior knee angle of eq. 6), a universal-joint tail ``theta_ta`` (x),
``theta_tb`` (z), and one point constraint per foot. The mass model is the paper's: thighs and
shanks are ideal bars (uniform thin rods: inertia m l^2 / 12 across, none along the bar), the
tail a point mass at its tip, the torso a rigid body centred at P.

The spanning tree solves the same dynamics with the composite-rigid-body and Newton-Euler
algorithms and Lagrange multipliers, with no equation of the paper: it is the independent
check of the virtual-work model.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from ..errors import UnknownNameError
from ..model.robot_model import JointSpec, LinkSpec, build_model, origin_matrix
from .general import ClosedChainModel, fixed_point_constraint, free_joint_specs
from .quadruped import ACTUATED_JOINTS, REDUNDANT_JOINTS, leg_inverse_kinematics
from .quadruped_params import QuadrupedParams, load_quadruped_params

__all__ = ["quadruped_mechanism", "INDEPENDENT_JOINTS", "tree_configuration"]

Array = NDArray[np.float64]

#: Tree joints that play the paper's generalized coordinates q, in the same order.
INDEPENDENT_JOINTS = ("torso_x", "torso_y", "torso_z", "torso_roll", "torso_pitch", "torso_yaw",
                      "theta_ta", "theta_tb")


def _rod(name: str, mass: float, length: float) -> LinkSpec:
    """An ideal bar along -z of its frame, from the origin to (0, 0, -length)."""
    I = mass * length**2 / 12.0
    return LinkSpec(name, mass, np.array([0.0, 0.0, -length / 2.0]), np.diag([I, I, 0.0]))


def quadruped_mechanism(params: QuadrupedParams | None = None, actuation: str = "paper") -> ClosedChainModel:
    """The quadruped as a :class:`~robot_dynamics.closedchain.general.ClosedChainModel`.

    Args:
        params: the quadruped (default: the bundled Table 1 parameters).
        actuation: ``"paper"`` (the 8 joints q_a) or ``"all"`` (q_a and the 6 redundant q_p).

    Returns:
        The mechanism; independent coordinates :data:`INDEPENDENT_JOINTS` (the paper's q),
        actuators in the order of ``ACTUATED_JOINTS`` (+ ``REDUNDANT_JOINTS``).
    """
    if actuation not in ("paper", "all"):
        raise UnknownNameError("actuation", actuation, ("paper", "all"))
    P = load_quadruped_params() if params is None else params
    links, joints = free_joint_specs("ground", "torso", prefix="torso")
    links = [LinkSpec("ground"), *links, LinkSpec("torso", P.m_b, np.zeros(3), np.array(P.I_b))]
    ex, ey, ez = np.eye(3)
    constraints = []
    for i in range(4):
        n = i + 1
        links += [LinkSpec(f"hip_{n}"), _rod(f"thigh_{n}", P.m_th, P.l_th), _rod(f"shank_{n}", P.m_sh, P.l_sh)]
        joints += [
            JointSpec(f"theta_ha_{n}", "continuous", "torso", f"hip_{n}",
                      origin_matrix(P.a[i], (0.0, 0.0, P.hip_yaw[i])), ey),
            JointSpec(f"theta_hb_{n}", "continuous", f"hip_{n}", f"thigh_{n}", np.eye(4), -ex),
            JointSpec(f"theta_k_{n}", "continuous", f"thigh_{n}", f"shank_{n}",
                      origin_matrix((0.0, 0.0, -P.l_th), (np.pi, 0.0, 0.0)), ex),
        ]
        constraints.append(fixed_point_constraint(f"foot_{n}", f"shank_{n}", (0.0, 0.0, -P.l_sh), P.d[i]))
    links += [LinkSpec("tail_cross"), LinkSpec("tail", P.m_t, np.array([0.0, -P.l_t, 0.0]), np.zeros((3, 3)))]
    joints += [
        JointSpec("theta_ta", "continuous", "torso", "tail_cross", origin_matrix(P.r, (0.0, 0.0, 0.0)), ex),
        JointSpec("theta_tb", "continuous", "tail_cross", "tail", np.eye(4), ez),
    ]
    tree = build_model(P.name, links, joints, gravity=(0.0, 0.0, -P.g))
    actuated = ACTUATED_JOINTS if actuation == "paper" else ACTUATED_JOINTS + REDUNDANT_JOINTS
    return ClosedChainModel.build(tree, constraints, actuated, INDEPENDENT_JOINTS,
                                  q_reference=tree_configuration(tree.joint_names, P, P.q0))


def tree_configuration(joint_names: tuple[str, ...] | list[str], params: QuadrupedParams, q: Array) -> Array:
    """Tree joint vector (in ``joint_names`` order) of the paper's configuration q (8,).

    The leg angles come from the paper's inverse kinematics (eqs. 4-9).
    """
    q = np.asarray(q, dtype=float)
    ha, hb, k = leg_inverse_kinematics(params, q)
    values = dict(zip(INDEPENDENT_JOINTS, q))
    for i in range(4):
        values[f"theta_ha_{i + 1}"], values[f"theta_hb_{i + 1}"], values[f"theta_k_{i + 1}"] = ha[i], hb[i], k[i]
    return np.array([values[n] for n in joint_names])
