"""Kinematics of the loop closures of a mechanism (:class:`~robot_dynamics.closedchain.constraints.LoopTree`,
such as :class:`~robot_dynamics.closedchain.general.ClosedChainModel`).

The loop-closure errors ``phi(q)`` (:func:`constraint_residual`), their Jacobian
``K = d phi / d q`` (:func:`constraint_jacobian`) and the bias ``Kdot qd``
(:func:`constraint_bias`), all in tree coordinates; and the solves that close the loops with the
independent coordinates held: Newton iterations on the positions (:func:`solve_positions`),
``K qd = 0`` (:func:`solve_velocities`), ``K qdd + Kdot qd = 0`` (:func:`solve_accelerations`),
the three together (:func:`complete_state`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import as_batch, broadcast_batch
from ..errors import SingularityError
from ..kinematics import frame_poses, jacobian, jacobian_dot_qdot
from ..spatial import cross, skew
from .constraints import LoopConstraint, LoopTree


__all__ = [
    "constraint_residual",
    "constraint_jacobian",
    "constraint_bias",
    "null_space",
    "PositionSolution",
    "solve_positions",
    "solve_velocities",
    "solve_accelerations",
    "complete_state",
]

Array = NDArray[np.float64]

# Relative tolerance on singular values when deciding ranks.
_RANK_RTOL = 1e-9


# -- constraint kinematics ---------------------------------------------------------------------
class _PointKin(NamedTuple):
    p: Array  # (N, 3) world position
    J: Array  # (N, 3, nq) linear Jacobian of the point
    Jw: Array  # (N, 3, nq) angular Jacobian of the frame
    R: Array  # (N, 3, 3) frame orientation


def _frame_cache(mech: LoopTree, qf: Array) -> tuple[Array, dict[str, Array]]:
    T = frame_poses(mech.tree, qf)
    frames = {c.frame_a for c in mech.constraints} | {c.frame_b for c in mech.constraints if c.frame_b is not None}
    J = {f: jacobian(mech.tree, qf, f) for f in frames}
    return T, J


def _point(mech: LoopTree, T: Array, J: dict[str, Array], frame: str | None, point: Array, N: int) -> _PointKin:
    nq = mech.nq
    if frame is None:
        z = np.zeros((N, 3, nq))
        return _PointKin(np.broadcast_to(point, (N, 3)), z, z, np.broadcast_to(np.eye(3), (N, 3, 3)))
    k = mech.tree.frame_index(frame)
    R = T[:, k, :3, :3]
    r = R @ point  # lever arm from the frame origin, base axes
    Jf = J[frame]
    # v_p = v_o + w x r = v_o - [r]x w
    Jp = Jf[:, :3] - skew(r) @ Jf[:, 3:]
    return _PointKin(T[:, k, :3, 3] + r, Jp, Jf[:, 3:], R)


def _flat_q(mech: LoopTree, q: ArrayLike) -> tuple[Array, tuple[int, ...]]:
    return as_batch(q, mech.nq, "q", mech.tree.joint_names)


def _constraint_points(mech: LoopTree, qf: Array) -> list[tuple[LoopConstraint, _PointKin, _PointKin]]:
    """Each constraint with the kinematics of its two points at the configurations ``qf`` (N, nq)."""
    N = qf.shape[0]
    T, J = _frame_cache(mech, qf)
    return [(c, _point(mech, T, J, c.frame_a, c.point_a, N), _point(mech, T, J, c.frame_b, c.point_b, N))
            for c in mech.constraints]


def _residual_flat(mech: LoopTree, qf: Array) -> Array:
    """phi(q) for configurations ``qf`` (N, nq), (N, nc)."""
    rows = []
    for c, a, b in _constraint_points(mech, qf):
        rows.append((a.p - b.p) @ c.directions.T)
        if c.kind == "universal":
            ua, ub = a.R @ c.axis_a, b.R @ c.axis_b
            rows.append(np.einsum("nk,nk->n", ua, ub)[:, None])
    return np.concatenate(rows, axis=1) if rows else np.zeros((qf.shape[0], 0))


def _jacobian_flat(mech: LoopTree, qf: Array) -> Array:
    """K = d phi / d q for configurations ``qf`` (N, nq), (N, nc, nq)."""
    rows = []
    for c, a, b in _constraint_points(mech, qf):
        rows.append(c.directions @ (a.J - b.J))
        if c.kind == "universal":
            ua, ub = a.R @ c.axis_a, b.R @ c.axis_b
            # d(ua . ub)/dt = (ua x ub) . (w_a - w_b)
            n = cross(ua, ub)
            rows.append(np.einsum("nk,nkj->nj", n, a.Jw - b.Jw)[:, None, :])
    return np.concatenate(rows, axis=1) if rows else np.zeros((qf.shape[0], 0, mech.nq))


def _bias_flat(mech: LoopTree, qf: Array, qdf: Array) -> Array:
    """Kdot qd: the constraints' second derivative at qdd = 0."""
    N = qf.shape[0]
    T, J = _frame_cache(mech, qf)
    acc: dict[str, Array] = {}
    rows = []

    def point_acc(frame: str | None, point: Array) -> tuple[Array, Array, Array, Array]:
        if frame is None:
            z = np.zeros((N, 3))
            return z, z, z, z
        if frame not in acc:
            acc[frame] = jacobian_dot_qdot(mech.tree, qf, qdf, frame)
        k = mech.tree.frame_index(frame)
        R = T[:, k, :3, :3]
        r = R @ point
        w = np.einsum("nij,nj->ni", J[frame][:, 3:], qdf)
        a0, alpha = acc[frame][:, :3], acc[frame][:, 3:]
        # classical acceleration of a body point: a_o + alpha x r + w x (w x r)
        return a0 + cross(alpha, r) + cross(w, cross(w, r)), w, alpha, R

    for c in mech.constraints:
        aa, wa, ala, Ra = point_acc(c.frame_a, c.point_a)
        ab, wb, alb, Rb = point_acc(c.frame_b, c.point_b)
        rows.append((aa - ab) @ c.directions.T)
        if c.kind == "universal":
            ua = Ra @ c.axis_a if c.frame_a is not None else np.broadcast_to(c.axis_a, (N, 3))
            ub = Rb @ c.axis_b if c.frame_b is not None else np.broadcast_to(c.axis_b, (N, 3))
            n = cross(ua, ub)
            ndot = cross(cross(wa, ua), ub) + cross(ua, cross(wb, ub))
            val = np.einsum("nk,nk->n", ndot, wa - wb) + np.einsum("nk,nk->n", n, ala - alb)
            rows.append(val[:, None])
    return np.concatenate(rows, axis=1) if rows else np.zeros((N, 0))


