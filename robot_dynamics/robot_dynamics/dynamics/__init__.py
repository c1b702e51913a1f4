"""Inverse and direct dynamics of rigid-body trees, batched over leading dimensions."""

from .aba import aba
from .coriolis import coriolis_matrix
from .crba import crba
from .derivatives import aba_derivatives, linearize, rnea_derivatives
from .energy import kinetic_energy, mechanical_energy, potential_energy
from .operational_space import (
    OperationalSpace,
    dynamically_consistent_inverse,
    null_space_projector,
    operational_space,
    task_inertia,
)
from .rnea import bias_torques, gravity_torques, rnea

__all__ = [
    "OperationalSpace",
    "aba",
    "aba_derivatives",
    "bias_torques",
    "coriolis_matrix",
    "crba",
    "dynamically_consistent_inverse",
    "gravity_torques",
    "kinetic_energy",
    "linearize",
    "mechanical_energy",
    "null_space_projector",
    "operational_space",
    "potential_energy",
    "rnea",
    "rnea_derivatives",
    "task_inertia",
]
