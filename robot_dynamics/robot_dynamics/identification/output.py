"""Files the loaders take: the joint-properties YAML and a URDF with the identified inertials.

``robot-dynamics ... --urdf identified.urdf --drivetrain identified.yaml`` (and the nodes'
``urdf_path`` / ``drivetrain`` parameters) then run on the identified model. The YAML carries
each joint's viscous and Coulomb friction and its armature (the rotor inertia seen at the
joint, Khalil [7.29]) and the joint limits of the nominal model; the URDF is the nominal one
with each moving body's ``<inertial>`` replaced (fixed links lumped into a body lose theirs,
their share being in the body's identified values).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from numpy.typing import NDArray

from ..errors import InputError
from ..io._files import write_bytes_atomic
from ..model.robot_model import RobotModel
from .estimation import model_from_standard

__all__ = ["identified_sidecar", "identified_urdf", "write_identified"]

Array = NDArray[np.float64]


def identified_sidecar(model: RobotModel, pi: Array, *, static_excess: Array | None = None,
                       stribeck: Sequence[float] | None = None) -> dict[str, Any]:
    """The joint-properties YAML document (see :mod:`robot_dynamics.model.sidecar`) of ``pi``,
    with Khalil [7.26]'s ``static_friction = Fc + static_excess`` and ``stribeck`` B when given."""
    nb, nq = model.nb, model.nq
    joint = np.asarray(pi[10 * nb:], dtype=float).reshape(nq, 3)
    out: dict[str, Any] = {}
    for k, name in enumerate(model.joint_names):
        entry: dict[str, Any] = {
            "viscous": float(max(joint[k, 1], 0.0)),
            "coulomb": float(max(joint[k, 2], 0.0)),
            "armature": float(max(joint[k, 0], 0.0)),
        }
        if static_excess is not None and stribeck is not None:
            entry["static_friction"] = float(entry["coulomb"] + max(static_excess[k], 0.0))
            entry["stribeck"] = float(stribeck[k])
        limits = {key: float(v) for key, v in (("lower", model.lower[k]), ("upper", model.upper[k]),
                                                ("velocity", model.velocity_limit[k]), ("effort", model.effort_limit[k]))
                  if np.isfinite(v)}
        if limits:
            entry["limits"] = limits
        out[name] = entry
    return {"joints": out}


def _fmt(v: Array) -> str:
    return " ".join(f"{x:.9g}" for x in np.asarray(v).reshape(-1))


def identified_urdf(model: RobotModel, pi: Array) -> str:
    """The nominal URDF text with the inertials of ``pi`` (physically consistent values).

    Raises:
        InputError: the model has no URDF text (a DH table), or ``pi`` gives a body a
            non-positive mass or an inertia that is not positive semi-definite.
    """
    if not model.description:
        raise InputError("the model has no URDF description to write the inertials into")
    ident = model_from_standard(model, pi)
    for b, body in enumerate(model.body_names):
        if ident.mass[b] < 0 or np.linalg.eigvalsh(ident.inertia_com[b])[0] < -1e-9 * max(1.0, float(np.trace(ident.inertia_com[b]))):
            raise InputError(f"link {body!r}: the identified inertial is not physical (mass {ident.mass[b]:.4g}); "
                             "write the URDF from the physically consistent estimate")
    root = ET.fromstring(model.description)
    links = {link.get("name"): link for link in root.iter("link")}
    fixed_child_of: dict[str, str] = {}
    for joint in root.iter("joint"):
        if joint.get("type") == "fixed":
            parent, child = joint.find("parent"), joint.find("child")
            if parent is not None and child is not None:
                fixed_child_of[str(child.get("link"))] = str(parent.get("link"))
    bodies = set(model.body_names)

    def body_of(link: str) -> str | None:
        seen = set()
        while link not in bodies and link in fixed_child_of and link not in seen:
            seen.add(link)
            link = fixed_child_of[link]
        return link if link in bodies else None

    for name, link in links.items():
        owner = body_of(str(name))
        old = link.find("inertial")
        if owner is None:
            continue  # the fixed base: no effect on the joint torques
        if owner != name:
            if old is not None:
                link.remove(old)
            continue
        b = model.body_names.index(owner)
        if old is not None:
            link.remove(old)
        inertial = ET.Element("inertial")
        ET.SubElement(inertial, "origin", xyz=_fmt(ident.com[b]), rpy="0 0 0")
        ET.SubElement(inertial, "mass", value=f"{max(ident.mass[b], 0.0):.9g}")
        I = ident.inertia_com[b]
        ET.SubElement(inertial, "inertia", ixx=f"{I[0, 0]:.9g}", ixy=f"{I[0, 1]:.9g}", ixz=f"{I[0, 2]:.9g}",
                      iyy=f"{I[1, 1]:.9g}", iyz=f"{I[1, 2]:.9g}", izz=f"{I[2, 2]:.9g}")
        link.insert(0, inertial)
    ET.indent(root, space="  ")
    body = ET.tostring(root, encoding="unicode")
    return ("<?xml version=\"1.0\"?>\n<!-- inertials identified by robot-dynamics identify "
            "(physically consistent estimate) -->\n" + body + "\n")


def write_identified(model: RobotModel, pi: Array, yaml_path: str | os.PathLike[str],
                     urdf_path: str | os.PathLike[str] | None = None, *, static_excess: Array | None = None,
                     stribeck: Sequence[float] | None = None) -> list[Path]:
    """Write the joint-properties YAML (and the URDF when ``urdf_path``) atomically."""
    text = yaml.safe_dump(identified_sidecar(model, pi, static_excess=static_excess, stribeck=stribeck), sort_keys=False)
    written = [write_bytes_atomic(yaml_path, "# joint properties identified by robot-dynamics identify\n" + text)]
    if urdf_path is not None:
        written.append(write_bytes_atomic(urdf_path, identified_urdf(model, pi)))
    return written