def constraint_residual(mech: LoopTree, q: ArrayLike) -> Array:
    """phi(q): loop-closure errors, (..., nc) [m for points, cosine for universal axes]."""
    qf, batch = _flat_q(mech, q)
    return _residual_flat(mech, qf).reshape(batch + (mech.nc,))


def constraint_jacobian(mech: LoopTree, q: ArrayLike) -> Array:
    """K = d phi / d q, (..., nc, nq); the constraint velocities are ``K qd``."""
    qf, batch = _flat_q(mech, q)
    return _jacobian_flat(mech, qf).reshape(batch + (mech.nc, mech.nq))


def constraint_bias(mech: LoopTree, q: ArrayLike, qd: ArrayLike) -> Array:
    """Kdot qd, (..., nc): the constraint accelerations are ``K qdd + Kdot qd``."""
    (qf, qdf), batch = _flat_pair(mech, q, qd)
    return _bias_flat(mech, qf, qdf).reshape(batch + (mech.nc,))


def _flat_pair(mech: LoopTree, *arrays: ArrayLike) -> tuple[list[Array], tuple[int, ...]]:
    what = ("q", "qd", "qdd")
    parts = [as_batch(a, mech.nq, what[k], mech.tree.joint_names) for k, a in enumerate(arrays)]
    return broadcast_batch(parts)


def null_space(K: Array) -> tuple[Array, int]:
    """Orthonormal basis G of the null space of K (nc, nq) and the rank of K (SVD)."""
    nq = K.shape[-1]
    if K.shape[0] == 0:
        return np.eye(nq), 0
    _, s, Vt = np.linalg.svd(K)
    rank = int(np.sum(s > _RANK_RTOL * max(s[0], 1.0)))
    return Vt[rank:].T, rank


