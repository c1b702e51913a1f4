"""Geared robots: the virtual link approach (Chen & Wang), structure matrix, transmissions, elastic joints.

Importing this package registers the drive-train sections of the YAML beside a URDF
(``secondary_links``, ``gear_pairs``, ``inputs``, ``elastic``, ``transmissions``) with the
sidecar loader, so ``rd.load_urdf(path, drivetrain=yaml)`` builds the geared model. The
dynamics algorithms (rnea, crba, aba, Coriolis, energy) read ``model.drivetrain`` directly.
"""

from .actuation import (
    actuated_aba,
    actuator_torques,
    actuator_velocities,
    joint_torques_from_actuators,
    structure_matrix_of,
)
from .elastic import ElasticInverse, elastic_aba, elastic_energy, elastic_inverse_dynamics, elastic_parameters
from .loader import apply_drivetrain, register
from .model import DriveTrain, ElasticJoints
from .transmission import parse_transmissions, transmissions_drivetrain
from .virtual import diagonal_armature_model, virtual_chain_model, virtual_chain_urdf

register()

__all__ = [
    "DriveTrain",
    "ElasticInverse",
    "ElasticJoints",
    "actuated_aba",
    "actuator_torques",
    "actuator_velocities",
    "apply_drivetrain",
    "elastic_aba",
    "elastic_energy",
    "elastic_inverse_dynamics",
    "elastic_parameters",
    "parse_transmissions",
    "transmissions_drivetrain",
    "diagonal_armature_model",
    "joint_torques_from_actuators",
    "register",
    "structure_matrix_of",
    "virtual_chain_model",
    "virtual_chain_urdf",
]
