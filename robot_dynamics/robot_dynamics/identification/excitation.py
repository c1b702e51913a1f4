"""Excitation trajectories: finite Fourier series per joint, optimised for the base regressor's
condition number within the model's limits (Swevers et al. 1997; Khalil 7.5.4.2).

Joint j follows, with the fundamental ``wf = 2 pi f`` and H harmonics,

    q_j(t) = q0_j + sum_l [ a_jl / (l wf) sin(l wf t) - b_jl / (l wf) (cos(l wf t) - 1) ]
    qd_j(t)  = sum_l [ a_jl cos(l wf t) + b_jl sin(l wf t) ]
    qdd_j(t) = sum_l l wf [ -a_jl sin(l wf t) + b_jl cos(l wf t) ]

so that q_j(0) = q0_j by construction; ``sum_l a_jl = 0`` and ``sum_l l b_jl = 0`` put the
arm at rest at t = 0 (qd = qdd = 0), and periodicity at rest again at every period's end. The
coefficients live in the null space of these two equations per joint.

The criterion is the condition number of the observation matrix (the base regressor with the
friction and offset columns, columns scaled to unit norm) stacked over samples of one period;
the constraints are the position limits (with a margin), the velocity and acceleration limits
and the effort limits (inverse dynamics of the nominal model, friction included), checked at
every sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..dynamics import rnea
from ..dynamics.base_parameters import BaseParameters, base_parameters
from ..dynamics.regressor import regressor
from ..errors import InputError
from ..model.robot_model import RobotModel
from ..trajectory.base import Trajectory

if TYPE_CHECKING:
    from .._progress import HonestBar

__all__ = ["FourierExcitation", "ExcitationDesign", "design_excitation", "observation_condition", "limit_usage"]

Array = NDArray[np.float64]


class FourierExcitation(Trajectory):
    """A rest-to-rest periodic Fourier trajectory (see the module docstring).

    Args:
        q0: (n,) rest pose [rad or m]. frequency: fundamental f [Hz].
        a, b: (n, H) coefficients [rad/s]; projected on the rest constraints.
        periods: number of periods (duration = periods / f).
    """

    rest_at_end = True

    def __init__(self, q0: ArrayLike, frequency: float, a: ArrayLike, b: ArrayLike, periods: int = 1):
        self.q0 = np.asarray(q0, dtype=float).reshape(-1)
        self.frequency = float(frequency)
        if not np.isfinite(self.frequency) or self.frequency <= 0:
            raise InputError(f"frequency: expected a positive frequency [Hz], got {frequency!r}")
        a = np.asarray(a, dtype=float)
        b = np.asarray(b, dtype=float)
        if a.ndim != 2 or a.shape != b.shape or a.shape[0] != self.q0.size:
            raise InputError(f"a, b: expected two ({self.q0.size}, H) arrays, got {a.shape} and {b.shape}")
        if int(periods) != periods or periods < 1:
            raise InputError(f"periods: expected an integer >= 1, got {periods!r}")
        H = a.shape[1]
        l = np.arange(1, H + 1, dtype=float)
        # Project on sum a = 0 and sum l b = 0 (rest at t = 0 and every period's end).
        self.a = a - (a.sum(axis=1, keepdims=True) / H)
        self.b = b - np.outer(b @ l, l) / (l @ l)
        self.n, self.harmonics = self.q0.size, H
        self.periods = int(periods)
        self.duration = self.periods / self.frequency

    def _evaluate(self, t: Array) -> tuple[Array, Array, Array]:
        w = 2.0 * np.pi * self.frequency
        l = np.arange(1, self.harmonics + 1, dtype=float)
        ph = np.outer(t, l * w)  # (N, H)
        s, c = np.sin(ph), np.cos(ph)
        q = self.q0 + (s / (l * w)) @ self.a.T - ((c - 1.0) / (l * w)) @ self.b.T
        qd = c @ self.a.T + s @ self.b.T
        qdd = (-s * l * w) @ self.a.T + (c * l * w) @ self.b.T
        return q, qd, qdd


def _columns(model: RobotModel, bp: BaseParameters, q: Array, qd: Array, qdd: Array) -> Array:
    """The observation matrix (N nq, b + nq): base regressor, friction columns, offsets."""
    W = regressor(model, q, qd, qdd)[..., bp.independent]
    N = q.shape[0]
    off = np.broadcast_to(np.eye(model.nq), (N, model.nq, model.nq))
    return np.concatenate([W, off], axis=2).reshape(N * model.nq, -1)


def observation_condition(model: RobotModel, traj: Trajectory, *, samples: int = 100,
                          base: BaseParameters | None = None) -> float:
    """Condition number of the column-scaled observation matrix over ``samples`` of ``traj``."""
    bp = base if base is not None else base_parameters(model)
    t = np.linspace(0.0, traj.duration, samples, endpoint=False)
    A = _columns(model, bp, *traj.sample(t))
    A = A / np.maximum(np.linalg.norm(A, axis=0), 1e-300)
    s = np.linalg.svd(A, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0 else float("inf")


def _limits(model: RobotModel, margin: float) -> tuple[Array, Array, Array, Array, Array]:
    from ..trajectory.planning import model_limits

    kv, ka = model_limits(model)
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    span = hi - lo
    return lo + margin * span, hi - margin * span, kv, ka, model.effort_limit


def limit_usage(model: RobotModel, traj: Trajectory, *, samples: int = 4000, margin: float = 0.05) -> dict[str, Array]:
    """Peak use of each limit along ``traj`` per joint, as a fraction (<= 1 is within limits):
    position (inside the range shrunk by ``margin`` of its span), velocity, acceleration and
    effort (inverse dynamics of ``model`` with its friction)."""
    lo, hi, kv, ka, tau_max = _limits(model, margin)
    t = np.linspace(0.0, traj.duration, samples)
    q, qd, qdd = traj.sample(t)
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    tau = rnea(model, q, qd, qdd)
    return {
        "position": np.max(np.abs(q - mid), axis=0) / half,
        "velocity": np.max(np.abs(qd), axis=0) / kv,
        "acceleration": np.max(np.abs(qdd), axis=0) / ka,
        "effort": np.max(np.abs(tau), axis=0) / np.where(np.isfinite(tau_max), tau_max, np.inf),
    }


@dataclass(frozen=True)
class ExcitationDesign:
    """An optimised excitation: the trajectory, its condition number, the start's, and limits use."""

    trajectory: FourierExcitation
    condition: float
    initial_condition: float
    usage: dict[str, Array]
    iterations: int


