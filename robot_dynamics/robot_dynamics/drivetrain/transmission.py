"""ros2_control ``<transmission>`` tags of a URDF as a drive train (structure matrix and rotors).

Supported (names as in ``transmission_interface``)::

    SimpleTransmission        one actuator, one joint: joint = actuator / n, so phidot = n thetadot
    DifferentialTransmission  two actuators, two joints (ros2_control's maps):
        joint1 = (a1/na1 + a2/na2) / (2 nj1),   joint2 = (a1/na1 - a2/na2) / (2 nj2)

The reduction of an element is its ``<mechanical_reduction>`` (ros2_control) or
``<mechanicalReduction>`` (ROS 1) child, default 1; an actuator's and its joint's reductions
multiply. The maps follow from power conservation (Khalil [7.31]-[7.33]): with the actuator
rates phidot = A^T thetadot, the virtual work xi . dphi = G . dtheta gives G = A xi, the effort
maps of ``transmission_interface``. Each actuator becomes a secondary link (its rotor) carried
by the parent link of its (first) joint, turning about that joint's axis, with coefficients
b = the actuator's column of A; its rotor inertia comes from the YAML (``transmissions:
{actuator: {inertia: ...}}``) or a ``<rotor_inertia>`` child of ``<actuator>``, default 0.
Joints without a transmission are driven directly (a unit column of A).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ModelError
from ..model.robot_model import RobotModel
from ..model.sidecar import MAX_VALUE
from .assembly import _check_keys, _mapping, _num, attach_drivetrain, check_structure_matrix
from .model import ElasticJoints

__all__ = ["TRANSMISSION_TYPES", "parse_transmissions", "transmissions_drivetrain"]

TRANSMISSION_TYPES = ("SimpleTransmission", "DifferentialTransmission")


@dataclass
class _Rotor:
    name: str
    carrier: str
    body: int
    axis: np.ndarray
    inertia: float
    b: np.ndarray
    mass: float = 0.0

    @property
    def com(self) -> np.ndarray:
        return np.zeros(3)

    @property
    def inertia_com(self) -> np.ndarray:
        return self.inertia * np.outer(self.axis, self.axis)


def _float_child(elem: ET.Element, tags: tuple[str, ...], default: float, where: str, *, inertia: bool = False) -> float:
    """The number in the first of ``tags`` that ``elem`` has, else ``default``: a mechanical
    reduction (finite, non-zero, |x| <= 1e6) or, with ``inertia``, a rotor inertia (0 to
    :data:`MAX_VALUE` kg m^2, the drive-train YAML's bound)."""
    for tag in tags:
        child = elem.find(tag)
        if child is not None and child.text is not None:
            try:
                value = float(child.text.strip())
            except ValueError:
                raise ModelError(f"{where} <{tag}>: expected a number, got {child.text!r}") from None
            if inertia and not 0.0 <= value <= MAX_VALUE:  # NaN fails too
                raise ModelError(f"{where} <{tag}>: expected a rotor inertia from 0 to {MAX_VALUE:g} kg m^2, "
                                 f"got {child.text.strip()!r}")
            if not inertia and (not np.isfinite(value) or value == 0.0 or abs(value) > 1e6):
                raise ModelError(f"{where} <{tag}>: expected a finite, non-zero reduction up to 1e6, got {child.text.strip()!r}")
            return value
    return default


def _ordered(elems: list[ET.Element], prefix: str) -> list[ET.Element]:
    """Order joints/actuators by their role (joint1, joint2) when given, else document order."""
    if all(e.get("role") for e in elems):
        return sorted(elems, key=lambda e: e.get("role", ""))
    return elems


_REDUCTION = ("mechanical_reduction", "mechanicalReduction")
_INERTIA = ("rotor_inertia", "rotorInertia")


def parse_transmissions(model: RobotModel) -> list[dict[str, Any]]:
    """The transmissions of ``model.transmissions`` as dicts: name, type, joints, actuators.

    Returns:
        [{"name", "type", "joints": [(name, reduction)], "actuators": [(name, reduction, inertia)]}].

    Raises:
        ModelError: unsupported type, unknown joint, wrong number of joints or actuators.
    """
    out = []
    for raw in model.transmissions:
        el = ET.fromstring(raw)
        name = el.get("name", "?")
        where = f"<transmission name={name!r}>"
        kind_el = el.find("plugin") if el.find("plugin") is not None else el.find("type")
        kind = (kind_el.text or "").strip().split("/")[-1] if kind_el is not None else ""
        if kind not in TRANSMISSION_TYPES:
            raise ModelError(f"{where}: unsupported type {kind!r}. Supported: {list(TRANSMISSION_TYPES)}")
        joints = []
        for j in _ordered(el.findall("joint"), "joint"):
            jn = j.get("name", "")
            if jn not in model.joint_names:
                raise ModelError(f"{where}: unknown joint {jn!r}. Valid joints: {list(model.joint_names)}")
            joints.append((jn, _float_child(j, _REDUCTION, 1.0, f"{where} joint {jn!r}")))
        acts = []
        for a in _ordered(el.findall("actuator"), "actuator"):
            an = a.get("name", "")
            acts.append(
                (
                    an,
                    _float_child(a, _REDUCTION, 1.0, f"{where} actuator {an!r}"),
                    _float_child(a, _INERTIA, 0.0, f"{where} actuator {an!r}", inertia=True),
                )
            )
        need = 1 if kind == "SimpleTransmission" else 2
        if len(joints) != need or len(acts) != need:
            raise ModelError(
                f"{where}: a {kind} has {need} joint(s) and {need} actuator(s); found {len(joints)} and {len(acts)}"
            )
        for _, r in joints:
            if r == 0.0:
                raise ModelError(f"{where}: a mechanical reduction of 0 cannot transmit motion")
        for _, r, inertia in acts:
            if r == 0.0:
                raise ModelError(f"{where}: a mechanical reduction of 0 cannot transmit motion")
            if inertia < 0.0:
                raise ModelError(f"{where}: rotor inertia must be >= 0, got {inertia}")
        out.append({"name": name, "type": kind, "joints": joints, "actuators": acts})
    return out


def transmissions_drivetrain(model: RobotModel, section: Any, elastic: ElasticJoints | None = None) -> RobotModel:
    """A new model whose drive train comes from the URDF's transmissions (YAML ``transmissions:``).

    Args:
        section: None or ``{actuator name: {inertia: I [kg m^2]}}``.
    """
    if not model.transmissions:
        raise ModelError("transmissions: the URDF has no <transmission> tags")
    trans = parse_transmissions(model)
    names = [a[0] for t in trans for a in t["actuators"]]
    if len(set(names)) != len(names):
        raise ModelError(f"transmissions: an actuator name is used twice: {names}")
    inertia_yaml: dict[str, float] = {}
    if section:
        section = _mapping(section, "transmissions", "actuator names to {inertia}")
        for an, props in section.items():
            if an not in names:
                raise ModelError(f"transmissions.{an}: unknown actuator. Valid actuators: {names}")
            props = _mapping(props, f"transmissions.{an}", "['inertia']")
            _check_keys(props, ("inertia",), f"transmissions.{an}")
            inertia_yaml[an] = _num(props.get("inertia", 0.0), f"transmissions.{an}.inertia", minimum=0.0, unit=" kg m^2")
    nq = model.nq
    columns: dict[str, np.ndarray] = {}
    rotors: list[_Rotor] = []
    driven: set[str] = set()
    for t in trans:
        jidx = [model.joint_index(j) for j, _ in t["joints"]]
        for j, _ in t["joints"]:
            if j in driven:
                raise ModelError(f"<transmission name={t['name']!r}>: joint {j!r} is driven by two transmissions")
            driven.add(j)
        nj = [r for _, r in t["joints"]]
        acts = t["actuators"]
        if t["type"] == "SimpleTransmission":
            b = np.zeros(nq)
            b[jidx[0]] = acts[0][1] * nj[0]  # phidot = n thetadot
            cols = [b]
        else:  # DifferentialTransmission: phidot = diag(na) [[1, 1], [1, -1]] diag(nj) thetadot
            cols = []
            for a, sign in zip(acts, (1.0, -1.0)):
                b = np.zeros(nq)
                b[jidx[0]] = a[1] * nj[0]
                b[jidx[1]] = sign * a[1] * nj[1]
                cols.append(b)
        body = model.body_joint_names.index(t["joints"][0][0])
        pb = int(model.parent[body])
        carrier = model.base_link if pb < 0 else model.body_names[pb]
        axis = model.E_tree[body].T @ model.axis[body]  # the joint axis in the carrier's frame
        for (an, _, inertia_xml), b in zip(acts, cols):
            columns[an] = b
            rotors.append(_Rotor(an, carrier, pb, axis, inertia_yaml.get(an, inertia_xml), b))
    inputs, cols_A = [], []
    for k, jn in enumerate(model.joint_names):
        if jn not in driven:
            inputs.append(jn)
            cols_A.append(np.eye(nq)[k])
    inputs = [r.name for r in rotors] + inputs
    cols_A = [columns[r.name] for r in rotors] + cols_A
    A = np.array(cols_A, dtype=float).T.reshape(nq, nq)
    check_structure_matrix(A, "transmissions")
    return attach_drivetrain(model, rotors, tuple(inputs), A, elastic, "transmission")
