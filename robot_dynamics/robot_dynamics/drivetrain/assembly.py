"""The drive train's shared pieces: checks of the YAML's fields and the assembly onto a model.

The YAML sections (:mod:`~robot_dynamics.drivetrain.loader`) and the URDF's transmissions
(:mod:`~robot_dynamics.drivetrain.transmission`) both describe secondary links (gears, rotors)
and a structure matrix ``A`` (nq, nq); both check their fields here (a bad field raises
ModelError naming it) and hand the result to :func:`attach_drivetrain`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ModelError
from ..model.robot_model import RobotModel, _merge_inertia
from ..model.sidecar import MAX_VALUE, yaml_float
from .model import DriveTrain, ElasticJoints

__all__ = ["attach_drivetrain", "check_structure_matrix"]


def _num(value: Any, where: str, *, minimum: float | None = None, positive: bool = False,
         limit: float = MAX_VALUE, unit: str = "") -> float:
    """A finite number with |x| <= ``limit`` (the physical range of the field, ``unit`` its unit
    as written in the message), >= ``minimum`` or > 0 when asked; ModelError naming ``where``."""
    v = yaml_float(value, where, "; expected a finite number")
    if not np.isfinite(v):
        raise ModelError(f"{where}: expected a finite number, got {value!r}")
    if abs(v) > limit:
        raise ModelError(f"{where}: {v:g}{unit} is beyond any physical value here (|x| <= {limit:g}{unit})")
    if minimum is not None and v < minimum:
        raise ModelError(f"{where}: must be >= {minimum}, got {v}")
    if positive and v <= 0.0:
        raise ModelError(f"{where}: must be > 0, got {v}")
    return v


def _vec3(value: Any, where: str, *, limit: float = MAX_VALUE, unit: str = "") -> np.ndarray:
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise ModelError(f"{where}: expected a list of 3 numbers, got {value!r}")
    return np.array([_num(x, f"{where}[{i}]", limit=limit, unit=unit) for i, x in enumerate(value)])


def _mapping(value: Any, where: str, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ModelError(f"{where}: expected a mapping of {what}, got {type(value).__name__}")
    return value


def _check_keys(props: dict[str, Any], valid: tuple[str, ...], where: str) -> None:
    for key in props:
        if key not in valid:
            raise ModelError(f"{where}.{key}: unknown key. Valid keys: {list(valid)}")


def check_structure_matrix(A: np.ndarray, where: str) -> None:
    """Reject a singular (or numerically singular) structure matrix."""
    s = np.linalg.svd(A, compute_uv=False) if A.size else np.ones(1)
    if s[-1] <= 1e-12 * max(s[0], 1e-300):
        raise ModelError(
            f"{where}: the structure matrix A is singular (singular values {np.round(s, 6).tolist()}); "
            "the input links cannot drive every joint independently"
        )


def attach_drivetrain(
    model: RobotModel,
    secondary: list[Any],
    inputs: tuple[str, ...],
    A: np.ndarray,
    elastic: ElasticJoints | None,
    source: str,
) -> RobotModel:
    """Lump the secondary links into their carriers (virtual links) and store the drive train."""
    mass, com, inertia = model.mass.copy(), model.com.copy(), model.inertia_com.copy()
    for s in secondary:
        if s.body >= 0:  # the base's inertia plays no part in the dynamics
            m, c, I = _merge_inertia(mass[s.body], com[s.body], inertia[s.body], s.mass, s.com, s.inertia_com)
            mass[s.body], com[s.body], inertia[s.body] = m, c, I
    nr = len(secondary)
    dt = DriveTrain(
        names=tuple(s.name for s in secondary),
        carrier=tuple(s.carrier for s in secondary),
        carrier_body=np.array([s.body for s in secondary], dtype=int).reshape(nr),
        axis_body=np.array([s.axis for s in secondary], dtype=float).reshape(nr, 3),
        inertia=np.array([s.inertia for s in secondary], dtype=float).reshape(nr),
        B=np.array([s.b for s in secondary], dtype=float).reshape(nr, model.nq),
        mass=np.array([s.mass for s in secondary], dtype=float).reshape(nr),
        com_body=np.array([s.com for s in secondary], dtype=float).reshape(nr, 3),
        inertia_com=np.array([s.inertia_com for s in secondary], dtype=float).reshape(nr, 3, 3),
        inputs=tuple(inputs),
        A=A,
        A_inv=np.linalg.inv(A),
        elastic=elastic,
        source=source,
    )
    return model.replace(mass=mass, com=com, inertia_com=inertia, drivetrain=dt)