class _ExcitationProblem:
    """The criterion and the limits of one excitation design, on ``samples`` points of one period.

    The free numbers ``z``, shape (n 2 (H-1),), are each joint's coefficients a and b in the
    null-space bases of the rest constraints.
    """

    def __init__(self, model: RobotModel, limits: tuple[Array, Array, Array, Array, Array], q0: Array,
                 frequency: float, harmonics: int, periods: int, samples: int):
        self.model = model
        lo, hi, self.kv, self.ka, self.tau_max = limits
        self.q0, self.frequency, self.periods = q0, frequency, periods
        H = harmonics
        self.bp = base_parameters(model)
        self.t = np.linspace(0.0, 1.0 / frequency, samples, endpoint=False)
        l = np.arange(1, H + 1, dtype=float)
        # Null-space bases of the rest constraints: sum a = 0 and sum l b = 0.
        self.Na = np.linalg.svd(np.ones((1, H)))[2][1:].T  # (H, H-1)
        self.Nb = np.linalg.svd(l[None, :])[2][1:].T
        self.m = H - 1
        self.mid, self.half = 0.5 * (lo + hi), 0.5 * (hi - lo)
        self._cache: dict[bytes, tuple[float, Array]] = {}

    def trajectory(self, z: Array) -> FourierExcitation:
        """The excitation of the free numbers z."""
        zz = z.reshape(self.model.nq, 2, self.m)
        return FourierExcitation(self.q0, self.frequency, zz[:, 0] @ self.Na.T, zz[:, 1] @ self.Nb.T, self.periods)

    def evaluate(self, z: Array) -> tuple[float, Array]:
        """(log of the condition number, slack of every limit per joint (5 n,), >= 0 inside)."""
        key = z.tobytes()
        cache = self._cache
        if key not in cache:
            model, tau_max = self.model, self.tau_max
            q, qd, qdd = self.trajectory(z).sample(self.t)
            A = _columns(model, self.bp, q, qd, qdd)
            A = A / np.maximum(np.linalg.norm(A, axis=0), 1e-300)
            s = np.linalg.svd(A, compute_uv=False)
            crit = float(np.log(s[0] / max(s[-1], 1e-300)))
            tau = rnea(model, q, qd, qdd)
            rel = (q - self.mid) / self.half
            g = np.concatenate([
                1.0 - np.max(rel, axis=0),
                1.0 + np.min(rel, axis=0),
                1.0 - np.max(np.abs(qd), axis=0) / self.kv,
                1.0 - np.max(np.abs(qdd), axis=0) / self.ka,
                1.0 - np.max(np.abs(tau), axis=0) / np.where(np.isfinite(tau_max), tau_max, 1e300),
            ])
            if len(cache) > 512:  # the objective and the constraints are asked at the same points
                cache.clear()
            cache[key] = (crit, g)
        return cache[key]

    def scale_into_limits(self, z: Array) -> Array:
        """z shrunk by steps of 10 % until every limit holds on the samples."""
        for _ in range(60):
            if np.all(self.evaluate(z)[1] >= 0):
                return z
            z = 0.9 * z
        raise InputError("no excitation fits the limits around q0 (effort limits below the gravity load?)")

    def into_limits(self, u: Array, effort: Array, fallback: Array) -> Array:
        """The coefficients u scaled to the largest motion within every limit: positions,
        velocities and accelerations are linear in the scale (exact), efforts are not (shrink);
        ``fallback`` when the efforts stay above ``effort`` (n,) [N m or N]."""
        q0, mid, half, t = self.q0, self.mid, self.half, self.t
        qv, qdv, qddv = self.trajectory(u).sample(t)
        dq = (qv - q0) / half
        room_hi, room_lo = (1.0 - (q0 - mid) / half), (1.0 + (q0 - mid) / half)
        with np.errstate(divide="ignore", invalid="ignore"):
            caps = [np.where(dq > 0, room_hi / dq, np.inf).min(), np.where(dq < 0, room_lo / -dq, np.inf).min(),
                    (self.kv / np.abs(qdv)).min(), (self.ka / np.abs(qddv)).min()]
        scale = float(min(np.nanmin(caps), 1e6))
        z = scale * u
        for _ in range(60):
            q, qd, qdd = self.trajectory(z).sample(t)
            if np.all(np.abs(rnea(self.model, q, qd, qdd)) <= effort):
                return z
            z = 0.95 * z
        return fallback


