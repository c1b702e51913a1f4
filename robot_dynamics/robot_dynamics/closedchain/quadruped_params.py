"""Parameters of the quadruped with a 2-dof tail (Liu & Ben-Tzvi, Table 1 and section 4).

The bundled file ``config/quadruped_tail.yaml`` holds the paper's values; any other YAML of the
same layout (or a dict) describes another quadruped of the same kinematic structure.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from ..model.sidecar import read_yaml

__all__ = ["QuadrupedParams", "load_quadruped_params", "default_params_path"]

Array = NDArray[np.float64]

#: File name of the bundled parameter set.
BUNDLED_FILE = "quadruped_tail.yaml"


@dataclass(frozen=True, eq=False)
class QuadrupedParams:
    """Geometry and mass model of the quadruped (ideal-bar legs, point-mass tail).

    Attributes:
        name: parameter-set name.
        l_th, l_sh, l_t: thigh, shank and tail lengths [m].
        m_th, m_sh, m_b, m_t: thigh, shank, torso and tail-tip masses [kg].
        I_b: torso inertia about its centre P in frame P, (3, 3) [kg m^2].
        g: gravity magnitude [m/s^2], acting along -z of the ground frame S.
        a: hip centres a_i^(P) in frame P, (4, 3) [m].
        r: tail joint r^(P) in frame P, (3,) [m].
        d: feet d_i in frame S, (4, 3) [m].
        hip_yaw: mounting angle of each leg about z_P, (4,) [rad]: leg i's frame L_i is frame P
            turned by hip_yaw[i] about z; the paper's leg equations hold in L_i.
        q0: the paper's initial configuration, (8,).
    """

    name: str
    l_th: float
    l_sh: float
    l_t: float
    m_th: float
    m_sh: float
    m_b: float
    m_t: float
    I_b: Array
    g: float
    a: Array
    r: Array
    d: Array
    hip_yaw: Array
    q0: Array

    @property
    def R_leg(self) -> Array:
        """R_L^P of each leg: rotations about z_P by ``hip_yaw``, (4, 3, 3)."""
        c, s = np.cos(self.hip_yaw), np.sin(self.hip_yaw)
        z, o = np.zeros(4), np.ones(4)
        return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)

    @property
    def total_mass(self) -> float:
        """Mass of the whole robot [kg]."""
        return self.m_b + self.m_t + 4.0 * (self.m_th + self.m_sh)


def _ro(x: Any, shape: tuple[int, ...], where: str) -> Array:
    try:
        arr = np.array(x, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"quadruped parameters: {where} must be numbers, got {x!r}") from None
    if arr.shape != shape or not np.all(np.isfinite(arr)):
        raise ModelError(f"quadruped parameters: {where} must be finite numbers of shape {shape}, got {x!r}")
    arr.setflags(write=False)
    return arr


def _section(data: dict[str, Any], key: str) -> dict[str, Any]:
    sec = data.get(key)
    if not isinstance(sec, dict):
        raise ModelError(f"quadruped parameters: section {key!r} missing (a mapping is expected)")
    return sec


def _positive(sec: dict[str, Any], key: str, where: str) -> float:
    if key not in sec:
        raise ModelError(f"quadruped parameters: {where}.{key} missing; keys found: {sorted(sec)}")
    v = _ro(sec[key], (), f"{where}.{key}")
    if v <= 0:
        raise ModelError(f"quadruped parameters: {where}.{key} must be > 0, got {float(v)}")
    return float(v)


def default_params_path() -> Path:
    """Path of the bundled ``quadruped_tail.yaml`` (source tree or installed share folder)."""
    from ..model.registry import _candidates

    for d in _candidates():
        p = d / "config" / BUNDLED_FILE
        if p.is_file():
            return p
    raise ModelError(f"bundled {BUNDLED_FILE} not found in any share folder")


def load_quadruped_params(source: str | os.PathLike[str] | dict[str, Any] | None = None) -> QuadrupedParams:
    """Read the quadruped parameters from YAML (default: the bundled Table 1 values).

    Raises:
        ModelError: missing keys, non-positive lengths or masses, wrong shapes, an inertia
            that is not symmetric positive definite.
    """
    data = read_yaml(default_params_path() if source is None else source, "quadruped parameter YAML")
    lengths, masses = _section(data, "lengths"), _section(data, "masses")
    l_th, l_sh, l_t = (_positive(lengths, k, "lengths") for k in ("thigh", "shank", "tail"))
    m_th, m_sh, m_b, m_t = (_positive(masses, k, "masses") for k in ("thigh", "shank", "torso", "tail"))
    I_b = _ro(data.get("torso_inertia"), (3, 3), "torso_inertia")
    if not np.allclose(I_b, I_b.T) or np.linalg.eigvalsh(I_b)[0] <= 0:
        raise ModelError("quadruped parameters: torso_inertia must be symmetric positive definite")
    q0 = data.get("initial_q", [0.2, 0.3, 0.4, 0.0, 0.0, 0.0, 0.0, 0.0])
    g = _ro(data.get("gravity", 9.81), (), "gravity")
    return QuadrupedParams(
        name=str(data.get("name", "quadruped_tail")),
        l_th=l_th,
        l_sh=l_sh,
        l_t=l_t,
        m_th=m_th,
        m_sh=m_sh,
        m_b=m_b,
        m_t=m_t,
        I_b=I_b,
        g=float(g),
        a=_ro(data.get("hips"), (4, 3), "hips"),
        r=_ro(data.get("tail_base"), (3,), "tail_base"),
        d=_ro(data.get("feet"), (4, 3), "feet"),
        hip_yaw=_ro(np.radians(np.asarray(data.get("hip_yaw_deg", [0.0] * 4), dtype=float)), (4,), "hip_yaw_deg"),
        q0=_ro(q0, (8,), "initial_q"),
    )
