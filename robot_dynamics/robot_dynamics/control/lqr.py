"""Joint-space LQR about a reference: feed-forward by Newton-Euler, feedback from a Riccati equation.

The law is ``u = tau_ff - K (x - x^d)`` with the state ``x = (q, qd)``, ``x^d = (q^d, qd^d)``
and ``tau_ff = rnea(q^d, qd^d, qdd^d)`` (the torque that moves the model along the
reference). Along the reference the error ``dx = x - x^d`` obeys, to first order,
``dx' = A dx + B du`` with (A, B) of :func:`robot_dynamics.linearize` at
``(q^d, qd^d, tau_ff)``; K minimises ``int dx' Q dx + du' R du dt`` (continuous algebraic
Riccati equation), or its sum over the ticks of a controller with a rate (discrete equation
on the zero-order-hold model at the controller's period).

The gain is cached and refreshed about the reference every ``relinearize_period`` seconds
while the reference moves; a tick costs one rnea and a matrix-vector product, a refresh one
linearisation and one Riccati solve (on the PUMA 560 with one BLAS thread: about 1-2 ms for the
discrete design, against about 30 us for a tick; at the default 0.05 s period and 1 kHz that
is 20-40 us a tick on average, paid in one tick of every 50). Along the README's moves a
refresh every 0.02 s or every 0.1 s tracks alike to 1 %; a gain kept from the start point
(``inf``) raises the iiwa14's largest error by 70 %.
"""

from __future__ import annotations

import logging
import math
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import real_array
from ..dynamics import crba, linearize
from ..errors import InputError, RobotDynamicsError
from ..model.robot_model import RobotModel
from .base import DEFAULT_OMEGA, ControllerBase, Reference, Status, as_joint_reference, gain_vector

__all__ = ["LQR", "lqr_gain", "MIN_XI"]

Array = NDArray[np.float64]

logger = logging.getLogger("robot_dynamics.control")
# `import launch` (ROS 2) installs a logger class that does not propagate; a library logger must
# reach the application's handlers whatever was imported first.
logger.propagate = True

#: Smallest damping ratio of the bandwidth design: its velocity weight (4 xi^2 - 2) omega^2 >= 0.
MIN_XI = 1.0 / math.sqrt(2.0)


def lqr_gain(A: ArrayLike, B: ArrayLike, Q: ArrayLike, R: ArrayLike, *, discrete: bool = False) -> Array:
    """The optimal state feedback ``u = -K x`` of the linear-quadratic regulator.

    Continuous (``dx/dt = A x + B u``, cost ``int x'Qx + u'Ru dt``): ``K = R^-1 B' P`` with P
    the stabilising solution of ``A'P + PA - PBR^-1B'P + Q = 0``. Discrete
    (``x[k+1] = A x[k] + B u[k]``, cost ``sum x'Qx + u'Ru``): ``K = (R + B'PB)^-1 B'PA`` with
    ``P = A'PA - A'PB (R + B'PB)^-1 B'PA + Q``. Both by scipy.linalg's Schur-method solvers.

    Args:
        A: state matrix (n, n); B: input matrix (n, m).
        Q: state weight (n, n), symmetric positive semi-definite; R: input weight (m, m),
            symmetric positive definite.
        discrete: solve the discrete-time equation.

    Returns:
        K, shape (m, n).

    Raises:
        InputError: wrong shapes, or no stabilising solution ((A, B) not stabilisable, or
            (A, Q) with an unobservable mode on the stability boundary).
    """
    A, B, Q, R = (np.asarray(x, dtype=float) for x in (A, B, Q, R))
    n = A.shape[0] if A.ndim == 2 else -1
    m = B.shape[1] if B.ndim == 2 else -1
    if A.shape != (n, n) or B.shape != (n, m) or Q.shape != (n, n) or R.shape != (m, m):
        raise InputError(f"lqr_gain: expected A (n, n), B (n, m), Q (n, n), R (m, m); got {A.shape}, {B.shape}, "
                         f"{Q.shape}, {R.shape}")
    import scipy.linalg  # here, as everywhere in the package: 0.2 s of every node's start-up otherwise

    try:
        if discrete:
            P = scipy.linalg.solve_discrete_are(A, B, Q, R)
            P = 0.5 * (P + P.T)
            K = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
        else:
            P = scipy.linalg.solve_continuous_are(A, B, Q, R)
            P = 0.5 * (P + P.T)
            K = np.linalg.solve(R, B.T @ P)
    except (np.linalg.LinAlgError, ValueError) as exc:
        kind = "discrete" if discrete else "continuous"
        raise InputError(f"lqr_gain: the {kind} Riccati equation has no stabilising solution ({exc})") from None
    if not np.all(np.isfinite(K)):
        raise InputError("lqr_gain: the Riccati solution is not finite")
    return np.ascontiguousarray(K)