def _evolve(problem: _ExcitationProblem, z0: Array, maxiter: int, rng: np.random.Generator, effort: Array,
            bar: HonestBar | None) -> tuple[Array, int]:
    """``maxiter`` iterations of 10 trials from the feasible z0: (the best z, iterations done)."""
    nit = 0
    # Optimise the shape of the motion; its size is always the largest the limits allow.
    # A (1+1) evolution strategy with the 1/5th success rule: the criterion is not smooth
    # (which limit binds changes along the way), where SLSQP on the raw coefficients jumps
    # far outside the limits and gradient methods stall.
    u, f_u = z0, problem.evaluate(z0)[0]  # u only ever moves to a better, feasible point
    sigma = 0.3
    spread = np.abs(z0).mean() + 1e-12
    for k in range(10 * int(maxiter)):
        cand = u + sigma * spread * rng.normal(size=u.size)
        zc = problem.into_limits(cand, effort, z0)
        fc, slack = problem.evaluate(zc)
        if fc < f_u and np.all(slack >= -1e-9):
            u, f_u = zc, fc
            sigma *= 1.5
        else:
            sigma *= 1.5 ** -0.25
        sigma = float(np.clip(sigma, 1e-3, 2.0))
        if k % 10 == 9:
            nit += 1
            if bar is not None:
                bar.update(1)
    return u, nit


