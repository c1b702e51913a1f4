"""From recorded joint states to the rows of the identification model (Gautier's IDIM data path).

1. Each segment is put on a uniform grid at its median sample period (linear interpolation
   of small jitter).
2. Positions are low-pass filtered forward and backward (zero phase, Butterworth order 4) at a
   cut-off chosen from the excitation bandwidth: twenty times the highest frequency that the
   position spectrum carries (99.5 % of its power), or the given one. (Five times, the usual
   rule, smooths the velocity reversals too much for the Coulomb term Fc sign(qd): on the
   simulated PUMA of :mod:`.example` a 30 N m Coulomb joint then leaves a residual eight times
   the noise and its viscous friction comes out 27 % off; at twenty times, 2 %.)
3. Velocities and accelerations are central differences of the filtered positions.
4. The regressor is evaluated at every filtered sample, then the regressor columns and the
   measured efforts go through the same decimation filter ("parallel filtering", Gautier
   1997): the effort noise above the dynamics' band is removed without distorting the
   relation tau = W pi, and the rows are thinned to two samples per cut-off period (the
   decimation filter's cut-off, 0.8 of the new Nyquist frequency, is 0.8 fc).
5. Rows near a sample whose effort is within 2 % of the joint's effort limit are rejected
   (saturation), as are the filters' edge transients; and a joint's equation is left out where
   its velocity is below 5 % of its peak, where the friction is not Fc sign(qd) + Fv qd
   (sticking, reversals) and the filtered velocity's sign is unreliable.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy import signal as sps

from ..dynamics.regressor import regressor
from ..errors import InputError
from ..model.robot_model import RobotModel
from .data import Recording

__all__ = ["Prepared", "prepare", "bandwidth"]

Array = NDArray[np.float64]


@dataclass(frozen=True)
class Prepared:
    """Decimated identification rows.

    Attributes:
        W: (M, nq, p) standard regressor (:func:`robot_dynamics.regressor` columns), filtered
            in parallel with ``tau``.
        tau: (M, nq) filtered measured efforts.
        q, qd, qdd: (M, nq) the filtered states at the kept rows (for plots and checks).
        t: (M,) [s] time of the kept rows.
        valid: (M, nq) bool, the equations used (False: the joint is near a velocity reversal).
        cutoff: [Hz] position filter cut-off. rate: [Hz] sample rate of the recording.
        decimation: factor r (one row kept every r samples).
        rejected_saturated: number of rows dropped for saturation.
        stribeck: {B: (M, nq)} the Stribeck columns ``sign(qd) exp(-|qd| B)`` of Khalil [7.26]
            for each candidate B [s/rad] asked, filtered and decimated with W.
    """

    W: Array
    tau: Array
    q: Array
    qd: Array
    qdd: Array
    t: Array
    valid: NDArray[np.bool_]
    cutoff: float
    rate: float
    decimation: int
    rejected_saturated: int
    stribeck: dict[float, Array] = field(default_factory=dict)


def bandwidth(q: Array, rate: float, fraction: float = 0.995) -> float:
    """Highest frequency [Hz] below which ``fraction`` of the positions' (detrended) power lies."""
    x = q - q.mean(axis=0)
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x))[:, None], axis=0)) ** 2
    f = np.fft.rfftfreq(len(x), 1.0 / rate)
    total = spec.sum(axis=0)
    out = 0.0
    for j in range(x.shape[1]):
        if total[j] <= 0:
            continue
        c = np.cumsum(spec[:, j]) / total[j]
        out = max(out, float(f[min(np.searchsorted(c, fraction), len(f) - 1)]))
    return out


def _uniform(t: Array, *cols: Array) -> tuple[Array, list[Array], float]:
    period = float(np.median(np.diff(t)))
    n = int(np.floor((t[-1] - t[0]) / period)) + 1
    grid = t[0] + period * np.arange(n)
    return grid, [np.column_stack([np.interp(grid, t, c[:, j]) for j in range(c.shape[1])]) for c in cols], period


