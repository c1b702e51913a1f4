"""The drive train of a geared robot, as stored on ``RobotModel.drivetrain``.

Chen & Wang's virtual link approach (seed 000): the movable joints of the URDF are the
primary links' joints (the equivalent open-loop chain, EOLC); gears, rotors and pulleys are
secondary links. Each secondary link j is carried by a primary link i (its carrier) and turns
relative to it about a fixed unit axis e_j at the rate (seed eq. 11)

    qdot_{j,i} = sum_k b_{j,k} thetadot_k,

with constant coefficients b (the matrix ``B``, one row per secondary link). Its mass
properties are lumped into the carrier (the virtual link i*, section 5.1), so the bodies of
the model are the virtual links; the dynamics algorithms add the relative-motion terms
M_s, C_s (eqs. 14-21) from ``carrier_body``, ``axis_body``, ``inertia`` and ``B``.

The input (actuated) links give the structure matrix A (eq. 12: phidot = A^T thetadot) and
the joint torques G = A xi (eq. 22).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["DriveTrain", "ElasticJoints"]

Array = NDArray[np.float64]


def _ro(a: Any, dtype: Any = float) -> NDArray[Any]:
    arr = np.array(a, dtype=dtype)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class ElasticJoints:
    """Joint elasticity of Khalil 7.3.8 ([7.34]-[7.35]), per independent joint.

    Attributes:
        stiffness: k, (nq,) [N m/rad or N/m]; 0 for a rigid joint.
        motor_inertia: Ia of the rotor referred to the joint side (Khalil [7.29]), (nq,).
        motor_viscous, motor_coulomb: Fvm, Fcm of the actuators, joint side, (nq,).
    """

    stiffness: Array
    motor_inertia: Array
    motor_viscous: Array
    motor_coulomb: Array

    def __post_init__(self) -> None:
        for name in ("stiffness", "motor_inertia", "motor_viscous", "motor_coulomb"):
            object.__setattr__(self, name, _ro(getattr(self, name)))


@dataclass(frozen=True, eq=False)
class DriveTrain:
    """Secondary links, structure matrix and elasticity of a geared robot.

    Attributes:
        names: secondary links, (nr,).
        carrier: link carrying each secondary link (a URDF link name), (nr,).
        carrier_body: body index of the carrier, -1 when it is the base, (nr,).
        axis_body: unit rotation axis e_j in the carrier's body frame, (nr, 3).
        inertia: axial moment of inertia I_j [kg m^2], (nr,).
        B: coefficients b_{j,k} of eq. (11), (nr, nq).
        mass, com_body, inertia_com: the lumped mass properties (body frame), kept to
            describe the virtual links; (nr,), (nr, 3), (nr, 3, 3).
        inputs: names of the input links (secondary links or, for direct drive, joints), (nq,).
        A: structure matrix (eq. 12), (nq, nq); columns are the inputs' coefficient vectors.
        A_inv: its inverse.
        elastic: joint elasticity, or None.
        source: where the drive train came from ('yaml' or 'transmission').
    """

    names: tuple[str, ...]
    carrier: tuple[str, ...]
    carrier_body: NDArray[np.int_]
    axis_body: Array
    inertia: Array
    B: Array
    mass: Array
    com_body: Array
    inertia_com: Array
    inputs: tuple[str, ...]
    A: Array
    A_inv: Array
    elastic: ElasticJoints | None = None
    source: str = "yaml"
    coupled: bool = field(init=False)

    def __post_init__(self) -> None:
        for name in ("axis_body", "inertia", "B", "mass", "com_body", "inertia_com", "A", "A_inv"):
            object.__setattr__(self, name, _ro(getattr(self, name)))
        object.__setattr__(self, "carrier_body", _ro(self.carrier_body, int))
        # Only secondary links with axial inertia add relative-motion terms to the dynamics.
        object.__setattr__(self, "coupled", bool(np.any(self.inertia > 0.0)))

    @property
    def n_secondary(self) -> int:
        """Number of secondary links nr."""
        return len(self.names)

    def index(self, name: str) -> int:
        """Index of a secondary link; UnknownNameError otherwise."""
        from ..errors import UnknownNameError

        try:
            return self.names.index(name)
        except ValueError:
            raise UnknownNameError("secondary link", name, self.names) from None

    def reflected_inertia(self) -> Array:
        """Diagonal of B^T diag(I) B: the armature a diagonal model puts on each joint, (nq,)."""
        return np.einsum("j,jk,jk->k", self.inertia, self.B, self.B)