def _weight(value: ArrayLike, n: int, what: str, *, definite: bool) -> Array:
    """A weight matrix from a diagonal (n,) or a full (n, n) symmetric matrix."""
    arr = real_array(value, what, f"{n} diagonal values or an ({n}, {n}) matrix")
    if arr.shape == (n,):
        arr = np.diag(arr)
    if arr.shape != (n, n):
        raise InputError(f"{what}: expected {n} diagonal values or an ({n}, {n}) matrix, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{what}: weights must be finite")
    scale = max(float(np.max(np.abs(arr))), 1e-300)
    if not np.allclose(arr, arr.T, rtol=0.0, atol=1e-12 * scale):
        raise InputError(f"{what}: the weight matrix must be symmetric")
    arr = 0.5 * (arr + arr.T)
    low = float(np.min(np.linalg.eigvalsh(arr)))
    if definite and low <= 1e-12 * scale:
        raise InputError(f"{what}: the weight matrix must be positive definite (smallest eigenvalue {low:.3g})")
    if not definite and low < -1e-12 * scale:
        raise InputError(f"{what}: the weight matrix must be positive semi-definite (smallest eigenvalue {low:.3g})")
    return arr


class LQR(ControllerBase):
    """Linear-quadratic regulator in the joint space, about a moving reference.

    ``u = tau_ff - K (x - x^d)``, ``tau_ff = rnea(q^d, qd^d, qdd^d)`` (the controller's model,
    friction at the desired velocity when ``friction``), K the LQR gain of the linearisation
    about ``(q^d, qd^d, tau_ff)`` (:func:`robot_dynamics.linearize`, gravity, Coriolis and
    viscous friction slopes included; Coulomb friction has no slope): continuous Riccati
    equation, or the discrete one on the zero-order-hold model at ``1 / rate`` when the
    controller runs at a ``rate``.

    Weights. Given ``Q`` (state (q, qd), 2 nq) and ``R`` (torques, nq) are used as they are.
    The bandwidth design (the defaults) weighs the commanded acceleration ``M^-1 u`` instead
    of the torque: ``R = M(q^d)^-2`` and ``Q = diag(omega^4, (4 xi^2 - 2) omega^2)`` per joint.
    For a robot without gravity, friction or velocity (``A = [[0, 1], [0, 0]]``,
    ``B = [[0], [M^-1]]``) this gives ``K = M [omega^2, 2 xi omega]``: every joint's error
    with the poles of ``s^2 + 2 xi omega s + omega^2``, computed torque's design (Khalil
    [9.26]) for the linearised inertia; gravity and velocity terms then shift the gain where
    they matter. ``xi >= 1/sqrt(2)`` keeps the velocity weight non-negative.

    Re-linearisation. The gain is computed at the first tick and refreshed about the
    reference at most every ``relinearize_period`` seconds [s] of controller time, and only
    when the reference has moved since (a fixed goal keeps its gain). 0 refreshes at every
    tick where the reference moved; ``inf`` never after the first.

    Args:
        model: the controller's model of the robot.
        omega: bandwidth of the design [rad/s], scalar or (nq,), > 0 (default :data:`~robot_dynamics.control.base.DEFAULT_OMEGA`, 20).
        xi: damping ratio of the design, scalar or (nq,), >= 1/sqrt(2) (default 1).
        Q: state weight, (2 nq,) diagonal or (2 nq, 2 nq) symmetric positive semi-definite,
            positions first [1/rad^2 ...]; None = the bandwidth design.
        R: torque weight, (nq,) diagonal or (nq, nq) symmetric positive definite
            [1/(N m)^2 ...]; None = ``M(q^d)^-2``.
        rate: the controller's rate [Hz] (discrete design at ``1 / rate``); None = continuous.
        relinearize_period: time between gain refreshes [s], >= 0 (default 0.05).
        friction: include joint friction in the feed-forward and the linearisation.
        effort_limit, actuator_limit, fault_action: see :class:`ControllerBase`.

    Attributes:
        K: the current gain, (nq, 2 nq) [N m/rad, N m s/rad], None before the first tick.
        A, B: the linearisation it came from (discrete when ``rate`` is set).
        refreshes: how many times the gain was computed.
    """

    name = "lqr"

    def __init__(
        self,
        model: RobotModel,
        *,
        omega: ArrayLike = DEFAULT_OMEGA,
        xi: ArrayLike = 1.0,
        Q: ArrayLike | None = None,
        R: ArrayLike | None = None,
        rate: float | None = None,
        relinearize_period: float = 0.05,
        friction: bool = True,
        effort_limit: ArrayLike | None = None,
        actuator_limit: ArrayLike | None = None,
        fault_action: str = "hold",
    ):
        super().__init__(model, effort_limit=effort_limit, actuator_limit=actuator_limit, fault_action=fault_action)
        n, names = model.nq, model.joint_names
        self.omega = gain_vector(omega, n, "omega", names, allow_zero=False)
        self.xi = gain_vector(xi, n, "xi", names, allow_zero=False)
        if np.any(self.xi < MIN_XI - 1e-12):
            raise InputError(f"xi: the LQR bandwidth design needs xi >= 1/sqrt(2) = {MIN_XI:.4f} (its velocity weight "
                             f"(4 xi^2 - 2) omega^2 must be >= 0), got {self.xi.tolist()}")
        if Q is None:
            self.Q = np.diag(np.concatenate((self.omega**4, np.maximum(4.0 * self.xi**2 - 2.0, 0.0) * self.omega**2)))
        else:
            self.Q = _weight(Q, 2 * n, "Q", definite=False)
        self.R = None if R is None else _weight(R, n, "R", definite=True)
        if rate is None:
            self.rate: float | None = None
        else:
            r = real_array(rate, "rate", "a rate [Hz]")
            if r.ndim != 0 or not (np.isfinite(r) and 0.0 < float(r) <= 1e7):
                raise InputError(f"rate: expected the controller's rate in (0, 1e7] Hz or None (continuous), got {str(rate)[:40]}")
            self.rate = float(r)
        p = real_array(relinearize_period, "relinearize_period", "a period [s]")
        if p.ndim != 0 or np.isnan(p) or float(p) < 0.0:
            raise InputError(f"relinearize_period: expected a period >= 0 [s] (inf: never), got {str(relinearize_period)[:40]}")
        self.relinearize_period = float(p)
        if not isinstance(friction, (bool, np.bool_)):
            raise InputError(f"friction: expected True or False, got {friction!r}")
        self.friction = bool(friction)
        self.K: Array | None = None
        self.A: Array | None = None
        self.B: Array | None = None
        self.refreshes = 0
        self._t_gain = -math.inf
        self._point: tuple[Array, Array, Array] | None = None
        self._last_failure = ""

    def reset(self) -> None:
        """Forget the gain and its linearisation point with the base state."""
        super().reset()
        self.K = self.A = self.B = None
        self._t_gain = -math.inf
        self._point = None
        self._last_failure = ""

    def gain_at(self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike) -> Array:
        """The LQR gain K (nq, 2 nq) about the reference (q^d, qd^d, qdd^d), each (nq,).

        Raises:
            InputError: a reference of the wrong shape or not finite; no Riccati solution.
        """
        ref = as_joint_reference((q, qd, qdd), self.model.nq)
        tau_ff = self._rnea(ref.q, ref.qd, ref.qdd, friction=self.friction)
        return self._design(ref, tau_ff)[0]

    def _design(self, ref: Reference, tau_ff: Array) -> tuple[Array, Array, Array]:
        dt = None if self.rate is None else 1.0 / self.rate
        A, B = linearize(self.model, ref.q, ref.qd, tau_ff, dt, friction=self.friction)
        if self.R is None:
            Minv = np.linalg.inv(crba(self.model, ref.q))
            R = Minv @ Minv  # the commanded acceleration's weight: (M^-1 u)'(M^-1 u), M symmetric
            R = 0.5 * (R + R.T)
        else:
            R = self.R
        return lqr_gain(A, B, self.Q, R, discrete=self.rate is not None), A, B

    def _moved(self, ref: Reference) -> bool:
        p = self._point
        return p is None or not (np.array_equal(p[0], ref.q) and np.array_equal(p[1], ref.qd)
                                 and np.array_equal(p[2], ref.qdd))

    def _law(self, t: float, dt: float, q: Array, qd: Array, reference: Reference) -> tuple[Array, Status, str]:
        tau_ff = self._rnea(reference.q, reference.qd, reference.qdd, friction=self.friction)
        due = self.K is None or abs(t - self._t_gain) >= self.relinearize_period
        if due and self._moved(reference):
            try:
                self.K, self.A, self.B = self._design(reference, tau_ff)
                self.refreshes += 1
                self._last_failure = ""
            except RobotDynamicsError as exc:
                if self.K is None:
                    raise
                if str(exc) != self._last_failure:  # keep the last gain; say so once per reason
                    logger.warning("lqr: gain not refreshed at t = %.4g s, keeping the last one: %s", t, exc)
                    self._last_failure = str(exc)
            self._t_gain = t
            self._point = (reference.q.copy(), reference.qd.copy(), reference.qdd.copy())
        n = self.model.nq
        K = self.K
        assert K is not None
        tau = tau_ff - K[:, :n] @ (q - reference.q) - K[:, n:] @ (qd - reference.qd)
        return tau, Status.OK, ""
