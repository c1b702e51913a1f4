"""The drive-train sections of the YAML beside a URDF (registered in the sidecar loader).

Format (see ``doc_drivetrain.md`` for a full example)::

    secondary_links:              # gears, rotors, pulleys (seed 000, section 2)
      gear4:
        carrier: link0            # URDF link that carries it (its bearing)
        axis: [0, 0, 1]           # unit axis e_j in the carrier's frame
        inertia: 2.0e-4           # axial moment of inertia I_j [kg m^2]
        mass: 0.4                 # optional, lumped into the carrier (virtual link)
        com: [0.05, 0, 0.1]       # optional, on the axis, carrier frame [m]
        transverse_inertia: 1e-4  # optional, about the centre of mass [kg m^2]
        coefficients: {joint1: 30.0}   # b_jk of eq. (11) by joint name, or a list of nq
        coaxial_joint: joint1     # optional: its axis is this joint's axis (gear pairs)
    gear_pairs:                   # optional: derive missing coefficients (eqs. 9-10)
      - {gear: gear4, mates: link1, arm: link0, ratio: -4.0}   # qdot_{gear,arm} = ratio qdot_{mates,arm}
      - {gear: gear5, mates: link2, arm: link1, teeth: [20, 60], sign: 1}  # ratio = sign N_mates/N_gear
    inputs: [gear4, gear5, gear6] # input links (or joint names for direct drive): A of eq. (12)
    elastic:                      # Khalil 7.3.8
      joint1: {stiffness: 3.0e4, motor_inertia: 0.5, motor_viscous: 2.0, motor_coulomb: 0.0}
    transmissions:                # use the URDF's ros2_control <transmission> tags
      motor1: {inertia: 1.2e-4}   # optional rotor inertia per actuator

Everything is validated before the new model is returned; a bad field raises ModelError
naming the field and the valid choices.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ModelError
from ..model.robot_model import RobotModel
from ..model.sidecar import SECTION_HANDLERS
from ..model.urdf import MAX_LENGTH, MAX_MASS
from .assembly import _check_keys, _mapping, _num, _vec3, attach_drivetrain, check_structure_matrix
from .model import ElasticJoints
from .transmission import transmissions_drivetrain

__all__ = [
    "SECTIONS",
    "SECONDARY_KEYS",
    "GEAR_PAIR_KEYS",
    "ELASTIC_KEYS",
    "apply_drivetrain",
    "attach_drivetrain",
    "register",
]

SECTIONS = ("secondary_links", "gear_pairs", "inputs", "elastic", "transmissions")
SECONDARY_KEYS = ("carrier", "axis", "inertia", "mass", "com", "transverse_inertia", "coefficients", "coaxial_joint")
GEAR_PAIR_KEYS = ("gear", "mates", "arm", "ratio", "teeth", "sign")
ELASTIC_KEYS = ("stiffness", "motor_inertia", "motor_viscous", "motor_coulomb")
_UNIT_TOL = 1e-6


def _coefficients(model: RobotModel, value: Any, where: str) -> np.ndarray:
    """b_j from {joint: b} or a list of nq numbers (seed 000 eq. 11)."""
    b = np.zeros(model.nq)
    if isinstance(value, dict):
        for jname, coef in value.items():
            if jname not in model.joint_names:
                raise ModelError(f"{where}.{jname}: unknown joint. Valid joints: {list(model.joint_names)}")
            b[model.joint_index(jname)] = _num(coef, f"{where}.{jname}")
        return b
    if isinstance(value, (list, tuple)):
        if len(value) != model.nq:
            raise ModelError(
                f"{where}: expected {model.nq} coefficients (one per joint: {list(model.joint_names)}), got {len(value)}"
            )
        return np.array([_num(x, f"{where}[{i}]") for i, x in enumerate(value)])
    raise ModelError(f"{where}: expected a mapping joint -> b_jk or a list of {model.nq} numbers, got {value!r}")


class _Secondary:
    """One parsed secondary link (carrier frame quantities converted to the body frame)."""

    def __init__(self, model: RobotModel, name: str, props: Any) -> None:
        where = f"secondary_links.{name}"
        props = _mapping(props, where, list(SECONDARY_KEYS).__repr__())
        _check_keys(props, SECONDARY_KEYS, where)
        if name in model.frame_names or name in model.body_joint_names:
            raise ModelError(f"{where}: the name is already a URDF link or joint; secondary links need their own names")
        for req in ("carrier", "axis", "inertia"):
            if req not in props:
                raise ModelError(f"{where}: missing key {req!r}. Required keys: ['carrier', 'axis', 'inertia']")
        carrier = props["carrier"]
        if not isinstance(carrier, str) or carrier not in model.frame_names:
            raise ModelError(f"{where}.carrier: unknown link {carrier!r}. Valid links: {list(model.frame_names)}")
        axis = _vec3(props["axis"], f"{where}.axis")
        norm = float(np.linalg.norm(axis))
        if abs(norm - 1.0) > _UNIT_TOL:
            raise ModelError(f"{where}.axis: must be a unit vector, got norm {norm:.6g}")
        self.name = name
        self.carrier = carrier
        self.inertia = _num(props["inertia"], f"{where}.inertia", minimum=0.0, unit=" kg m^2")
        # the bounds of a URDF link's mass and lengths (robot_dynamics.model.urdf)
        self.mass = _num(props.get("mass", 0.0), f"{where}.mass", minimum=0.0, limit=MAX_MASS, unit=" kg")
        com = _vec3(props.get("com", [0.0, 0.0, 0.0]), f"{where}.com", limit=MAX_LENGTH, unit=" m")
        It = _num(props.get("transverse_inertia", 0.0), f"{where}.transverse_inertia", minimum=0.0, unit=" kg m^2")
        self.b: np.ndarray | None = (
            _coefficients(model, props["coefficients"], f"{where}.coefficients") if "coefficients" in props else None
        )
        self.coaxial_joint: int | None = None
        if "coaxial_joint" in props:
            jn = props["coaxial_joint"]
            if jn not in model.body_joint_names:
                raise ModelError(
                    f"{where}.coaxial_joint: unknown joint {jn!r}. Valid joints: {list(model.body_joint_names)}"
                )
            self.coaxial_joint = model.body_joint_names.index(jn)
        k = model.frame_names.index(carrier)
        self.body = int(model.frame_body[k])
        T = model.frame_placement[k]
        R, p = T[:3, :3], T[:3, 3]
        self.axis = R @ axis
        self.com = R @ com + p
        # Axisymmetric about e_j: I = I_j e e^T + I_t (1 - e e^T) (seed 000, section 5.2).
        ee = np.outer(axis, axis)
        self.inertia_com = R @ (self.inertia * ee + It * (np.eye(3) - ee)) @ R.T


def _joint_axis_in_body(model: RobotModel, joint_body: int, body: int) -> np.ndarray:
    """Axis of moving joint ``joint_body`` in the frame of ``body`` (its child or its parent)."""
    if body == joint_body:
        return model.axis[joint_body]
    return model.E_tree[joint_body].T @ model.axis[joint_body]


class _GearGraph:
    """Relative rates as linear expressions: const . thetadot + sum_u c_u b_u (seed 000 eqs. 9-10)."""

    def __init__(self, model: RobotModel, secondary: dict[str, _Secondary], unknown: list[str]) -> None:
        self.model = model
        self.sec = secondary
        self.unknown = unknown

    def rate(self, x: str, arm: str, where: str) -> tuple[np.ndarray, np.ndarray]:
        """qdot_{x,arm} about x's axis: (const (nq,), coefficients on the unknown b's (nu,))."""
        m = self.model
        c = np.zeros(m.nq)
        u = np.zeros(len(self.unknown))
        ba = int(m.frame_body[m.frame_names.index(arm)])
        if x in self.sec:
            s = self.sec[x]
            if s.b is None:
                u[self.unknown.index(x)] = 1.0
            else:
                c = c + s.b
            bc = s.body
            if bc == ba:
                return c, u
            J = s.coaxial_joint
            if J is None or not ((J == bc and m.parent[J] == ba) or (J == ba and m.parent[J] == bc)):
                raise ModelError(
                    f"{where}: {x!r} is carried by {s.carrier!r}, not pivoted on the arm {arm!r}; give "
                    f"{x}.coaxial_joint = the joint between {s.carrier!r} and {arm!r} whose axis it shares"
                )
            axis_J = _joint_axis_in_body(m, J, bc)
            dot = float(axis_J @ s.axis)
            if abs(abs(dot) - 1.0) > 1e-6:
                raise ModelError(f"{where}: the axis of {x!r} is not along its coaxial joint {m.body_joint_names[J]!r}")
            # Coaxial condition, eq. (10): q_{x,arm} = q_{x,c} + q_{c,arm}.
            rate_c_arm = -model_rate(m, J) if J == ba else model_rate(m, J)
            return c + np.sign(dot) * rate_c_arm, u
        if x not in m.frame_names:
            raise ModelError(f"{where}: unknown link {x!r}. Valid links: {list(self.sec) + list(m.frame_names)}")
        bx = int(m.frame_body[m.frame_names.index(x)])
        if bx == ba:
            return c, u
        if bx >= 0 and m.parent[bx] == ba:
            return model_rate(m, bx), u
        if ba >= 0 and m.parent[ba] == bx:
            return -model_rate(m, ba), u
        raise ModelError(f"{where}: link {x!r} is not pivoted on the arm {arm!r} (no joint between them)")


def model_rate(model: RobotModel, body: int) -> np.ndarray:
    """thetadot of the joint of ``body`` as a row over the independent joints (mimic-aware), (nq,)."""
    return np.array(model.mimic_matrix[body], dtype=float)


def _solve_gear_pairs(model: RobotModel, sec: dict[str, _Secondary], pairs: Any) -> None:
    """Fill the missing b_j from the fundamental circuit equations, eq. (9): q_{j,i} = g_{k,j} q_{k,i}."""
    unknown = [n for n, s in sec.items() if s.b is None]
    if pairs is None:
        pairs = []
    if not isinstance(pairs, list):
        raise ModelError("gear_pairs: expected a list of {gear, mates, arm, ratio} mappings")
    graph = _GearGraph(model, sec, unknown)
    rows, rhs = [], []
    for n, pair in enumerate(pairs):
        where = f"gear_pairs[{n}]"
        pair = _mapping(pair, where, str(list(GEAR_PAIR_KEYS)))
        _check_keys(pair, GEAR_PAIR_KEYS, where)
        for req in ("gear", "mates", "arm"):
            if req not in pair:
                raise ModelError(f"{where}: missing key {req!r}. Required keys: ['gear', 'mates', 'arm'] and 'ratio' or 'teeth'")
        arm = pair["arm"]
        if arm not in model.frame_names:
            raise ModelError(f"{where}.arm: unknown link {arm!r}. Valid links: {list(model.frame_names)}")
        if "ratio" in pair and "teeth" in pair:
            raise ModelError(f"{where}: give either 'ratio' or 'teeth' (+ 'sign'), not both")
        if "ratio" in pair:
            g = _num(pair["ratio"], f"{where}.ratio")
        elif "teeth" in pair:
            t = pair["teeth"]
            if not isinstance(t, list) or len(t) != 2:
                raise ModelError(f"{where}.teeth: expected [N_gear, N_mates], got {t!r}")
            ng = _num(t[0], f"{where}.teeth[0]", positive=True)
            nm = _num(t[1], f"{where}.teeth[1]", positive=True)
            sign = pair.get("sign", 1)
            if sign not in (1, -1):
                raise ModelError(f"{where}.sign: expected 1 or -1, got {sign!r}")
            g = sign * nm / ng  # g_{k,j} = +-N_k / N_j, seed 000 eq. (9)
        else:
            raise ModelError(f"{where}: missing key 'ratio' (or 'teeth' with 'sign')")
        if g == 0.0:
            raise ModelError(f"{where}.ratio: must be non-zero")
        cj, uj = graph.rate(str(pair["gear"]), arm, f"{where}.gear")
        ck, uk = graph.rate(str(pair["mates"]), arm, f"{where}.mates")
        rows.append(uj - g * uk)
        rhs.append(-(cj - g * ck))
    if len(rows) != len(unknown):
        raise ModelError(
            f"gear_pairs: {len(rows)} gear pair(s) for {len(unknown)} secondary link(s) without coefficients "
            f"{unknown}; give each of them 'coefficients' or exactly one gear pair that determines it"
        )
    if not unknown:
        return
    Mat = np.array(rows).reshape(len(rows), len(unknown))
    if np.linalg.matrix_rank(Mat) < len(unknown):
        raise ModelError(f"gear_pairs: the gear pairs do not determine the coefficients of {unknown} (singular system)")
    sol = np.linalg.solve(Mat, np.array(rhs))
    for name, b in zip(unknown, sol):
        sec[name].b = b


def structure_matrix(model: RobotModel, inputs: Any, B: np.ndarray, names: list[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """A of seed 000 eq. (12): column i = b of input link i (a unit column for a directly driven joint)."""
    if inputs is None:
        return tuple(model.joint_names), np.eye(model.nq)
    if not isinstance(inputs, list) or not all(isinstance(n, str) for n in inputs):
        raise ModelError(f"inputs: expected a list of input link names, got {inputs!r}")
    valid = names + list(model.joint_names)
    cols = []
    for n in inputs:
        if n in names:
            cols.append(B[names.index(n)])
        elif n in model.joint_names:
            cols.append(np.eye(model.nq)[model.joint_index(n)])
        else:
            raise ModelError(f"inputs: unknown input link {n!r}. Valid choices (secondary links or joints): {valid}")
    if len(set(inputs)) != len(inputs):
        raise ModelError(f"inputs: an input link is listed twice: {inputs}")
    if len(inputs) != model.nq:
        raise ModelError(
            f"inputs: the structure matrix A must be square: {model.nq} joints need {model.nq} input links, "
            f"got {len(inputs)} {inputs}"
        )
    A = np.array(cols, dtype=float).T.reshape(model.nq, model.nq)
    check_structure_matrix(A, "inputs")
    return tuple(inputs), A


def _elastic(model: RobotModel, section: Any) -> ElasticJoints | None:
    if section is None:
        return None
    section = _mapping(section, "elastic", "joint names to " + str(list(ELASTIC_KEYS)))
    arr = {k: np.zeros(model.nq) for k in ELASTIC_KEYS}
    for jname, props in section.items():
        where = f"elastic.{jname}"
        if jname not in model.joint_names:
            raise ModelError(f"{where}: unknown joint. Valid joints: {list(model.joint_names)}")
        props = _mapping(props, where, str(list(ELASTIC_KEYS)))
        _check_keys(props, ELASTIC_KEYS, where)
        for req in ("stiffness", "motor_inertia"):
            if req not in props:
                raise ModelError(f"{where}: missing key {req!r}. Required keys: ['stiffness', 'motor_inertia']")
        i = model.joint_index(jname)
        arr["stiffness"][i] = _num(props["stiffness"], f"{where}.stiffness", positive=True)
        arr["motor_inertia"][i] = _num(props["motor_inertia"], f"{where}.motor_inertia", positive=True)
        arr["motor_viscous"][i] = _num(props.get("motor_viscous", 0.0), f"{where}.motor_viscous", minimum=0.0)
        arr["motor_coulomb"][i] = _num(props.get("motor_coulomb", 0.0), f"{where}.motor_coulomb", minimum=0.0)
    missing = [n for n in model.joint_names if n not in section]
    if missing:
        raise ModelError(
            f"elastic: every joint needs its stiffness and motor_inertia (the doubled state of Khalil "
            f"7.3.8); missing joints: {missing}"
        )
    return ElasticJoints(*(arr[k] for k in ELASTIC_KEYS))


def apply_drivetrain(model: RobotModel, doc: dict[str, Any]) -> RobotModel:
    """A new model with the drive-train sections of ``doc`` (a parsed YAML mapping) applied.

    Raises:
        ModelError: any bad field (unknown link or joint, wrong number of coefficients,
            non-unit axis, negative inertia, singular or non-square A).
    """
    if model.drivetrain is not None:
        raise ModelError("The model already has a drive train; load the URDF again to apply another one")
    elastic = _elastic(model, doc.get("elastic"))
    if "transmissions" in doc:
        for other in ("secondary_links", "gear_pairs", "inputs"):
            if other in doc:
                raise ModelError(f"transmissions: cannot be combined with {other!r}; describe the drive train one way")
        return transmissions_drivetrain(model, doc["transmissions"], elastic=elastic)
    raw = doc.get("secondary_links") or {}
    raw = _mapping(raw, "secondary_links", "names to " + str(list(SECONDARY_KEYS)))
    sec = {str(name): _Secondary(model, str(name), props) for name, props in raw.items()}
    _solve_gear_pairs(model, sec, doc.get("gear_pairs"))
    names = list(sec)
    B = np.array([sec[n].b for n in names], dtype=float).reshape(len(names), model.nq)
    inputs, A = structure_matrix(model, doc.get("inputs"), B, names)
    return attach_drivetrain(model, list(sec.values()), inputs, A, elastic, "yaml")


def _handler(section: str) -> Any:
    def handle(model: RobotModel, value: Any, doc: dict[str, Any]) -> RobotModel:
        # The sidecar calls one handler per section present; the first of ours does the work.
        first = next(s for s in SECTIONS if s in doc)
        return apply_drivetrain(model, doc) if section == first else model

    return handle


def register() -> None:
    """Register the drive-train sections with the sidecar YAML loader (idempotent)."""
    for s in SECTIONS:
        SECTION_HANDLERS[s] = _handler(s)