def prepare(model: RobotModel, rec: Recording, *, cutoff: float | None = None, friction: bool = True,
            stribeck: Sequence[float] = ()) -> Prepared:
    """The decimated identification rows of ``rec`` (see the module docstring).

    Args:
        cutoff: position filter cut-off [Hz]; default twenty times :func:`bandwidth`.
        friction: include the friction columns of the regressor.
        stribeck: candidate decay constants B [s/rad] of Khalil [7.26]'s static friction
            excess; their columns are prepared beside W (see :func:`identify`'s ``stribeck``).

    Raises:
        InputError: a segment too short to filter, or a cut-off above the Nyquist frequency.
    """
    Ws, taus, qs, qds, qdds, ts, valids = [], [], [], [], [], [], []
    speeds = [float(b) for b in stribeck]
    if any(not (np.isfinite(b) and b > 0) for b in speeds):
        raise InputError(f"stribeck: expected positive decay constants B [s/rad], got {list(stribeck)}")
    extra: dict[float, list[Array]] = {b: [] for b in speeds}
    cut_used, rate_used, r_used, rejected = 0.0, 0.0, 1, 0
    limit = np.where(np.isfinite(model.effort_limit), model.effort_limit, np.inf)
    for s in np.unique(rec.segment):
        sel = rec.segment == s
        if np.count_nonzero(sel) < 50:
            continue
        t, (q, tau), period = _uniform(rec.t[sel], rec.q[sel], rec.tau[sel])
        rate = 1.0 / period
        fc = float(cutoff) if cutoff is not None else 20.0 * bandwidth(q, rate)
        if not np.isfinite(fc) or fc <= 0:
            raise InputError(f"cutoff: expected a positive frequency [Hz], got {fc!r}")
        if fc >= 0.45 * rate:
            if cutoff is not None:
                raise InputError(f"cutoff: {fc:g} Hz is above 0.45 x the sample rate ({rate:g} Hz)")
            fc = 0.45 * rate
        sos = sps.butter(4, fc, fs=rate, output="sos")
        pad = 3 * (2 * len(sos) + 1)
        if len(t) <= 4 * pad:
            continue
        qf = sps.sosfiltfilt(sos, q, axis=0)
        qd = np.gradient(qf, period, axis=0)
        qdd = np.gradient(qd, period, axis=0)
        W = regressor(model, qf, qd, qdd, friction=friction)
        # Parallel decimation: the same zero-phase low-pass on every column of W and on tau, its
        # cut-off 0.8 fs / (2 r) = 0.8 fc below the position filter's, where W is exact.
        r = max(1, int(round(rate / (2.0 * fc))))
        E = {b: np.sign(qd) * np.exp(-np.abs(qd) * b) for b in speeds}
        if r > 1:
            dsos = sps.butter(8, 0.8 * rate / (2.0 * r), fs=rate, output="sos")
            W = sps.sosfiltfilt(dsos, W.reshape(len(t), -1), axis=0).reshape(W.shape)
            tau_f = sps.sosfiltfilt(dsos, tau, axis=0)
            E = {b: sps.sosfiltfilt(dsos, e, axis=0) for b, e in E.items()}
        else:
            tau_f = tau
        keep = np.zeros(len(t), dtype=bool)
        keep[::r] = True
        edge = int(np.ceil(rate / fc))  # one cut-off period of filter transient at each end
        keep[:edge] = keep[-edge:] = False
        sat = np.any(np.abs(tau) >= 0.98 * limit, axis=1)
        if np.any(sat):
            near = np.convolve(sat.astype(float), np.ones(2 * r + 1), mode="same") > 0
            rejected += int(np.count_nonzero(keep & near))
            keep &= ~near
        Ws.append(W[keep])
        taus.append(tau_f[keep])
        qs.append(qf[keep])
        qds.append(qd[keep])
        qdds.append(qdd[keep])
        ts.append(t[keep])
        for b, e in E.items():
            extra[b].append(e[keep])
        # 5 % of the velocity range (its 95th percentile: one spike must not blank a joint out)
        valids.append(np.abs(qd[keep]) >= 0.05 * np.percentile(np.abs(qd), 95, axis=0))
        cut_used, rate_used, r_used = fc, rate, r
    if not Ws or sum(len(x) for x in ts) == 0:
        raise InputError(f"{rec.source}: too short to filter and differentiate (each segment needs "
                         "several periods of its cut-off frequency)")
    return Prepared(np.concatenate(Ws), np.concatenate(taus), np.concatenate(qs), np.concatenate(qds),
                    np.concatenate(qdds), np.concatenate(ts), np.concatenate(valids), cut_used, rate_used, r_used, rejected,
                    {b: np.concatenate(v) for b, v in extra.items()})