def _scaled_within_limits(problem: _ExcitationProblem, z: Array, margin: float) -> tuple[FourierExcitation, dict[str, Array]]:
    """The excitation of z, scaled down until :func:`limit_usage` is <= 1 everywhere, and its usage."""
    model = problem.model
    best = problem.trajectory(z)
    usage = limit_usage(model, best, margin=margin)
    for _ in range(40):  # a limit exceeded between the optimisation samples: scale the motion down
        if max(float(np.max(u)) for u in usage.values()) <= 1.0:
            break
        z = 0.97 * z
        best = problem.trajectory(z)
        usage = limit_usage(model, best, margin=margin)
    else:
        raise InputError("the excitation could not be brought within the limits")
    return best, usage


def design_excitation(
    model: RobotModel,
    *,
    q0: ArrayLike | None = None,
    frequency: float = 0.2,
    harmonics: int = 4,
    periods: int = 1,
    samples: int = 50,
    margin: float = 0.05,
    seed: int = 0,
    maxiter: int = 40,
    effort_fraction: float = 0.8,
    progress: bool = False,
) -> ExcitationDesign:
    """Optimise a Fourier excitation's coefficients for the condition number.

    Args:
        model: nominal model (base parameters, limits, inverse dynamics for the effort limits).
        q0: rest pose (default: the middle of each joint's range).
        frequency: fundamental [Hz]; harmonics: H; periods: repetitions of the period.
        samples: samples of one period in the criterion; the limits are checked on
            ``samples`` points too and verified afterwards on 400.
        margin: fraction of each position range kept free at both ends.
        seed: the random start (scaled into the limits).
        effort_fraction: the share of each effort limit the nominal model may use (the real
            arm differs from its model: the rest keeps it out of saturation).
        maxiter: optimiser iterations of 10 trials each (0: the random start, scaled into the
            limits).

    Returns:
        :class:`ExcitationDesign`; its ``usage`` is <= 1 everywhere (checked on 4000 samples;
        the design is scaled down if a check between the optimisation samples fails).
    """
    if int(harmonics) != harmonics or harmonics < 2:
        raise InputError(f"harmonics: expected an integer >= 2, got {harmonics!r}")
    H, n = int(harmonics), model.nq
    limits = _limits(model, margin)
    lo, hi, kv, _, tau_max = limits
    q0 = 0.5 * (lo + hi) if q0 is None else np.asarray(q0, dtype=float).reshape(-1)
    if q0.shape != (n,) or np.any(q0 < lo) or np.any(q0 > hi):
        raise InputError(f"q0: expected {n} positions inside the joint ranges (less the margin)")
    problem = _ExcitationProblem(model, limits, q0, frequency, H, periods, samples)
    m = problem.m
    rng = np.random.default_rng(seed)
    z0 = problem.scale_into_limits(rng.normal(size=n * 2 * m) * np.repeat(kv / np.sqrt(H), 2 * m))
    c0 = float(np.exp(problem.evaluate(z0)[0]))
    bar = None
    if progress:
        from .._progress import progress_bar

        bar = progress_bar(maxiter, desc="excitation", unit="it")
    if not (np.isfinite(effort_fraction) and 0 < effort_fraction <= 1):
        raise InputError(f"effort_fraction: expected a share in (0, 1], got {effort_fraction!r}")
    effort = effort_fraction * np.where(np.isfinite(tau_max), tau_max, np.inf)
    z, nit = z0, 0
    if maxiter > 0:
        z, nit = _evolve(problem, z0, maxiter, rng, effort, bar)
    if bar is not None:
        bar.close()
    best, usage = _scaled_within_limits(problem, z, margin)
    return ExcitationDesign(best, observation_condition(model, best, samples=samples, base=problem.bp), c0, usage, nit)
