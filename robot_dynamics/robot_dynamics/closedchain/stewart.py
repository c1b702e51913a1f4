"""Stewart platform (6-UPS) by the generalized momentum approach of Lopes (2009).

Source: A. M. Lopes, "Dynamic modeling of a Stewart platform using the generalized momentum
approach", Commun. Nonlinear Sci. Numer. Simulat. 14 (2009) 3389-3401 (equation numbers
below are the paper's). Parameters: ``config/stewart_platform.yaml`` (Table 2).

Coordinates: ``x = [x_P, y_P, z_P, psi_P, theta_P, phi_P]`` (eq. 3): the platform centre of
mass in {B} [m] and Euler angles ``R = Rz(psi) Ry(theta) Rx(phi)`` [rad] (eq. 4). The
generalized velocity in {B} is ``u = [v; w] = T x_dot`` with ``T = diag(1, J_A)`` (eqs. 8, 9, 23).

Model (eqs. 81-84)::

    I_E x_ddot + V_E x_dot = f_kin     I_E = I_B T   (sum of eqs. 27, 45, 57, 67, 75)
    f = f_kin + f_gra;  tau = J_C^-T f

``f`` is the wrench [force; moment] on the platform at its centre of mass, {B} axes, that the
legs must supply. ``I_B = sum J_k^T I_k J_k`` is the symmetric positive-definite inertia of the
whole mechanism in the platform's twist coordinates (the paper's matrices times T).

Every time derivative of the paper, d/dt(J_k T), d/dt(I_k J_k T), is written out analytically
here (``_leg_terms``), so the Coriolis/centripetal matrices V are computed, not differentiated
numerically.

Scope of the paper's leg model: eq. (33)-(34) take the leg angular velocity perpendicular to
the leg. A universal joint at B_i gives the leg a spin ``-psi_dot_leg sin(elevation)`` about
its own axis as well; the two agree exactly when the legs have no axial inertia
(I_Cxx = I_Sxx = 0) and equal transverse inertias (I_Cyy = I_Czz, I_Syy = I_Szz), which is
Table 2. :func:`stewart_closed_chain` builds the true U-P-S mechanism for the general layer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import as_batch, broadcast_batch
from ..errors import ModelError, SingularityError
from ..model.robot_model import JointSpec, LinkSpec, RobotModel, build_model, origin_matrix
from ..spatial import cross, rpy_rate_matrix, rpy_rate_matrix_dot, rpy_to_matrix, skew
from .general import ClosedChainModel, free_joint_specs, spherical_constraint

__all__ = [
    "COORDINATE_NAMES",
    "ACTUATOR_NAMES",
    "StewartParameters",
    "load_stewart_parameters",
    "StewartKinematics",
    "stewart_kinematics",
    "StewartDynamics",
    "stewart_dynamics",
    "StewartPlatform",
    "stewart_tree",
    "stewart_tree_specs",
    "stewart_closed_chain",
    "stewart_tree_state",
    "test_motion_points",
    "test_motion",
    "stewart_energy",
    "check_configuration",
    "tree_coordinates",
]

Array = NDArray[np.float64]

#: Platform coordinates (names of the general layer's free joint).
COORDINATE_NAMES = ("platform_x", "platform_y", "platform_z", "platform_yaw", "platform_pitch", "platform_roll")
#: Actuated prismatic joints, leg i joins B_i and P_i.
ACTUATOR_NAMES = tuple(f"leg{i}" for i in range(1, 7))

# Condition number of J_C above which the platform is called singular.
_COND_MAX = 1e10


@dataclass(frozen=True)
class StewartParameters:
    """Kinematic and dynamic parameters (Table 2), SI units, angles in rad.

    Attributes:
        r_B, r_P: radii of the base and platform joint circles [m].
        phi_B, phi_P: separation half-angles [rad].
        base_pair_centres, platform_pair_centres: angular centres of the joint pairs, (3,) [rad].
        leg_length_min, leg_length_max: actuator stroke [m].
        m_P, I_P: platform mass [kg] and principal inertia (3,) [kg m^2] in {P}.
        m_C, I_C, b_C: cylinder mass, inertia in {C_i} (x along the leg), CoM distance from B_i.
        m_S, I_S, b_S: piston mass, inertia in {S_i}, CoM distance from P_i.
        g: gravity modulus [m/s^2], along -z_B.
        test_motion: the YAML's ``test_motion`` block (P1, P2 in mm/deg, segment duration).
    """

    r_B: float
    r_P: float
    phi_B: float
    phi_P: float
    base_pair_centres: tuple[float, float, float]
    platform_pair_centres: tuple[float, float, float]
    leg_length_min: float
    leg_length_max: float
    m_P: float
    I_P: tuple[float, float, float]
    m_C: float
    I_C: tuple[float, float, float]
    b_C: float
    m_S: float
    I_S: tuple[float, float, float]
    b_S: float
    g: float = 9.81
    name: str = "stewart_platform"
    test_motion: Mapping[str, Any] = field(default_factory=dict)

    @property
    def b(self) -> Array:
        """Base joint centres b_i in {B}, (6, 3) [m] (z = 0 plane)."""
        c0, c1, c2 = self.base_pair_centres
        # pairs (B6, B1), (B2, B3), (B4, B5) separated by 2 phi_B
        ang = [c0 + self.phi_B, c1 - self.phi_B, c1 + self.phi_B, c2 - self.phi_B, c2 + self.phi_B, c0 - self.phi_B]
        return np.array([[self.r_B * math.cos(a), self.r_B * math.sin(a), 0.0] for a in ang])

    @property
    def p(self) -> Array:
        """Platform joint centres in {P}, (6, 3) [m] (z = 0 plane, through the CoM)."""
        c0, c1, c2 = self.platform_pair_centres
        # pairs (P1, P2), (P3, P4), (P5, P6) separated by 2 phi_P
        ang = [c0 - self.phi_P, c0 + self.phi_P, c1 - self.phi_P, c1 + self.phi_P, c2 - self.phi_P, c2 + self.phi_P]
        return np.array([[self.r_P * math.cos(a), self.r_P * math.sin(a), 0.0] for a in ang])

    def replace(self, **changes: Any) -> StewartParameters:
        """A copy with some parameters changed."""
        import dataclasses

        return dataclasses.replace(self, **changes)


def _num(block: Mapping[str, Any], key: str, where: str, *, positive: bool = False, n: int | None = None) -> Any:
    if key not in block:
        raise ModelError(f"{where}: missing key {key!r}; expected keys: {sorted(block) or 'none'}")
    try:
        val = np.asarray(block[key], dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{where}.{key}: expected a number, got {block[key]!r}") from None
    if (n is None and val.ndim != 0) or (n is not None and val.shape != (n,)) or not np.all(np.isfinite(val)):
        raise ModelError(f"{where}.{key}: expected {'a number' if n is None else f'{n} numbers'}, got {block[key]!r}")
    if np.any(val < 0) or (positive and np.any(val <= 0)):
        raise ModelError(f"{where}.{key}: must be {'> 0' if positive else '>= 0'}, got {block[key]!r}")
    return float(val) if n is None else tuple(float(v) for v in val)


def load_stewart_parameters(path: str | Path | None = None) -> StewartParameters:
    """Read the parameters YAML (default: the bundled ``config/stewart_platform.yaml``).

    Raises:
        ModelError: unreadable file, missing keys, non-physical values.
    """
    import yaml

    if path is None:
        from ..model.registry import share_directory

        path = share_directory() / "config" / "stewart_platform.yaml"
    try:
        data = yaml.safe_load(Path(path).read_text())
    except OSError as exc:
        raise ModelError(f"cannot read Stewart platform parameters {str(path)!r}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ModelError(f"{str(path)!r} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ModelError(f"{str(path)!r}: expected a mapping with geometry, platform, cylinder, piston")
    blocks = {}
    for key in ("geometry", "platform", "cylinder", "piston"):
        if not isinstance(data.get(key), dict):
            raise ModelError(f"{str(path)!r}: missing block {key!r}; expected geometry, platform, cylinder, piston")
        blocks[key] = data[key]
    geo, pl, cy, pi = blocks["geometry"], blocks["platform"], blocks["cylinder"], blocks["piston"]
    rad = math.radians
    params = StewartParameters(
        r_B=_num(geo, "r_B", "geometry", positive=True),
        r_P=_num(geo, "r_P", "geometry", positive=True),
        phi_B=rad(_num(geo, "phi_B", "geometry")),
        phi_P=rad(_num(geo, "phi_P", "geometry")),
        base_pair_centres=tuple(rad(a) for a in _num(geo, "base_pair_centres", "geometry", n=3)),  # type: ignore[arg-type]
        platform_pair_centres=tuple(rad(a) for a in _num(geo, "platform_pair_centres", "geometry", n=3)),  # type: ignore[arg-type]
        leg_length_min=_num(geo, "leg_length_min", "geometry", positive=True),
        leg_length_max=_num(geo, "leg_length_max", "geometry", positive=True),
        m_P=_num(pl, "mass", "platform", positive=True),
        I_P=_num(pl, "inertia", "platform", n=3),
        m_C=_num(cy, "mass", "cylinder"),
        I_C=_num(cy, "inertia", "cylinder", n=3),
        b_C=_num(cy, "b_C", "cylinder"),
        m_S=_num(pi, "mass", "piston"),
        I_S=_num(pi, "inertia", "piston", n=3),
        b_S=_num(pi, "b_S", "piston"),
        g=float(data.get("gravity", 9.81)),
        name=str(data.get("name", "stewart_platform")),
        test_motion=dict(data.get("test_motion") or {}),
    )
    if params.leg_length_min >= params.leg_length_max:
        raise ModelError(f"geometry: leg_length_min {params.leg_length_min} must be < leg_length_max {params.leg_length_max}")
    return params


def test_motion_points(params: StewartParameters) -> tuple[Array, Array, float]:
    """P1, P2 of Section 5 in SI ([m, m, m, rad, rad, rad]) and the segment duration [s]."""
    tm = params.test_motion
    try:
        P1 = np.asarray(tm["P1"], dtype=float)
        P2 = np.asarray(tm["P2"], dtype=float)
        dur = float(tm.get("segment_duration", 1.0))
    except (KeyError, TypeError, ValueError):
        raise ModelError("test_motion: expected P1, P2 (6 numbers each, mm and deg) and segment_duration [s]") from None
    if P1.shape != (6,) or P2.shape != (6,) or dur <= 0:
        raise ModelError("test_motion: P1 and P2 need 6 numbers each and segment_duration must be > 0")
    to_si = np.array([1e-3] * 3 + [math.pi / 180] * 3)
    return P1 * to_si, P2 * to_si, dur


def test_motion(params: StewartParameters, samples_per_segment: int = 200) -> tuple[Array, Array, Array, Array]:
    """The test motion of Section 5: P1 -> P2 -> P1 by third-order trigonometric splines.

    Returns:
        (t (T,), x, x_dot, x_ddot (T, 6)) in SI units.
    """
    from ..trajectory.splines import trigonometric_spline

    P1, P2, dur = test_motion_points(params)
    spline = trigonometric_spline(np.stack([P1, P2, P1]), dur)
    t = np.linspace(0.0, 2.0 * dur, 2 * samples_per_segment + 1)
    x, xd, xdd = spline.sample(t)
    return t, x, xd, xdd


test_motion.__test__ = False  # type: ignore[attr-defined]  # not a pytest test
test_motion_points.__test__ = False  # type: ignore[attr-defined]


# -- kinematics (eqs. 3-9, 29-40, 59-62) ----------------------------------------------------
def _euler_jacobian(x: Array) -> Array:
    """J_A of eq. (9): w = J_A [psi_dot, theta_dot, phi_dot], (N, 3, 3).

    R = Rz(psi) Ry(theta) Rx(phi) is the URDF roll-pitch-yaw rotation of (phi, theta, psi), so
    J_A is :func:`rpy_rate_matrix` with the angles, and so its columns, in reverse order.
    """
    return rpy_rate_matrix(x[:, 5:2:-1])[..., ::-1]


def _euler_jacobian_dot(x: Array, xd: Array) -> Array:
    """d/dt J_A, (N, 3, 3)."""
    return rpy_rate_matrix_dot(x[:, 5:2:-1], xd[:, 5:2:-1])[..., ::-1]


def _block_T(JA: Array) -> Array:
    """T = diag(identity, J_A), eq. (23), (N, 6, 6)."""
    T = np.zeros(JA.shape[:-2] + (6, 6))
    T[..., :3, :3] = np.eye(3)
    T[..., 3:, 3:] = JA
    return T


class StewartKinematics(NamedTuple):
    """Kinematic quantities at x (and x_dot when given). Shapes for N samples.

    Attributes:
        R: {B}_R_{P}, eq. (4), (N, 3, 3).
        T: diag(1, J_A), eq. (23), (N, 6, 6).
        legs: leg vectors l_i = x_pos + R p_i - b_i, eq. (31), (N, 6, 3) [m].
        lengths: l_i, (N, 6) [m].
        J_C: l_dot = J_C [v; w], eq. (6), (N, 6, 6).
        J_E: l_dot = J_E x_dot, eq. (5), J_E = J_C T, (N, 6, 6).
        length_rates: l_dot, (N, 6) [m/s] (zeros without x_dot).
    """

    R: Array
    T: Array
    legs: Array
    lengths: Array
    J_C: Array
    J_E: Array
    length_rates: Array


def _kin(params: StewartParameters, x: Array, xd: Array) -> StewartKinematics:
    R = rpy_to_matrix(x[:, [5, 4, 3]])  # eq. (4): Rz(psi) Ry(theta) Rx(phi)
    T = _block_T(_euler_jacobian(x))
    Pp = np.einsum("nij,kj->nki", R, params.p)  # P_p_i|B = R p_i
    legs = x[:, None, :3] + Pp - params.b  # eq. (31)
    lengths = np.linalg.norm(legs, axis=-1)
    lhat = legs / lengths[..., None]  # eq. (30)
    # l_dot_i = lhat . (v + w x Pp) = [lhat^T, (Pp x lhat)^T] u  (eq. 6)
    J_C = np.concatenate([lhat, cross(Pp, lhat)], axis=-1)
    J_E = J_C @ T  # eq. (5)
    rates = np.einsum("nkj,nj->nk", J_E, xd)
    return StewartKinematics(R, T, legs, lengths, J_C, J_E, rates)


def _inputs(*arrays: tuple[ArrayLike, str]) -> tuple[list[Array], tuple[int, ...]]:
    parts = [as_batch(a, 6, what, COORDINATE_NAMES) for a, what in arrays]
    return broadcast_batch(parts)


def stewart_kinematics(params: StewartParameters, x: ArrayLike, xd: ArrayLike | None = None) -> StewartKinematics:
    """Leg vectors, lengths and Jacobians (eqs. 3-9) for platform poses x, shape (..., 6)."""
    (xf, xdf), batch = _inputs((x, "x"), (np.zeros(6) if xd is None else xd, "x_dot"))
    k = _kin(params, xf, xdf)
    return StewartKinematics(*(a.reshape(batch + a.shape[1:]) for a in k))


def check_configuration(params: StewartParameters, kin: StewartKinematics) -> tuple[NDArray[np.bool_], str]:
    """Which samples are admissible: leg lengths in the stroke and J_C well conditioned.

    Returns:
        (ok (N,), message): the message describes the first bad sample ("" when all are ok).
    """
    lengths = kin.lengths.reshape(-1, 6)
    J_C = kin.J_C.reshape(-1, 6, 6)
    short = lengths < params.leg_length_min
    long_ = lengths > params.leg_length_max
    s = np.linalg.svd(J_C, compute_uv=False)
    cond = np.where(s[:, -1] > 0, s[:, 0] / np.maximum(s[:, -1], 1e-300), np.inf)
    sing = cond > _COND_MAX
    ok = ~(short.any(1) | long_.any(1) | sing)
    if ok.all():
        return ok, ""
    n = int(np.argmin(ok))
    if short[n].any() or long_[n].any():
        i = int(np.argmax(short[n] | long_[n]))
        msg = (f"sample {n}: leg {i + 1} length {lengths[n, i]:.4f} m is outside the stroke "
               f"[{params.leg_length_min}, {params.leg_length_max}] m: unreachable pose")
    else:
        msg = f"sample {n}: J_C is singular (condition number {cond[n]:.3g}): the legs cannot hold the platform"
    return ok, msg


# -- dynamics (eqs. 10-84) ----------------------------------------------------------------------
class StewartDynamics(NamedTuple):
    """The generalized-momentum model at (x, x_dot, x_ddot); N samples.

    Attributes:
        I: inertia in twist coordinates, ``I_B = sum J_k^T I_k J_k``, symmetric, (N, 6, 6).
        I_E: the paper's inertia matrix I_B T (eq. 81), (N, 6, 6).
        V: the paper's Coriolis/centripetal matrix V_E (eq. 81), (N, 6, 6).
        G: gravitational wrench f_gra|B (eq. 83), (N, 6).
        G_E: gradient of the potential energy in x (eqs. 78-80), (N, 6).
        f: wrench on the platform (eq. 84), (N, 6) [N, N m].
        tau: actuator forces (eq. 84), (N, 6) [N].
        tau_platform, tau_cylinders, tau_pistons: contributions of the platform, the six
            cylinders and the six pistons to tau (kinetic + gravitational), (N, 6) [N].
        lengths, length_rates: leg lengths [m] and rates [m/s], (N, 6).
        ok: admissible samples (stroke, J_C), (N,).
        message: why a sample is not admissible ("" if all are).
    """

    I: Array
    I_E: Array
    V: Array
    G: Array
    G_E: Array
    f: Array
    tau: Array
    tau_platform: Array
    tau_cylinders: Array
    tau_pistons: Array
    lengths: Array
    length_rates: Array
    ok: NDArray[np.bool_]
    message: str


def _S(v: Array) -> Array:
    return skew(v)


def _ST(v: Array) -> Array:
    return np.swapaxes(skew(v), -1, -2)


class _BodyTerms(NamedTuple):
    M: Array  # J^T I J, (N, 6, 6) summed over the six legs
    V: Array  # J^T d/dt(I J T), (N, 6, 6)
    grav: Array  # sum m g J_z^T, wrench in twist coordinates, (N, 6)


def _leg_terms(params: StewartParameters, x: Array, xd: Array, T: Array, Tdot: Array) -> dict[str, _BodyTerms]:
    """Inertia and Coriolis matrices of the cylinders and pistons (eqs. 29-76), in u coordinates.

    Returns a dict with 'cyl_tra', 'cyl_rot', 'pis_tra', 'pis_rot' body groups.
    """
    N = x.shape[0]
    R = rpy_to_matrix(x[:, [5, 4, 3]])
    u = np.einsum("nij,nj->ni", T, xd)
    v, w = u[:, None, :3], u[:, None, 3:]
    Pp = np.einsum("nij,kj->nki", R, params.p)  # (N, 6, 3)
    Ppd = cross(np.broadcast_to(w, Pp.shape), Pp)  # d/dt R p_i = w x R p_i
    l = x[:, None, :3] + Pp - params.b  # eq. (31)
    ld = v + Ppd  # velocity of P_i
    n = np.linalg.norm(l, axis=-1)[..., None]
    nd = np.einsum("nki,nki->nk", l, ld)[..., None] / n
    lhat = l / n  # eq. (30)
    lhat_d = (ld - lhat * nd) / n
    lbar = l / n**2  # eq. (37)
    lbar_d = ld / n**2 - 2.0 * l * nd / n**3
    I3 = np.eye(3)
    PpT, PpdT = _ST(Pp), _ST(Ppd)
    # eq. (36): J_D = [~lbar, ~lbar ~Pp^T]; w_leg = J_D u
    S_lb, S_lbd = _S(lbar), _S(lbar_d)
    J_D = np.concatenate([S_lb, S_lb @ PpT], -1)
    J_Dd = np.concatenate([S_lbd, S_lbd @ PpT + S_lb @ PpdT], -1)
    # eq. (40): J_B = b_C ~lhat^T J_D (cylinder CoM velocity, eq. 32)
    ST_lh, ST_lhd = _ST(lhat), _ST(lhat_d)
    J_B = params.b_C * ST_lh @ J_D
    J_Bd = params.b_C * (ST_lhd @ J_D + ST_lh @ J_Dd)
    # eq. (62): J_G = [Pm, Pm ~Pp^T], Pm = 1 - b_S ~lhat^T ~lbar (piston CoM velocity, eq. 61;
    # the extracted eq. (60) shows "l_i" where the velocity of P_i, v + w x Pp, is meant)
    Pm = I3 - params.b_S * ST_lh @ S_lb
    Pmd = -params.b_S * (ST_lhd @ S_lb + ST_lh @ S_lbd)
    J_G = np.concatenate([Pm, Pm @ PpT], -1)
    J_Gd = np.concatenate([Pmd, Pmd @ PpT + Pm @ PpdT], -1)
    # eqs. (49)-(52): {C_i} = [x_C, y_C, z_C], x_C along the leg, y_C horizontal. The extracted
    # eq. (51) lost its numerators: y_C = [-l_iy, l_ix, 0] / sqrt(l_ix^2 + l_iy^2).
    rho = np.linalg.norm(l[..., :2], axis=-1)[..., None]
    rho_d = (l[..., 0:1] * ld[..., 0:1] + l[..., 1:2] * ld[..., 1:2]) / rho
    yv = np.stack([-l[..., 1], l[..., 0], np.zeros_like(l[..., 0])], -1)
    yv_d = np.stack([-ld[..., 1], ld[..., 0], np.zeros_like(l[..., 0])], -1)
    yC = yv / rho
    yC_d = yv_d / rho - yv * rho_d / rho**2
    zC = cross(lhat, yC)
    zC_d = cross(lhat_d, yC) + cross(lhat, yC_d)
    RC = np.stack([lhat, yC, zC], -1)
    RC_d = np.stack([lhat_d, yC_d, zC_d], -1)
    out: dict[str, _BodyTerms] = {}
    TT = np.broadcast_to(T[:, None], (N, 6, 6, 6))
    TdT = np.broadcast_to(Tdot[:, None], (N, 6, 6, 6))
    ez = np.array([0.0, 0.0, 1.0])
    # eq. (65) writes J_B for the piston where J_G of eqs. (62)-(64) is meant: J_G is used
    for key, m, J, Jd in (("cyl_tra", params.m_C, J_B, J_Bd), ("pis_tra", params.m_S, J_G, J_Gd)):
        JT = np.swapaxes(J, -1, -2)
        M = m * JT @ J  # eqs. (45), (67) without T
        V = m * JT @ (Jd @ TT + J @ TdT)  # eqs. (46), (68): m J^T d/dt(J T)
        grav = m * params.g * np.einsum("nkji,j->nki", J, ez)  # gradient of m g z_c (eqs. 79, 80)
        out[key] = _BodyTerms(M.sum(1), V.sum(1), grav.sum(1))
    for key, diag in (("cyl_rot", params.I_C), ("pis_rot", params.I_S)):
        D = np.diag(diag)
        Ib = RC @ D @ np.swapaxes(RC, -1, -2)  # eqs. (48), (70)
        Ib_d = RC_d @ D @ np.swapaxes(RC, -1, -2) + RC @ D @ np.swapaxes(RC_d, -1, -2)
        JT = np.swapaxes(J_D, -1, -2)
        M = JT @ Ib @ J_D  # eqs. (57), (75) without T
        V = JT @ ((Ib_d @ J_D + Ib @ J_Dd) @ TT + Ib @ J_D @ TdT)  # eqs. (58), (76) (76 drops the ^T of J_D^T)
        out[key] = _BodyTerms(M.sum(1), V.sum(1), np.zeros((N, 6)))
    return out


def _platform_terms(params: StewartParameters, x: Array, xd: Array, T: Array, Tdot: Array) -> _BodyTerms:
    """Moving platform, eqs. (13)-(28): I_P|B, and d/dt(I_P|B T)."""
    N = x.shape[0]
    R = rpy_to_matrix(x[:, [5, 4, 3]])
    w = np.einsum("nij,nj->ni", T, xd)[:, 3:]
    Irot = R @ np.diag(params.I_P) @ np.swapaxes(R, -1, -2)  # eq. (17)
    Irot_d = _S(w) @ Irot - Irot @ _S(w)  # d/dt (R I R^T) = ~w I - I ~w
    IP = np.zeros((N, 6, 6))
    IP[:, :3, :3] = params.m_P * np.eye(3)  # eq. (14)
    IP[:, 3:, 3:] = Irot  # eq. (19)
    IPd = np.zeros((N, 6, 6))
    IPd[:, 3:, 3:] = Irot_d
    V = IPd @ T + IP @ Tdot  # eq. (28): d/dt(I_P|B T)
    grav = np.zeros((N, 6))
    grav[:, 2] = params.m_P * params.g  # gradient of m_P g z_P (eq. 78)
    return _BodyTerms(IP, V, grav)


def _solve_T(T: Array, b: Array, transpose: bool) -> Array:
    A = np.swapaxes(T, -1, -2) if transpose else T
    out: Array = np.asarray(np.linalg.solve(A, b[..., None])[..., 0], dtype=float)
    return out


def stewart_dynamics(
    params: StewartParameters, x: ArrayLike, xd: ArrayLike, xdd: ArrayLike, *, check: bool = True
) -> StewartDynamics:
    """Inverse dynamics of the paper (eqs. 10-84) with the split of Fig. 6.

    Args:
        params: parameters (Table 2).
        x, xd, xdd: platform pose, its rate and acceleration (Euler-angle rates), (..., 6).
        check: raise on an inadmissible sample instead of flagging it in ``ok``.

    Raises:
        SingularityError: (with ``check``) a leg outside its stroke or a singular J_C.
    """
    (xf, xdf, xddf), batch = _inputs((x, "x"), (xd, "x_dot"), (xdd, "x_ddot"))
    N = xf.shape[0]
    kin = _kin(params, xf, xdf)
    ok, msg = check_configuration(params, kin)
    if check and not ok.all():
        raise SingularityError(msg)
    T = kin.T
    Tdot = np.zeros((N, 6, 6))
    Tdot[:, 3:, 3:] = _euler_jacobian_dot(xf, xdf)
    plat = _platform_terms(params, xf, xdf, T, Tdot)
    legs = _leg_terms(params, xf, xdf, T, Tdot)
    groups = {"platform": [plat], "cylinders": [legs["cyl_tra"], legs["cyl_rot"]], "pistons": [legs["pis_tra"], legs["pis_rot"]]}
    I_B: Array = np.sum([b.M for g in groups.values() for b in g], axis=0)
    V: Array = np.sum([b.V for g in groups.values() for b in g], axis=0)

    def wrench(bodies: list[_BodyTerms]) -> tuple[Array, Array]:
        M: Array = np.sum([b.M for b in bodies], axis=0)
        Vb: Array = np.sum([b.V for b in bodies], axis=0)
        f_kin = np.einsum("nij,nj->ni", M @ T, xddf) + np.einsum("nij,nj->ni", Vb, xdf)  # eq. (81)
        # eqs. (78)-(80): G_E = dP/dx = T^T (sum m g J_z^T) by the chain rule
        G_E = np.einsum("nji,nj->ni", T, np.sum([b.grav for b in bodies], axis=0))
        # eq. (83) writes T^-1 G_E; the wrench whose power f . u equals G_E . x_dot is T^-T G_E
        # (T = diag(1, J_A) is not orthogonal), so T^-T is used here. (83) also lists S_i twice:
        # the gravity terms summed are the platform's, the cylinders' (C_i) and the pistons' (S_i).
        f_gra = _solve_T(T, G_E, transpose=True)
        return f_kin + f_gra, G_E

    parts = {k: wrench(v) for k, v in groups.items()}
    f: Array = np.sum([p[0] for p in parts.values()], axis=0)
    G_E: Array = np.sum([p[1] for p in parts.values()], axis=0)
    G = _solve_T(T, G_E, transpose=True)
    J_CT = np.swapaxes(kin.J_C, -1, -2)
    with np.errstate(all="ignore"):
        def tau_of(fw: Array) -> Array:  # eq. (84): tau = J_C^-T f (eq. (25) prints J_C^-1: a slip)
            out = np.full_like(fw, np.nan)
            out[ok] = np.linalg.solve(J_CT[ok], fw[ok][..., None])[..., 0]
            return out

        tau = tau_of(f)
        tp, tc, ts = (tau_of(parts[k][0]) for k in ("platform", "cylinders", "pistons"))
    I_E = I_B @ T

    def rs(a: Array) -> Array:
        return a.reshape(batch + a.shape[1:])

    return StewartDynamics(rs(I_B), rs(I_E), rs(V), rs(G), rs(G_E), rs(f), rs(tau), rs(tp), rs(tc), rs(ts),
                           rs(kin.lengths), rs(kin.length_rates), ok.reshape(batch), msg)


def stewart_energy(params: StewartParameters, x: ArrayLike, xd: ArrayLike) -> tuple[Array, Array]:
    """Kinetic ``1/2 u^T I_B u`` and potential ``sum m g z_c`` (eq. 77) energy [J], each (...)."""
    (xf, xdf), batch = _inputs((x, "x"), (xd, "x_dot"))
    d = stewart_dynamics(params, xf, xdf, np.zeros_like(xf), check=False)
    T = _block_T(_euler_jacobian(xf))
    u = np.einsum("nij,nj->ni", T, xdf)
    kin = 0.5 * np.einsum("ni,nij,nj->n", u, d.I, u)
    k = _kin(params, xf, xdf)
    lhat = k.legs / k.lengths[..., None]
    z_c = params.b[:, 2] + params.b_C * lhat[..., 2]  # eq. (29)
    z_s = xf[:, None, 2] + (k.R @ params.p.T).transpose(0, 2, 1)[..., 2] - params.b_S * lhat[..., 2]  # eq. (59)
    pot = params.g * (params.m_P * xf[:, 2] + params.m_C * z_c.sum(1) + params.m_S * z_s.sum(1))
    return kin.reshape(batch), pot.reshape(batch)


class StewartPlatform:
    """The paper's model behind the :class:`~robot_dynamics.closedchain.Mechanism` interface.

    Coordinates ``x`` (..., 6) as in eq. (3); actuator forces (..., 6) in leg order.
    """

    def __init__(self, params: StewartParameters | None = None):
        self.params = params if params is not None else load_stewart_parameters()

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        return COORDINATE_NAMES

    @property
    def actuator_names(self) -> tuple[str, ...]:
        return ACTUATOR_NAMES

    def leg_lengths(self, x: ArrayLike) -> Array:
        """Inverse kinematics: leg lengths l_i [m], (..., 6)."""
        return stewart_kinematics(self.params, x).lengths

    def dynamics(self, x: ArrayLike, xd: ArrayLike, xdd: ArrayLike, *, check: bool = True) -> StewartDynamics:
        """All terms of the model (see :func:`stewart_dynamics`)."""
        return stewart_dynamics(self.params, x, xd, xdd, check=check)

    def inverse_dynamics(self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike) -> Array:
        """Actuator forces tau (eq. 84), (..., 6) [N]."""
        return stewart_dynamics(self.params, q, qd, qdd).tau

    def forward_dynamics(self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike) -> Array:
        """x_ddot from ``I_B T x_ddot = J_C^T tau - V x_dot - G`` (eqs. 81-84 solved for x_ddot)."""
        (xf, xdf, tf), batch = _inputs((q, "x"), (qd, "x_dot"), (tau, "tau"))
        d = stewart_dynamics(self.params, xf, xdf, np.zeros_like(xf))
        kin = _kin(self.params, xf, xdf)
        rhs = np.einsum("nji,nj->ni", kin.J_C, tf) - d.f  # f at x_ddot = 0 is V x_dot + G
        xdd: Array = np.linalg.solve(d.I_E, rhs[..., None])[..., 0]
        return xdd.reshape(batch + (6,))

    def mass_matrix(self, q: ArrayLike) -> Array:
        """Symmetric mass matrix in x: ``T^T I_B T``, (..., 6, 6); ``J_E^T tau = M x_ddot + ...``."""
        (xf,), batch = _inputs((q, "x"))
        z = np.zeros_like(xf)
        d = stewart_dynamics(self.params, xf, z, z, check=False)
        T = _block_T(_euler_jacobian(xf))
        return (np.swapaxes(T, -1, -2) @ d.I @ T).reshape(batch + (6, 6))

    def __repr__(self) -> str:
        return f"StewartPlatform({self.params.name!r})"


# -- the same mechanism for the general closed-chain layer --------------------------------------
def stewart_tree(params: StewartParameters) -> RobotModel:
    """Spanning tree: a free platform and six U-P legs; the S joints at P_i are the cut joints.

    Leg i: ``leg{i}_uz`` (revolute about z_B at B_i), ``leg{i}_uy`` (revolute about the new y,
    which stays horizontal, as y_C of eq. 51), cylinder body, ``leg{i}`` (prismatic along the
    leg, the actuator), piston body whose frame origin is P_i. Cylinder and piston frames are
    {C_i} and {S_i} of the paper (x along the leg, y horizontal).
    """
    links, joints = stewart_tree_specs(params)
    return build_model(params.name, links, joints, gravity=(0.0, 0.0, -params.g))


def stewart_tree_specs(params: StewartParameters) -> tuple[list[LinkSpec], list[JointSpec]]:
    """Link and joint specs of :func:`stewart_tree` (e.g. for URDF export)."""
    links = [LinkSpec("base")]
    plat = LinkSpec("platform", params.m_P, np.zeros(3), np.diag(params.I_P))
    fl, fj = free_joint_specs("base", "platform", prefix="platform")
    links += [*fl, plat]
    joints = list(fj)
    ex, ey, ez = np.eye(3)
    for i, b in enumerate(params.b, start=1):
        links += [
            LinkSpec(f"yoke{i}"),
            LinkSpec(f"cylinder{i}", params.m_C, np.array([params.b_C, 0.0, 0.0]), np.diag(params.I_C)),
            LinkSpec(f"piston{i}", params.m_S, np.array([-params.b_S, 0.0, 0.0]), np.diag(params.I_S)),
        ]
        joints += [
            JointSpec(f"leg{i}_uz", "continuous", "base", f"yoke{i}", origin=origin_matrix(b, [0, 0, 0]), axis=ez),
            JointSpec(f"leg{i}_uy", "continuous", f"yoke{i}", f"cylinder{i}", axis=ey),
            JointSpec(f"leg{i}", "prismatic", f"cylinder{i}", f"piston{i}", axis=ex,
                      lower=params.leg_length_min, upper=params.leg_length_max),
        ]
    return links, joints


def stewart_tree_state(params: StewartParameters, x: ArrayLike) -> Array:
    """Tree coordinates of the legs for platform poses x (closed form), (..., nq of the tree).

    Used as the starting guess of the Newton loop closure.
    """
    (xf,), batch = _inputs((x, "x"))
    kin = _kin(params, xf, np.zeros_like(xf))
    lhat = kin.legs / kin.lengths[..., None]
    # R = Rz(a) Ry(b): x_C = (cos a cos b, sin a cos b, -sin b)
    a = np.arctan2(lhat[..., 1], lhat[..., 0])
    b = -np.arcsin(np.clip(lhat[..., 2], -1.0, 1.0))
    legs = np.stack([a, b, kin.lengths], -1).reshape(-1, 18)
    return np.concatenate([xf, legs], axis=1).reshape(batch + (24,))


def stewart_closed_chain(params: StewartParameters) -> ClosedChainModel:
    """The Stewart platform for the general layer: tree + six spherical closures at P_i.

    Independent coordinates: the platform pose (``COORDINATE_NAMES``); actuated: ``leg1..leg6``.
    """
    tree = stewart_tree(params)
    cons = [spherical_constraint(f"S{i}", f"piston{i}", (0.0, 0.0, 0.0), "platform", p)
            for i, p in enumerate(params.p, start=1)]
    P1 = np.array([0.0, 0.0, 0.5 * (params.leg_length_min + params.leg_length_max), 0, 0, 0])
    mech = ClosedChainModel.build(tree, cons, actuated=list(ACTUATOR_NAMES), independent=list(COORDINATE_NAMES),
                                  q_reference=np.zeros(tree.nq), gravity=(0.0, 0.0, -params.g))
    order = [tree.joint_index(n) for n in _tree_joint_order()]
    q_ref = np.zeros(tree.nq)
    q_ref[order] = stewart_tree_state(params, P1)
    import dataclasses

    return dataclasses.replace(mech, q_reference=q_ref)


def _tree_joint_order() -> list[str]:
    names = list(COORDINATE_NAMES)
    for i in range(1, 7):
        names += [f"leg{i}_uz", f"leg{i}_uy", f"leg{i}"]
    return names


def tree_coordinates(mech: ClosedChainModel, params: StewartParameters, x: ArrayLike) -> Array:
    """Closed-form tree configuration for poses x, in the tree's joint order, (..., nq)."""
    (xf,), batch = _inputs((x, "x"))
    st = stewart_tree_state(params, xf)
    q = np.zeros((xf.shape[0], mech.nq))
    q[:, [mech.tree.joint_index(n) for n in _tree_joint_order()]] = st
    return q.reshape(batch + (mech.nq,))
