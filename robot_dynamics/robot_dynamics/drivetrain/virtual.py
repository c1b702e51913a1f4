"""The simpler models of a geared robot: the virtual chain and the diagonal-armature approximation.

Used to show what the full coupling adds (``robot-dynamics drivetrain``) and to hand the
virtual equivalent open-loop chain to tools that know no gear trains.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from ..errors import ModelError
from ..model.robot_model import RobotModel

__all__ = ["virtual_chain_model", "diagonal_armature_model", "virtual_chain_urdf"]


def virtual_chain_model(model: RobotModel) -> RobotModel:
    """The virtual EOLC alone (seed 000 section 5.1): secondary links rigidly lumped, no spin terms."""
    return model.replace(drivetrain=None)


def diagonal_armature_model(model: RobotModel) -> RobotModel:
    """The diagonal-armature approximation of peer libraries (Khalil [7.29], Pinocchio's armature).

    Virtual links plus Ia_k = sum_j I_j b_jk^2 on the diagonal of the mass matrix: every
    off-diagonal and velocity-dependent coupling of the gear train is dropped.
    """
    dt = model.drivetrain
    if dt is None:
        return model
    return model.replace(drivetrain=None, rotor_inertia=model.rotor_inertia + dt.reflected_inertia())


def _fmt(v: np.ndarray) -> str:
    return " ".join(repr(float(x)) for x in v)


def virtual_chain_urdf(model: RobotModel) -> str:
    """URDF text of the virtual chain: each secondary link a fixed child link of its carrier.

    Any URDF library (Pinocchio, MuJoCo, Drake) loading it computes G_v of seed 000 eq. (13);
    ``rd.load_urdf`` of it equals :func:`virtual_chain_model`.

    Raises:
        ModelError: the model has no URDF description.
    """
    if model.description is None:
        raise ModelError("The model has no URDF description to extend")
    root = ET.fromstring(model.description)
    dt = model.drivetrain
    if dt is None:
        return model.description
    for j, name in enumerate(dt.names):
        T = model.frame_placement[model.frame_index(dt.carrier[j])]
        R, p = T[:3, :3], T[:3, 3]
        c = R.T @ (dt.com_body[j] - p)  # back to the carrier's frame
        I = R.T @ dt.inertia_com[j] @ R
        link = ET.SubElement(root, "link", name=name)
        inertial = ET.SubElement(link, "inertial")
        ET.SubElement(inertial, "origin", xyz=_fmt(c), rpy="0 0 0")
        ET.SubElement(inertial, "mass", value=repr(float(dt.mass[j])))
        ET.SubElement(
            inertial, "inertia",
            ixx=repr(float(I[0, 0])), ixy=repr(float(I[0, 1])), ixz=repr(float(I[0, 2])),
            iyy=repr(float(I[1, 1])), iyz=repr(float(I[1, 2])), izz=repr(float(I[2, 2])),
        )
        joint = ET.SubElement(root, "joint", name=f"{name}_fixed", type="fixed")
        ET.SubElement(joint, "parent", link=dt.carrier[j])
        ET.SubElement(joint, "child", link=name)
    return ET.tostring(root, encoding="unicode")