# -- position, velocity and acceleration of the loops -----------------------------------------
class PositionSolution(NamedTuple):
    """Result of :func:`solve_positions`.

    Attributes:
        q: tree configuration, (..., nq).
        success: True where every loop closes within tolerance, (...).
        residual: largest |phi| at ``q``, (...).
        iterations: Newton iterations used, (...).
        message: a one-line report (the worst constraint when a solve failed).
    """

    q: Array
    success: Array
    residual: Array
    iterations: Array
    message: str


def _dependent_indices(mech: LoopTree, independent: Sequence[int] | None) -> tuple[list[int], list[int]]:
    ind = list(mech.independent if independent is None else independent)
    dep = [i for i in range(mech.nq) if i not in set(ind)]
    return ind, dep


def _constraint_rows(mech: LoopTree) -> list[str]:
    rows = []
    for c in mech.constraints:
        rows += [f"{c.name}[{k}]" for k in range(len(c.directions))]
        if c.kind == "universal":
            rows.append(f"{c.name}[axes]")
    return rows


def solve_positions(
    mech: LoopTree,
    q_guess: ArrayLike,
    independent: Sequence[int] | None = None,
    *,
    tolerance: float = 1e-12,
    max_iterations: int = 50,
    raise_on_failure: bool = False,
) -> PositionSolution:
    """Close the loops: Newton iterations on the dependent coordinates, independent ones held.

    ``K_d dq_d = -phi`` (least squares when the constraints are redundant), with the step
    halved while it does not reduce |phi|.

    Args:
        q_guess: starting configuration, (..., nq); its independent entries are kept.
        independent: indices held fixed (default ``mech.independent``).
        tolerance: on max |phi| [m].
        raise_on_failure: raise SingularityError instead of returning ``success=False``.
    """
    qf, batch = _flat_q(mech, q_guess)
    ind, dep = _dependent_indices(mech, independent)
    q = qf.copy()
    N = q.shape[0]
    iters = np.zeros(N, dtype=int)
    res = np.abs(_residual_flat(mech, q)).max(axis=1, initial=0.0)
    for _ in range(max_iterations):
        active = res > tolerance
        if not np.any(active):
            break
        qa = q[active]
        phi = _residual_flat(mech, qa)
        K = _jacobian_flat(mech, qa)[:, :, dep]
        step = np.stack([np.linalg.lstsq(K[n], -phi[n], rcond=None)[0] for n in range(len(qa))])
        r0 = np.abs(phi).max(axis=1)
        scale = np.ones(len(qa))
        for _h in range(8):  # backtracking: accept the first step that reduces the error
            trial = qa.copy()
            trial[:, dep] += scale[:, None] * step
            r1 = np.abs(_residual_flat(mech, trial)).max(axis=1)
            bad = r1 >= r0
            if not np.any(bad) or _h == 7:
                break
            scale[bad] *= 0.5
        q[active] = trial
        iters[active] += 1
        res[active] = r1
    ok = res <= tolerance
    rows = _constraint_rows(mech)
    if np.all(ok):
        msg = f"loops closed (max |phi| {res.max(initial=0.0):.2e})"
    else:
        n = int(np.argmax(res))
        phi = _residual_flat(mech, q[n : n + 1])[0]
        msg = (f"loop closure failed at sample {n}: |phi| = {res[n]:.3g} after {iters[n]} Newton iterations, "
               f"worst constraint {rows[int(np.argmax(np.abs(phi)))]}: unreachable configuration or singular loop")
        if raise_on_failure:
            raise SingularityError(msg)
    return PositionSolution(q.reshape(batch + (mech.nq,)), ok.reshape(batch), res.reshape(batch),
                            iters.reshape(batch), msg)


def _solve_dependent(K: Array, rhs: Array, dep: list[int], what: str) -> Array:
    """Solve K[:, dep] x = rhs per sample; SingularityError when K_d loses rank."""
    out = np.empty((K.shape[0], len(dep)))
    for n in range(K.shape[0]):
        Kd = K[n][:, dep]
        s = np.linalg.svd(Kd, compute_uv=False)
        if len(dep) and (len(s) < len(dep) or s[len(dep) - 1] <= _RANK_RTOL * max(s[0], 1.0)):
            raise SingularityError(
                f"{what}: the dependent coordinates are not determined by the independent ones "
                f"(constraint Jacobian of the dependent joints has rank < {len(dep)}): singular configuration"
            )
        out[n] = np.linalg.lstsq(Kd, rhs[n], rcond=None)[0]
    return out


