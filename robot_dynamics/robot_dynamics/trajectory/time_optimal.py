"""The time-optimal timing of a given path under velocity, acceleration and torque limits.

TOPP-RA (H. Pham and Q.-C. Pham, "A New Approach to Time-Optimal Path Parameterization Based on
Reachability Analysis", IEEE Trans. Robotics 34(3), 2018). A path q(s), s in [0, 1], is timed by
s(t); with x = sdot^2 and u = sddot the joint torques are linear in (u, x):

    tau = a(s) u + b(s) x + c(s),   a = M(q) q',   b = M(q) q'' + C(q, q') q',   c = g(q) + Gamma_f

(Khalil's inverse dynamics [7.5] along the path; q' = dq/ds), the accelerations are
qdd = q' u + q'' x and the velocities qd = q' sdot. The engine (``rd_reachability``) computes the
controllable sets backward and the greedy timing forward, each row holding at both ends of every
grid segment. The coefficients come from the batched inverse dynamics, so drive trains (rotor
inertia, the structure matrix) and friction are in them: the motors' torques xi = A^-1 tau are
rows like the joints'. Viscous friction Gamma_f(q' sdot) is not linear in x; it is taken at the
previous solution's speed until the timing settles.

Between grid points the rows' coefficients change with s, so a timing that meets every limit at
the grid points may exceed one in between (toppra's result does, by several percent). The engine
(``rd_time_optimal``) checks every segment with the full model: exactly at its ends, inside from
the cubic through the coefficients at the grid points around it on the same piece of the path
(the spline's knots are grid points), with the friction at each point's own velocity, at its
quarter points, where the speed sqrt(x) bends most, approaching rest and on both sides of a
joint's turn; the velocities by the parabola through the quarter points' squared speeds. The
solve already holds each row's end values plus its midpoint's distance from their chord, and the
velocity bound at the quarter points, so that one solve usually passes. A row exceeded on a
segment gets a margin of the model's error at the segment's ends and the timing is solved again,
until nothing is exceeded; the tests resample the result at 1 kHz with the full inverse dynamics.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError, PathInfeasibleError
from .base import Trajectory, as_limits

if TYPE_CHECKING:
    from ..model import RobotModel

Array = NDArray[np.float64]
PathFunction = Callable[[Array, int], Array]

__all__ = ["TimeOptimalTrajectory", "path_through", "time_optimal"]

#: A limit counts as met up to this relative excess.
CHECK_TOLERANCE = 1e-9
#: The most solves of one timing (the friction's secant and the margins take a few).
MAX_SOLVES = 40


def path_through(waypoints: ArrayLike) -> PathFunction:
    """The path through ``waypoints`` (K, n), K >= 2: a C2 cubic spline (scipy's CubicSpline's,
    not-a-knot ends) on the chord-length parameter s in [0, 1] (s_k proportional to the summed
    distances |q_k - q_(k-1)|). Two waypoints give the straight line, three a parabola. The
    spline's coefficients come from the engine (rd_spline_through: scipy's equations, the same
    polynomials to round-off), held as a scipy PPoly.

    Returns:
        ``path(s, order)``: q (order 0), dq/ds (1) or d2q/ds2 (2) at s (N,), each (N, n).
    """
    from scipy.interpolate import PPoly

    from ..engine import engine

    q = np.ascontiguousarray(waypoints, dtype=float)
    if q.ndim != 2 or q.shape[0] < 2 or q.shape[1] < 1:
        raise InputError(f"waypoints: expected an array (K, n) with K >= 2, got shape {q.shape}")
    if q.shape[0] == 2:  # not-a-knot needs 3 points; two points are the straight line
        status = -2 if not np.all(np.isfinite(q)) else (0 if np.array_equal(q[0], q[1]) else -1)
    else:
        s, c = np.empty(q.shape[0]), np.empty((4, q.shape[0] - 1, q.shape[1]))
        status = engine().spline_through(q, s, c)
    if status == -2:
        raise InputError("waypoints: contain NaN or infinite values")
    if status >= 0:
        raise InputError(f"waypoints: {status} and {status + 1} are equal; a path needs distinct consecutive waypoints")
    if q.shape[0] == 2:
        return _Line(q[0], q[1])
    return PPoly.construct_fast(c, s)  # type: ignore[no-any-return]


class _Line:
    """q(s) = q0 + s (q1 - q0)."""

    def __init__(self, q0: Array, q1: Array):
        self.q0, self.dq = q0, q1 - q0

    def __call__(self, s: Array, order: int = 0) -> Array:
        s = np.asarray(s, dtype=float).reshape(-1, 1)
        if order == 0:
            return self.q0 + s * self.dq
        return np.broadcast_to(self.dq if order == 1 else np.zeros_like(self.dq), (s.shape[0], self.dq.size)).copy()


def _as_path(path: Any) -> PathFunction:
    """The callable path (waypoints joined by :func:`path_through`); its values are checked where
    it is first evaluated, on the grid (:func:`_evaluate`)."""
    if callable(path):
        return path  # type: ignore[no-any-return]
    return path_through(path)


def _knots(path: Any) -> Array:
    """The interior points (in (0, 1)) where a piecewise polynomial path's derivatives jump: a
    scipy PPoly's breakpoints (CubicSpline), toppra's SplineInterpolator's waypoints; none known
    for another callable (taken as smooth)."""
    from scipy.interpolate import PPoly

    points = path.x if isinstance(path, PPoly) else getattr(path, "ss_waypoints", None)
    if points is None:
        return np.zeros(0)
    points = np.asarray(points, dtype=float).reshape(-1)
    return points[(points > 0.0) & (points < 1.0)]


def _grid(count: int, knots: Array) -> tuple[Array, Array]:
    """``count`` evenly spaced points on [0, 1] with the path's knots among them: a knot's nearest
    point moved onto it within a third of the step (one knot a point), else the knot added (the
    engine's rd_path_grid). Returns (s, knot flags)."""
    from ..engine import engine

    knots = np.ascontiguousarray(knots, dtype=float)
    s, flags = np.empty(count + knots.size), np.empty(count + knots.size)
    size = engine().path_grid(count, knots, s, flags)
    if size < 0:
        knots = np.unique(knots)  # a callable's waypoints as given: sorted, each once
        size = engine().path_grid(count, knots, s, flags)
    return s[:size], flags[:size]


def _evaluate(path: PathFunction, s: Array, nq: int) -> tuple[Array, Array, Array]:
    """q, q' and q'' (N, nq) of the path at s (N,); InputError for a wrong shape or a value that
    is not finite. A scipy PPoly (CubicSpline) spanning [0, 1] is evaluated by the engine, the
    same doubles as its own evaluation; any other callable by its calls."""
    pieces = _ppoly_pieces(path, nq)
    if pieces is not None:
        from ..engine import engine

        out = np.empty((3, s.size, nq))
        bad = engine().ppoly_derivatives(*pieces, s, out[0], out[1], out[2])
        if bad >= 0:
            raise InputError(f"path: derivative {bad} is not finite on [0, 1]")
        return out[0], out[1], out[2]
    out = []
    for order in (0, 1, 2):
        v = np.asarray(path(s, order), dtype=float)
        if v.shape != (s.size, nq):
            raise InputError(f"path: expected path(s, order) of shape (len(s), {nq}) for this robot, got {v.shape}")
        if not np.isfinite(v).all():
            raise InputError(f"path: derivative {order} is not finite on [0, 1]")
        out.append(np.ascontiguousarray(v))
    return out[0], out[1], out[2]


def _ppoly_pieces(path: Any, nq: int) -> tuple[Array, Array] | None:
    """A scipy PPoly's breakpoints (K,) and coefficients (order, K - 1, nq), C-contiguous float64,
    where they give path(s, order) for s in [0, 1] as (N, nq) (real, its axis 0, its breakpoints
    spanning [0, 1], degree below the engine's RD_PPOLY_MAX_ORDER 32); else None."""
    from scipy.interpolate import PPoly

    if not isinstance(path, PPoly) or getattr(path, "axis", None) != 0:
        return None
    x, c = path.x, path.c
    if (c.dtype != np.float64 or x.dtype != np.float64 or c.ndim != 3 or c.shape[2] != nq or c.shape[0] > 32
            or x.ndim != 1 or x.size != c.shape[1] + 1 or not x[0] <= 0.0 or not x[-1] >= 1.0):
        return None
    return np.ascontiguousarray(x), np.ascontiguousarray(c)


class _Rows:
    """The limits of a robot as rows lo <= value <= hi of (tau, qdd): the joints' torques, the
    motors' (xi = A^-1 tau) and the accelerations, each kept where its limit is finite."""

    def __init__(self, model: RobotModel, torque: Array, motor: Array | None, acceleration: Array):
        self._model = model
        nq = model.nq
        self.tau_cols = np.flatnonzero(np.isfinite(torque))
        self.motor_map = None
        self.motor_keep = np.zeros(0, dtype=int)
        if motor is not None and np.any(np.isfinite(motor)):
            A_inv = None if model.drivetrain is None else np.asarray(model.drivetrain.A_inv)
            self.motor_keep = np.flatnonzero(np.isfinite(motor))
            self.motor_map = (np.eye(nq) if A_inv is None else A_inv)[self.motor_keep]  # (k, nq): rows of A^-1
        self.acc_cols = np.flatnonzero(np.isfinite(acceleration))
        # the rows are the joints' torques, in order (no motor or acceleration row): values() is tau
        self.joints_only = self.motor_map is None and self.acc_cols.size == 0 and self.tau_cols.size == nq
        if self.joints_only:
            self.limit, self.T = torque.copy(), np.eye(nq)
        else:
            self.limit = np.concatenate((torque[self.tau_cols], motor[self.motor_keep] if motor is not None else [],
                                         acceleration[self.acc_cols]))
            eye = np.eye(nq)
            self.T = np.ascontiguousarray(np.vstack([eye[self.tau_cols],
                                                     self.motor_map if self.motor_map is not None else eye[:0],
                                                     np.zeros((self.acc_cols.size, nq))]))
        self.m = self.limit.size

    @property
    def labels(self) -> list[tuple[str, str, str, str]]:
        """(kind, name, what, unit) of each row."""
        names = list(self._model.joint_names)
        motors = names if self._model.drivetrain is None else list(self._model.drivetrain.inputs)
        return ([("joint", names[j], "torque", "N m") for j in self.tau_cols]
                + [("motor", motors[j], "torque", "N m") for j in self.motor_keep]
                + [("joint", names[j], "acceleration", "rad/s^2") for j in self.acc_cols])

    def values(self, tau: Array, qdd: Array | None) -> Array:
        """The rows' values (N, m) from joint torques and accelerations (N, nq) (None: no
        acceleration row, the rows are the joints' torques)."""
        if self.joints_only:
            return tau
        parts = [tau[:, self.tau_cols]]
        if self.motor_map is not None:
            parts.append(tau @ self.motor_map.T)
        if qdd is not None:
            parts.append(qdd[:, self.acc_cols])
        return np.ascontiguousarray(np.concatenate(parts, axis=1))

    def describe(self, k: int, value: float) -> tuple[str, str]:
        """(name, 'the motor 'x' needs 12.3 N m') of row k at a value."""
        kind, name, what, unit = self.labels[k]
        return name, f"{kind} '{name}' needs {abs(value):.6g} {unit} of {what}, its limit is {self.limit[k]:.6g} {unit}"


class _Dynamics:
    """Inverse dynamics along the path (the batched engine), with the options of the timing."""

    def __init__(self, model: RobotModel, gravity: ArrayLike | None, friction: bool):
        from ..dynamics import rnea
        from ..dynamics._common import joint_friction

        self.model, self.friction = model, friction
        self.gravity = np.asarray(model.gravity if gravity is None else gravity, dtype=float)
        self._rnea, self._friction = rnea, joint_friction
        # viscous friction and Stribeck's decay depend on the speed; Coulomb's sign alone does not
        stribeck = friction and model.static_friction is not None and bool((model.static_friction != model.coulomb).any())
        self.speed_dependent = friction and (bool((model.viscous != 0.0).any()) or stribeck)
        self.has_friction = friction and (self.speed_dependent or bool((model.coulomb != 0.0).any()))

    def coefficients(self, q: Array, dq: Array, ddq: Array) -> tuple[Array, Array, Array]:
        """a = M q', b = M q'' + C(q, q') q', g(q): each (N, nq), the engine's rd_path_coefficients
        (inverse dynamics at (q, 0, q') and (q, q', q'') without gravity, at (q, 0, 0) with it).
        q, dq, ddq: finite, C-contiguous (N, nq) (as :func:`_evaluate` gives them)."""
        from ..engine import check_status, engine

        out = np.empty((3,) + q.shape)
        status = engine().path_coefficients(self.model.engine_model, q, dq, ddq, self.gravity, out[0], out[1], out[2])
        check_status(self.model, status, "time_optimal's inverse dynamics")
        return out[0], out[1], out[2]

    def static(self, g: Array, dq: Array) -> Array:
        """c = g + Gamma_f(0+ q') (N, nq): the static torques, with the friction of motion starting along q'."""
        if not self.has_friction:
            return g
        return g + self._friction(self.model, dq * 1e-300)

    def torques(self, q: Array, qd: Array, qdd: Array) -> Array:
        return self._rnea(self.model, q, qd, qdd, self.gravity, friction=self.friction)


class TimeOptimalTrajectory(Trajectory):
    """A path timed by :func:`time_optimal`: s(t) with constant sddot on each grid segment.

    Attributes:
        n: joints; duration: total time [s]; grid: the path parameter's grid (G,);
        sd_grid: sdot at the grid (G,) [1/s]; u_grid: sddot on each segment (G - 1,) [1/s^2];
        controllable: sdot of the controllable sets' upper bounds (G,) [1/s];
        torque_limit, velocity_limit, acceleration_limit (nq,) and motor_torque_limit ((nq,) or
        None): the limits used (inf: none); compute_time: the timing's wall time [s];
        iterations: the solves it took (the friction's fixed point and the tightening).
    """

    torque_limit: Array
    motor_torque_limit: Array | None
    velocity_limit: Array
    acceleration_limit: Array
    compute_time: float
    iterations: int

    def __init__(self, path: PathFunction, grid: Array, x: Array, u: Array, t: Array, dynamics: _Dynamics,
                 **info: Any):
        """t: the times of the grid points [s] (the engine's, t_0 = 0, a segment 2 d / (sdot_i + sdot_(i+1)))."""
        self.path, self.grid, self.u_grid = path, grid, u
        self.sd_grid = np.sqrt(np.maximum(x, 0.0))
        self._t = t
        self.n = dynamics.model.nq
        self.duration = float(self._t[-1])
        self._dynamics = dynamics
        self.rows: _Rows = info.pop("rows")
        self._point_rows = info.pop("point_rows")
        self._K_hi: Array = info.pop("K_hi")
        for name, value in info.items():
            setattr(self, name, value)

    @property
    def controllable(self) -> Array:
        """sdot of the controllable sets' upper bounds (G,) [1/s]."""
        return np.sqrt(np.maximum(self._K_hi, 0.0))

    @property
    def grid_times(self) -> Array:
        """The times [s] at which the timing passes the grid points, (G,)."""
        return self._t.copy()

    def path_parameter(self, t: ArrayLike) -> tuple[Array, Array, Array]:
        """(s, sdot, sddot) at times t [s] (N,) clipped to [0, duration], each (N,)."""
        t = np.clip(np.asarray(t, dtype=float).reshape(-1), 0.0, self.duration)
        i = np.clip(np.searchsorted(self._t, t, side="right") - 1, 0, self.grid.size - 2)
        tau = t - self._t[i]
        sd0, u = self.sd_grid[i], self.u_grid[i]
        s = np.minimum(self.grid[i] + sd0 * tau + 0.5 * u * tau * tau, self.grid[i + 1])
        return s, np.maximum(sd0 + u * tau, 0.0), u

    def _evaluate(self, t: Array) -> tuple[Array, Array, Array]:
        s, sd, sdd = self.path_parameter(t)
        q, dq, ddq = _evaluate(self.path, s, self.n)
        return q, dq * sd[:, None], dq * sdd[:, None] + ddq * (sd * sd)[:, None]

    def torques(self, t: ArrayLike) -> Array:
        """Joint torques [N m or N] at times t (N,), (N, nq): inverse dynamics with the timing's gravity and friction."""
        q, qd, qdd = self.sample(np.asarray(t, dtype=float).reshape(-1))
        return self._dynamics.torques(q, qd, qdd)

    def motor_torques(self, t: ArrayLike) -> Array:
        """The motors' torques xi = A^-1 tau [N m] at times t (N,), (N, nq) in the drive train's inputs order."""
        tau = self.torques(t)
        dt = self._dynamics.model.drivetrain
        return tau if dt is None else tau @ np.asarray(dt.A_inv).T

    @property
    def max_velocity(self) -> Array:
        """sdot of the maximum-velocity curve (G,) [1/s]: the largest speed each grid point allows
        under its own limits (some sddot keeps every row), before reachability."""
        a, b, c, (dq, velocity) = self._point_rows
        hi = np.tile(self.rows.limit, (self.grid.size, 1))
        return np.sqrt(_largest_x(a, b, c, -hi, hi, _velocity_bound(dq, velocity)))

    def __repr__(self) -> str:
        return f"TimeOptimalTrajectory(n={self.n}, duration={self.duration:.6g} s, grid={self.grid.size})"


def _largest_x(a: Array, b: Array, c: Array, lo: Array, hi: Array, xmax: Array) -> Array:
    """max x >= 0 such that some u has lo <= a u + b x + c <= hi at each point (rows (G, m)):
    the projection of the (u, x) polygon on x (Fourier-Motzkin over the pairs of rows)."""
    al = np.concatenate((a, -a), axis=1)
    be = np.concatenate((b, -b), axis=1)
    ga = np.concatenate((hi - c, c - lo), axis=1)
    keep = np.isfinite(ga)
    al, be, ga = np.where(keep, al, 0.0), np.where(keep, be, 0.0), np.where(keep, ga, 1.0)
    coef = np.where(al == 0.0, be, 0.0)[:, :, None]
    rhs = np.where(al == 0.0, ga, 1.0)[:, :, None]
    up, dn = al[:, :, None] > 0.0, al[:, None, :] < 0.0
    pair = up & dn  # p with alpha_p > 0, q with alpha_q < 0
    pc = al[:, :, None] * be[:, None, :] - al[:, None, :] * be[:, :, None]
    pr = al[:, :, None] * ga[:, None, :] - al[:, None, :] * ga[:, :, None]
    coef = np.concatenate((coef.reshape(len(a), -1), np.where(pair, pc, 0.0).reshape(len(a), -1)), axis=1)
    rhs = np.concatenate((rhs.reshape(len(a), -1), np.where(pair, pr, 1.0).reshape(len(a), -1)), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(coef > 0.0, rhs / coef, np.inf)
    return np.clip(np.min(bound, axis=1, initial=np.inf), 0.0, xmax)


def _model_limits(model: RobotModel, velocity_limit: Any, acceleration_limit: Any, torque_limit: Any,
                  motor_torque_limit: Any) -> tuple[Array, Array, Array, Array | None]:
    nq = model.nq

    def limit(x: Any, default: Callable[[], Array], what: str) -> Array:
        v = as_limits(x, nq, what)
        return default() if v is None else v

    velocity = limit(velocity_limit, lambda: np.where(model.velocity_limit > 0, model.velocity_limit, np.inf),
                     "velocity_limit")
    acceleration = limit(acceleration_limit, lambda: np.full(nq, np.inf), "acceleration_limit")
    torque = limit(torque_limit, lambda: np.where(model.effort_limit > 0, model.effort_limit, np.inf), "torque_limit")
    motor = as_limits(motor_torque_limit, nq, "motor_torque_limit")
    return velocity, acceleration, torque, motor


def _velocity_bound(dq: Array, velocity: Array) -> Array:
    """x <= min_j (v_j / |q'_j|)^2 at each point (N,)."""
    with np.errstate(divide="ignore"):
        r = np.where(np.isfinite(velocity), velocity / np.abs(dq), np.inf)
    return np.min(r, axis=1) ** 2


def _static_check(rows: _Rows, grid: Array, c: Array) -> None:
    """PathInfeasibleError at the first grid point whose static torques (gravity, and the friction
    of starting along the path) exceed a limit: no timing can hold such a point."""
    over = np.abs(c) > rows.limit * (1.0 + CHECK_TOLERANCE)
    if over.any():
        i, k = np.argwhere(over)[0]
        name, what = rows.describe(int(k), float(c[i, k]))
        raise PathInfeasibleError(
            f"path infeasible at s = {grid[i]:.6g}: the {what} at rest (gravity and friction); "
            "no timing can follow it", s=float(grid[i]), joint=name, torque=float(c[i, k]), limit=float(rows.limit[k]))


def _solve(model: RobotModel, dyn: _Dynamics, rows: _Rows, grid: Array, coefficients: tuple[Array, ...],
           velocity: Array) -> tuple[Array, Array, Array, Array, int]:
    """The engine's rd_time_optimal: reachability, the friction's secant, the check of every segment
    with the full model and the margins, until nothing is exceeded. Returns x, u, K_hi, the times of
    the grid points and the solves (negative: -1 - the point from which the path cannot be followed,
    its controllable set empty or the timing at rest there and at the next)."""
    from ..engine import engine

    a, b, g, dq, knot = coefficients
    n = grid.size
    K_lo, K_hi, x, u, t = np.empty(n), np.empty(n), np.zeros(n), np.zeros(n - 1), np.empty(n)
    status, failed, solves = engine().time_optimal(
        model.engine_model if dyn.has_friction else None, grid, a, b, g, dq, knot, rows.T, rows.limit, velocity,
        int(dyn.speed_dependent), MAX_SOLVES, CHECK_TOLERANCE, x, u, K_lo, K_hi, t)
    if failed >= 0:
        return x, u, K_hi, t, -1 - failed
    if status != 0:
        raise InputError(f"time_optimal: the timing kept exceeding a limit between grid points after {solves} "
                         "solves; try more grid_points")
    return x, u, K_hi, t, solves


def time_optimal(
    model: RobotModel,
    path: ArrayLike | PathFunction,
    *,
    velocity_limit: ArrayLike | None = None,
    acceleration_limit: ArrayLike | None = None,
    torque_limit: ArrayLike | None = None,
    motor_torque_limit: ArrayLike | None = None,
    grid_points: int = 1001,
    gravity: ArrayLike | None = None,
    friction: bool = True,
) -> TimeOptimalTrajectory:
    """The fastest timing of ``path`` from rest to rest within the limits (TOPP-RA).

    Args:
        model: the robot (its drive train, rotor inertia and friction are in the torques).
        path: waypoints (K, nq), joined by :func:`path_through`, or a callable ``path(s, order)``
            giving q, dq/ds or d2q/ds2 (order 0, 1, 2) at s (N,) in [0, 1] as (N, nq): scipy's
            CubicSpline and toppra's interpolators are such. A task-space motion: its joint path
            from :func:`task_space_to_joint` (``report.q`` as waypoints).
        velocity_limit: [rad/s or m/s], a scalar or (nq,); None: the model's velocity limits.
        acceleration_limit: [rad/s^2 or m/s^2], a scalar or (nq,); None: none.
        torque_limit: joint torques [N m or N], a scalar or (nq,); None: the model's effort limits
            (inf: none).
        motor_torque_limit: the motors' torques xi = A^-1 tau [N m] (the drive train's inputs
            order; a robot without drive train: the joints'), (nq,); None: none.
        grid_points: points of the evenly spaced grid of s where the reachability is computed
            (>= 2); a spline path's knots are moved onto the grid or added to it.
        gravity: (3,) [m/s^2] in base axes; None: the model's.
        friction: include the joints' friction (Khalil [7.26]) in the torques.

    Returns:
        A :class:`TimeOptimalTrajectory`: sample(t) -> (q, qd, qdd) on the path, at rest at both
        ends; every limit holds at the grid points and between them to 1e-8 relative (the
        engine checks every segment to 1e-9 from interpolated coefficients; the tests resample
        at 1 kHz with the full inverse dynamics).

    Raises:
        PathInfeasibleError: a point of the path needs more than a limit at rest (it names s,
            the joint and the torque), or the path cannot be followed to its end.
        InputError: a malformed path or limit.
    """
    started = time.perf_counter()
    if isinstance(grid_points, bool) or not isinstance(grid_points, (int, np.integer)) or grid_points < 2:
        raise InputError(f"grid_points: expected an integer >= 2, got {grid_points!r}")
    fn = _as_path(path)
    velocity, acceleration, torque, motor = _model_limits(model, velocity_limit, acceleration_limit, torque_limit,
                                                          motor_torque_limit)
    rows = _Rows(model, torque, motor, acceleration)
    grid, knot = _grid(int(grid_points), _knots(fn))
    q, dq, ddq = _evaluate(fn, grid, model.nq)
    if rows.m == 0 and not np.isfinite(velocity).any():
        raise InputError("time_optimal: no velocity, acceleration or torque limit bounds the motion")
    dyn = _Dynamics(model, gravity, friction)
    a_tau, b_tau, g_tau = dyn.coefficients(q, dq, ddq)
    a, b = rows.values(a_tau, dq), rows.values(b_tau, ddq)
    zero = None if rows.joints_only else np.zeros_like(q)
    c = rows.values(dyn.static(g_tau, dq), zero)
    _static_check(rows, grid, c)
    point_rows = (a, b, c, (dq, velocity))
    g = rows.values(g_tau, zero)
    x, u, K_hi, t, iterations = _solve(model, dyn, rows, grid, (a, b, g, dq, knot), velocity)
    if iterations < 0:
        _unreachable(rows, grid, c, -1 - iterations)
    return TimeOptimalTrajectory(
        fn, grid, x, u, t, dyn, rows=rows, point_rows=point_rows, K_hi=K_hi,
        torque_limit=torque, motor_torque_limit=motor, velocity_limit=velocity, acceleration_limit=acceleration,
        iterations=iterations, compute_time=time.perf_counter() - started)


def _unreachable(rows: _Rows, grid: Array, c: Array, i: int) -> None:
    k = int(np.argmax(np.abs(c[i]) / rows.limit)) if rows.m else 0
    name, what = rows.describe(k, float(c[i, k])) if rows.m else ("", "")
    raise PathInfeasibleError(
        f"path infeasible at s = {grid[i]:.6g}: it cannot be followed from there to its end within the limits "
        f"(the tightest: the {what} at rest)", s=float(grid[i]), joint=name,
        torque=float(c[i, k]) if rows.m else float("nan"), limit=float(rows.limit[k]) if rows.m else float("nan"))