def solve_velocities(mech: LoopTree, q: ArrayLike, qd: ArrayLike, independent: Sequence[int] | None = None) -> Array:
    """Tree velocities satisfying ``K qd = 0``, independent entries of ``qd`` kept, (..., nq)."""
    (qf, qdf), batch = _flat_pair(mech, q, qd)
    ind, dep = _dependent_indices(mech, independent)
    K = _jacobian_flat(mech, qf)
    out = qdf.copy()
    out[:, dep] = _solve_dependent(K, -np.einsum("nij,nj->ni", K[:, :, ind], qdf[:, ind]), dep, "velocity solve")
    return out.reshape(batch + (mech.nq,))


def solve_accelerations(
    mech: LoopTree, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, independent: Sequence[int] | None = None
) -> Array:
    """Tree accelerations satisfying ``K qdd + Kdot qd = 0``, independent entries kept, (..., nq)."""
    (qf, qdf, qddf), batch = _flat_pair(mech, q, qd, qdd)
    ind, dep = _dependent_indices(mech, independent)
    K = _jacobian_flat(mech, qf)
    rhs = -_bias_flat(mech, qf, qdf) - np.einsum("nij,nj->ni", K[:, :, ind], qddf[:, ind])
    out = qddf.copy()
    out[:, dep] = _solve_dependent(K, rhs, dep, "acceleration solve")
    return out.reshape(batch + (mech.nq,))


def complete_state(
    mech: LoopTree,
    q_ind: ArrayLike,
    qd_ind: ArrayLike | None = None,
    qdd_ind: ArrayLike | None = None,
    q_guess: ArrayLike | None = None,
    *,
    check_limits: bool = True,
) -> tuple[Array, Array, Array]:
    """Tree q, qd, qdd from the independent coordinates and their derivatives.

    Args:
        q_ind, qd_ind, qdd_ind: independent coordinates and derivatives, (..., n); qd/qdd
            default to zeros.
        q_guess: start of the position solve, (..., nq); default ``mech.q_reference``.
        check_limits: reject configurations with a tree joint outside its position limits
            (e.g. a leg beyond its stroke).

    Returns:
        (q, qd, qdd), each (..., nq).

    Raises:
        SingularityError: the loops cannot be closed (the report names the worst constraint),
            a joint is out of its limits, or the dependent coordinates are not determined.
    """
    n = len(mech.independent)
    names = mech.coordinate_names
    parts = [as_batch(q_ind, n, "q", names)]
    parts.append(as_batch(np.zeros(n) if qd_ind is None else qd_ind, n, "qd", names))
    parts.append(as_batch(np.zeros(n) if qdd_ind is None else qdd_ind, n, "qdd", names))
    (qi, qdi, qddi), batch = broadcast_batch(parts)
    N = qi.shape[0]
    ind = list(mech.independent)
    guess = mech.q_reference if q_guess is None else q_guess
    q0 = np.broadcast_to(_flat_q(mech, guess)[0].reshape(-1, mech.nq), (N, mech.nq)).copy()
    q0[:, ind] = qi
    q = solve_positions(mech, q0, raise_on_failure=True).q
    if check_limits:
        _check_limits(mech, q)
    qd0 = np.zeros((N, mech.nq))
    qd0[:, ind] = qdi
    qd = solve_velocities(mech, q, qd0)
    qdd0 = np.zeros((N, mech.nq))
    qdd0[:, ind] = qddi
    qdd = solve_accelerations(mech, q, qd, qdd0)
    shape = batch + (mech.nq,)
    return q.reshape(shape), qd.reshape(shape), qdd.reshape(shape)


def _check_limits(mech: LoopTree, q: Array, tol: float = 1e-9) -> None:
    lo, hi = mech.tree.lower, mech.tree.upper
    bad = (q < lo - tol) | (q > hi + tol)
    if np.any(bad):
        n, j = (int(v[0]) for v in np.nonzero(bad))
        raise SingularityError(
            f"sample {n}: joint {mech.tree.joint_names[j]!r} at {q[n, j]:.6g} is outside its limits "
            f"[{lo[j]:.6g}, {hi[j]:.6g}]: unreachable configuration"
        )
