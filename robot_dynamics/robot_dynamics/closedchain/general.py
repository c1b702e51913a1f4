"""General closed-chain mechanisms: a spanning tree plus loop-closure constraints.

A closed-chain (parallel or hybrid) mechanism is described by

1. a **spanning tree**: an ordinary :class:`~robot_dynamics.model.RobotModel` obtained by cutting
   every loop at one joint (built with :func:`robot_dynamics.model.build_model` from
   ``LinkSpec``/``JointSpec`` lists, or loaded from URDF text). A floating base is six joints
   (three prismatic, three revolute) in front of the floating body; :func:`free_joint_specs`
   writes them;
2. **loop-closure constraints** ``phi(q) = 0`` that glue the cut joints back together:

   * :func:`point_constraint` (point-on-point) / :func:`spherical_constraint`: a point of one
     link coincides with a point of another link (3 equations; a subset of world directions
     can be chosen for planar loops);
   * :func:`universal_constraint`: a spherical constraint plus ``axis_a . axis_b = 0``
     (4 equations: the cross of a universal joint keeps its two axes orthogonal);
   * :func:`fixed_point_constraint`: a point of a link stays at a fixed place of the world
     (a foot on the ground, 3 equations);

3. the **actuated joints** (tree joints whose force or torque is an input) and the
   **independent coordinates** (the tree joints that parametrise the configuration, e.g. the
   platform pose of a Stewart platform, or the actuated joints of a fully parallel robot).

Example::

    from robot_dynamics.model import build_model
    from robot_dynamics.closedchain import (
        ClosedChainModel, spherical_constraint, actuator_forces, constrained_accelerations)

    tree = build_model("four_bar", links, joints)        # the loop cut at the coupler pin
    mech = ClosedChainModel.build(
        tree,
        [spherical_constraint("pin", "coupler", (0.3, 0, 0), "rocker", (0.2, 0, 0),
                              directions=((1, 0, 0), (0, 1, 0)))],   # planar: x and y only
        actuated=["crank_joint"],
        independent=["crank_joint"],
        q_reference=q_home)                               # start of the Newton iterations

    q, qd, qdd = complete_state(mech, q_ind, qd_ind, qdd_ind)   # solve the loops
    sol = actuator_forces(mech, q, qd, qdd)                      # inverse dynamics
    fd = constrained_accelerations(mech, q, qd, sol.tau, baumgarte=20.0)  # forward dynamics
    mech.inverse_dynamics(q_ind, qd_ind, qdd_ind)   # the same in independent coordinates

Equations (all tree coordinates, ``K = d phi / d q``, shape (nc, nq))::

    M(q) qdd + h(q, qd) = S tau + K^T lambda              (Lagrange multipliers)
    K qdd = -Kdot qd - 2 w K qd - w^2 phi                  (Baumgarte drift control, w >= 0)

``S`` (nq, na) puts the actuator forces on their joints; ``lambda`` is the constraint force:
for a point constraint ``p_a - p_b = 0``, ``lambda`` is the force (base axes) applied to link a
at its point, and ``-lambda`` the force on link b. Inverse dynamics projects the tree's
torques on the null space ``G`` of ``K`` (``K G = 0``) to eliminate ``lambda``:
``G^T S tau = G^T tau_tree`` (dof equations). With more actuators than degrees of freedom
(over-actuation) the forces are the minimum-norm solution, or a chosen subset is prescribed
and the rest solved. A rank-deficient ``G^T S`` (an actuation singularity) raises
:class:`~robot_dynamics.errors.SingularityError`, never huge numbers.

Energy: :func:`energy` gives kinetic, potential and total energy of the tree (the constraints
do no work), :func:`actuator_power` the power ``tau . qd_a`` delivered by the actuators.

The :class:`Mechanism` protocol is the common interface of closed-chain mechanisms (this
general one and the paper formulations): ``inverse_dynamics``, ``forward_dynamics`` and
``mass_matrix`` in the independent coordinates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._batch import as_batch, broadcast_batch
from .._rk4 import rk4_step
from ..dynamics import bias_torques, crba, kinetic_energy, potential_energy, rnea
from ..errors import ModelError, SingularityError, UnknownNameError
from ..model.robot_model import JointSpec, LinkSpec, RobotModel
from .constraints import (
    CONSTRAINT_KINDS,
    LoopConstraint,
    _vec3,
    fixed_point_constraint,
    point_constraint,
    spherical_constraint,
    universal_constraint,
)
from .loop_kinematics import (
    _RANK_RTOL,
    PositionSolution,
    _bias_flat,
    _dependent_indices,
    _flat_pair,
    _flat_q,
    _jacobian_flat,
    _residual_flat,
    _solve_dependent,
    complete_state,
    constraint_bias,
    constraint_jacobian,
    constraint_residual,
    null_space,
    solve_accelerations,
    solve_positions,
    solve_velocities,
)

__all__ = [
    "CONSTRAINT_KINDS",
    "LoopConstraint",
    "point_constraint",
    "spherical_constraint",
    "universal_constraint",
    "fixed_point_constraint",
    "free_joint_specs",
    "ClosedChainModel",
    "Mechanism",
    "PositionSolution",
    "ActuatorForces",
    "ConstrainedAccelerations",
    "EnergyTerms",
    "SimulationResult",
    "constraint_residual",
    "constraint_jacobian",
    "constraint_bias",
    "null_space",
    "solve_positions",
    "solve_velocities",
    "solve_accelerations",
    "complete_state",
    "actuator_forces",
    "constrained_accelerations",
    "reduced_mass_matrix",
    "energy",
    "actuator_power",
    "simulate",
]

Array = NDArray[np.float64]

def free_joint_specs(parent: str, child: str, prefix: str | None = None) -> tuple[list[LinkSpec], list[JointSpec]]:
    """Six joints giving ``child`` a free (floating) motion relative to ``parent``.

    Coordinates ``[x, y, z, psi, theta, phi]``: translation of the child origin in parent axes,
    then Euler angles ``R = Rz(psi) Ry(theta) Rx(phi)`` (yaw about z, pitch about the new y,
    roll about the newest x; the ROS roll-pitch-yaw matrix). Five massless links carry the
    intermediate joints; add the returned lists to the mechanism's own.

    Returns:
        (links, joints): the intermediate massless links and the six joints
        ``<prefix>_x, _y, _z, _yaw, _pitch, _roll``.
    """
    p = prefix or child
    names = [f"{p}_x", f"{p}_y", f"{p}_z", f"{p}_yaw", f"{p}_pitch", f"{p}_roll"]
    types = ["prismatic"] * 3 + ["revolute"] * 3
    axes = [np.eye(3)[0], np.eye(3)[1], np.eye(3)[2], np.eye(3)[2], np.eye(3)[1], np.eye(3)[0]]
    inter = [f"{p}_free_{k}" for k in range(5)]
    chain = [parent, *inter, child]
    links = [LinkSpec(n) for n in inter]
    joints = [
        JointSpec(names[k], types[k], chain[k], chain[k + 1], axis=axes[k]) for k in range(6)
    ]
    return links, joints


@runtime_checkable
class Mechanism(Protocol):
    """Common interface of closed-chain mechanisms, in their independent coordinates.

    ``q``: independent coordinates (..., n); ``tau``: actuator forces (..., na).
    """

    @property
    def coordinate_names(self) -> tuple[str, ...]: ...

    @property
    def actuator_names(self) -> tuple[str, ...]: ...

    def inverse_dynamics(self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike) -> Array: ...

    def forward_dynamics(self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike) -> Array: ...

    def mass_matrix(self, q: ArrayLike) -> Array: ...


@dataclass(frozen=True, eq=False)
class ClosedChainModel:
    """A spanning tree plus loop closures, actuated joints and independent coordinates.

    Build it with :meth:`build` (validates every name). Immutable, like RobotModel.

    Attributes:
        tree: the spanning tree.
        constraints: the loop closures.
        actuated: indices of the actuated tree joints, (na,).
        independent: indices of the independent coordinates, (n,).
        q_reference: tree configuration the position solver starts from, (nq,).
        gravity: gravity in the base frame, (3,) [m/s^2].
    """

    tree: RobotModel
    constraints: tuple[LoopConstraint, ...]
    actuated: tuple[int, ...]
    independent: tuple[int, ...]
    q_reference: Array
    gravity: Array

    @classmethod
    def build(
        cls,
        tree: RobotModel,
        constraints: Sequence[LoopConstraint],
        actuated: Sequence[str],
        independent: Sequence[str] | None = None,
        q_reference: ArrayLike | None = None,
        gravity: ArrayLike | None = None,
    ) -> ClosedChainModel:
        """Validate names and build the mechanism.

        Args:
            tree: spanning-tree RobotModel.
            constraints: loop closures (frames must be frames of ``tree``).
            actuated: names of the actuated tree joints.
            independent: names of the independent coordinates (default: ``actuated``).
            q_reference: a tree configuration near the working one (default zeros).
            gravity: base-frame gravity (default ``tree.gravity``).

        Raises:
            UnknownNameError: a joint or frame name that the tree does not have.
            ModelError: duplicate names or an empty actuator list.
        """
        names = [c.name for c in constraints]
        if len(set(names)) != len(names):
            raise ModelError(f"constraint names must be unique, got {names}")
        for c in constraints:
            if c.kind not in CONSTRAINT_KINDS:
                raise ModelError(f"constraint {c.name!r}: kind {c.kind!r}; valid kinds: {list(CONSTRAINT_KINDS)}")
            for fr in (c.frame_a, c.frame_b):
                if fr is not None:
                    tree.frame_index(fr)
        act = tuple(tree.joint_index(n) for n in actuated)
        ind = act if independent is None else tuple(tree.joint_index(n) for n in independent)
        for what, idx in (("actuated", act), ("independent", ind)):
            if len(set(idx)) != len(idx):
                raise ModelError(f"{what} joints are listed twice: {[tree.joint_names[i] for i in idx]}")
        if not act:
            raise ModelError("a closed-chain mechanism needs at least one actuated joint")
        qr = np.zeros(tree.nq) if q_reference is None else as_batch(q_reference, tree.nq, "q_reference", tree.joint_names)[0][0]
        g = tree.gravity if gravity is None else _vec3(gravity, "gravity")
        qr.setflags(write=False)
        return cls(tree, tuple(constraints), act, ind, qr, np.array(g, dtype=float))

    # -- sizes and names -----------------------------------------------------------------
    @property
    def nq(self) -> int:
        """Number of tree coordinates."""
        return self.tree.nq

    @property
    def nc(self) -> int:
        """Number of scalar constraint equations."""
        return sum(c.size for c in self.constraints)

    @property
    def na(self) -> int:
        """Number of actuators."""
        return len(self.actuated)

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        """Names of the independent coordinates."""
        return tuple(self.tree.joint_names[i] for i in self.independent)

    @property
    def actuator_names(self) -> tuple[str, ...]:
        """Names of the actuated joints."""
        return tuple(self.tree.joint_names[i] for i in self.actuated)

    @property
    def dependent(self) -> tuple[int, ...]:
        """Indices of the tree coordinates that are not independent."""
        s = set(self.independent)
        return tuple(i for i in range(self.nq) if i not in s)

    def selection(self) -> Array:
        """S: actuator forces to tree joint forces, (nq, na)."""
        S = np.zeros((self.nq, self.na))
        S[list(self.actuated), range(self.na)] = 1.0
        return S

    # -- the Mechanism interface (independent coordinates) -------------------------------
    def inverse_dynamics(self, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike) -> Array:
        """Actuator forces for a motion of the independent coordinates, (..., na)."""
        qf, qdf, qddf = complete_state(self, q, qd, qdd)
        return actuator_forces(self, qf, qdf, qddf).tau

    def forward_dynamics(self, q: ArrayLike, qd: ArrayLike, tau: ArrayLike) -> Array:
        """Accelerations of the independent coordinates under actuator forces, (..., n)."""
        qf, qdf, _ = complete_state(self, q, qd)
        return constrained_accelerations(self, qf, qdf, tau).qdd[..., list(self.independent)]

    def mass_matrix(self, q: ArrayLike) -> Array:
        """Symmetric mass matrix in the independent coordinates, (..., n, n)."""
        qf, _, _ = complete_state(self, q)
        return reduced_mass_matrix(self, qf)

    def __repr__(self) -> str:
        return (f"ClosedChainModel(tree={self.tree.name!r}, nq={self.nq}, nc={self.nc}, "
                f"actuated={list(self.actuator_names)}, independent={list(self.coordinate_names)})")


# -- dynamics ----------------------------------------------------------------------------------
class ActuatorForces(NamedTuple):
    """Result of :func:`actuator_forces` (inverse dynamics).

    Attributes:
        tau: actuator forces/torques in ``mech.actuator_names`` order, (..., na) [N or N m].
        multipliers: constraint forces lambda (minimum norm if the loops are redundant), (..., nc).
        tau_tree: torques the open tree would need for the same motion, (..., nq).
        residual: |G^T (S tau - tau_tree)|: non-zero only when prescribed forces make the
            motion impossible, (...).
    """

    tau: Array
    multipliers: Array
    tau_tree: Array
    residual: Array


def _prescribed_forces(
    names: tuple[str, ...], prescribed: Mapping[str, ArrayLike] | None, N: int
) -> tuple[list[int], Array]:
    """Indices (in ``names``) of the prescribed actuators and their forces, (N, k) [N or N m].

    Raises:
        UnknownNameError: a prescribed name that is not in ``names``.
    """
    fixed_idx: list[int] = []
    fixed_val = np.zeros((N, 0))
    if prescribed:
        vals = []
        for name, val in prescribed.items():
            if name not in names:
                raise UnknownNameError("actuated joint", name, names)
            fixed_idx.append(names.index(name))
            vals.append(np.broadcast_to(np.asarray(val, dtype=float).reshape(-1), (N,)) if np.size(val) in (1, N)
                        else np.asarray(val, dtype=float).reshape(N))
        fixed_val = np.stack(vals, axis=1)
    return fixed_idx, fixed_val


def actuator_forces(
    mech: ClosedChainModel,
    q: ArrayLike,
    qd: ArrayLike,
    qdd: ArrayLike,
    *,
    gravity: ArrayLike | None = None,
    f_ext: Mapping[str, ArrayLike] | None = None,
    prescribed: Mapping[str, ArrayLike] | None = None,
    friction: bool = False,
) -> ActuatorForces:
    """Inverse dynamics of the closed chain for a loop-consistent motion of the tree.

    ``S tau + K^T lambda = tau_tree`` projected on ``G = null(K)``:
    ``(G^T S) tau = G^T tau_tree``. Over-actuated mechanisms (na > dof) get the minimum-norm
    forces, or the forces of ``prescribed`` actuators are imposed (a redundant-force profile)
    and the others solved (minimum norm if still redundant).

    Args:
        q, qd, qdd: tree motion satisfying the loops (see :func:`complete_state`), (..., nq).
        gravity: base-frame gravity, default ``mech.gravity``.
        f_ext: external wrenches per link, as in :func:`robot_dynamics.rnea`.
        prescribed: ``{actuated joint: force (...,) }`` imposed forces.
        friction: include the tree's joint friction.

    Raises:
        SingularityError: ``G^T S`` (restricted to the solved actuators) has rank < dof: the
            actuators cannot control the mechanism here (actuation singularity).
        UnknownNameError: a prescribed name that is not an actuated joint.
    """
    (qf, qdf, qddf), batch = _flat_pair(mech, q, qd, qdd)
    N = qf.shape[0]
    g = mech.gravity if gravity is None else gravity
    tau_tree = rnea(mech.tree, qf, qdf, qddf, gravity=g, f_ext=f_ext, friction=friction).reshape(N, mech.nq)
    K = _jacobian_flat(mech, qf)
    S = mech.selection()
    names = mech.actuator_names
    fixed_idx, fixed_val = _prescribed_forces(names, prescribed, N)
    free = [k for k in range(mech.na) if k not in fixed_idx]
    tau = np.zeros((N, mech.na))
    lam = np.zeros((N, mech.nc))
    resid = np.zeros(N)
    for n in range(N):
        G, _ = null_space(K[n])
        dof = G.shape[1]
        A = G.T @ S  # (dof, na): the actuation Jacobian projected on the free motions
        b = G.T @ tau_tree[n]
        if fixed_idx:
            b = b - A[:, fixed_idx] @ fixed_val[n]
            tau[n, fixed_idx] = fixed_val[n]
        Af = A[:, free]
        s = np.linalg.svd(Af, compute_uv=False) if Af.size else np.zeros(0)
        rank = int(np.sum(s > _RANK_RTOL * max(s[0] if s.size else 0.0, 1.0)))
        if rank < dof:
            cond = (s[0] / s[-1]) if s.size and s[-1] > 0 else np.inf
            raise SingularityError(
                f"actuation singularity: the actuators {[names[k] for k in free]} span {rank} of the "
                f"{dof} free motions (G^T S condition number {cond:.3g}); the inverse dynamics has no solution here"
            )
        tau[n, free] = np.linalg.lstsq(Af, b, rcond=None)[0]  # exact, or minimum norm if redundant
        resid[n] = np.linalg.norm(A @ tau[n] - G.T @ tau_tree[n])
        lam[n] = np.linalg.lstsq(K[n].T, tau_tree[n] - S @ tau[n], rcond=None)[0]
    return ActuatorForces(tau.reshape(batch + (mech.na,)), lam.reshape(batch + (mech.nc,)),
                          tau_tree.reshape(batch + (mech.nq,)), resid.reshape(batch))


class ConstrainedAccelerations(NamedTuple):
    """Result of :func:`constrained_accelerations` (forward dynamics).

    Attributes:
        qdd: tree accelerations, (..., nq).
        multipliers: constraint forces lambda, (..., nc).
    """

    qdd: Array
    multipliers: Array


def constrained_accelerations(
    mech: ClosedChainModel,
    q: ArrayLike,
    qd: ArrayLike,
    tau: ArrayLike,
    *,
    baumgarte: float = 0.0,
    gravity: ArrayLike | None = None,
    f_ext: Mapping[str, ArrayLike] | None = None,
    friction: bool = False,
) -> ConstrainedAccelerations:
    """Forward dynamics with Lagrange multipliers and Baumgarte drift control.

    Solves ``M qdd + h = S tau + K^T lambda`` with
    ``K qdd = gamma = -Kdot qd - 2 w K qd - w^2 phi`` (Baumgarte with critical damping,
    ``w = baumgarte`` [1/s]; 0 gives the exact acceleration constraint). The solution uses
    the null space G of K, so redundant loops (planar mechanisms) are fine:
    ``qdd = K^+ gamma + G z``, ``(G^T M G) z = G^T (S tau - h - M K^+ gamma)``.
    Never raises on the state (safe inside a simulation loop).

    Args:
        q, qd: tree state, (..., nq).
        tau: actuator forces, (..., na).
    """
    (qf, qdf), batch = _flat_pair(mech, q, qd)
    tf, bt = as_batch(tau, mech.na, "tau", mech.actuator_names)
    (qf, qdf, tf), batch = broadcast_batch([(qf, batch), (qdf, batch), (tf, bt)])
    N = qf.shape[0]
    g = mech.gravity if gravity is None else gravity
    M = crba(mech.tree, qf).reshape(N, mech.nq, mech.nq)
    h = bias_torques(mech.tree, qf, qdf, gravity=g, friction=friction).reshape(N, mech.nq)
    if f_ext:
        h = h + rnea(mech.tree, qf, np.zeros_like(qf), np.zeros_like(qf), gravity=np.zeros(3), f_ext=f_ext,
                     friction=False).reshape(N, mech.nq)
    K = _jacobian_flat(mech, qf)
    gamma = -_bias_flat(mech, qf, qdf)
    if baumgarte > 0.0:
        w = float(baumgarte)
        gamma = gamma - 2.0 * w * np.einsum("nij,nj->ni", K, qdf) - w * w * _residual_flat(mech, qf)
    rhs = tf @ mech.selection().T - h
    qdd = np.empty((N, mech.nq))
    lam = np.empty((N, mech.nc))
    for n in range(N):
        G, _ = null_space(K[n])
        qp = np.linalg.lstsq(K[n], gamma[n], rcond=None)[0] if mech.nc else np.zeros(mech.nq)
        z = np.linalg.solve(G.T @ M[n] @ G, G.T @ (rhs[n] - M[n] @ qp))
        qdd[n] = qp + G @ z
        lam[n] = np.linalg.lstsq(K[n].T, M[n] @ qdd[n] - rhs[n], rcond=None)[0] if mech.nc else np.zeros(0)
    return ConstrainedAccelerations(qdd.reshape(batch + (mech.nq,)), lam.reshape(batch + (mech.nc,)))


def reduced_mass_matrix(mech: ClosedChainModel, q: ArrayLike, independent: Sequence[int] | None = None) -> Array:
    """Mass matrix in the independent coordinates, ``W^T M W`` with ``qd = W qd_ind``, (..., n, n).

    Symmetric positive definite away from singular configurations; the kinetic energy is
    ``1/2 qd_ind^T M_ind qd_ind``.
    """
    qf, batch = _flat_q(mech, q)
    ind, dep = _dependent_indices(mech, independent)
    N = qf.shape[0]
    K = _jacobian_flat(mech, qf)
    M = crba(mech.tree, qf).reshape(N, mech.nq, mech.nq)
    out = np.empty((N, len(ind), len(ind)))
    for n in range(N):
        W = np.zeros((mech.nq, len(ind)))
        W[ind, range(len(ind))] = 1.0
        W[dep] = _solve_dependent(K[n : n + 1].repeat(len(ind), 0), -np.swapaxes(K[n][:, ind], 0, 1), dep,
                                  "mass matrix").T
        out[n] = W.T @ M[n] @ W
    return out.reshape(batch + (len(ind), len(ind)))


class EnergyTerms(NamedTuple):
    """Kinetic, potential and total mechanical energy [J], each (...)."""

    kinetic: Array
    potential: Array
    total: Array


def energy(mech: ClosedChainModel, q: ArrayLike, qd: ArrayLike, gravity: ArrayLike | None = None) -> EnergyTerms:
    """Energy of the mechanism (the ideal loop closures store none)."""
    g = mech.gravity if gravity is None else gravity
    T = kinetic_energy(mech.tree, q, qd)
    U = potential_energy(mech.tree, q, gravity=g)
    return EnergyTerms(T, U, T + U)


def actuator_power(mech: ClosedChainModel, qd: ArrayLike, tau: ArrayLike) -> Array:
    """Power delivered by the actuators, ``tau . qd_a`` [W], (...)."""
    qdf = np.asarray(qd, dtype=float)
    return np.einsum("...k,...k->...", np.asarray(tau, dtype=float), qdf[..., list(mech.actuated)])


class SimulationResult(NamedTuple):
    """Result of :func:`simulate`.

    Attributes:
        t: times (T,) [s]; q, qd, qdd: tree states (T, nq); tau: actuator forces (T, na);
        constraint_error: max |phi| per step (T,); ok: False if the integration stopped early.
        message: a one-line report.
    """

    t: Array
    q: Array
    qd: Array
    qdd: Array
    tau: Array
    constraint_error: Array
    ok: bool
    message: str


def simulate(
    mech: ClosedChainModel,
    q0: ArrayLike,
    qd0: ArrayLike,
    t: ArrayLike,
    control: Callable[[float, Array, Array], ArrayLike],
    *,
    baumgarte: float = 20.0,
    project: bool = True,
) -> SimulationResult:
    """Fixed-step RK4 integration of the constrained forward dynamics.

    Args:
        q0, qd0: initial tree state, (nq,); qd0 is projected on ``K qd = 0``.
        t: increasing times (T,) [s] (the steps).
        control: ``tau = control(t, q, qd)``, (na,); called at every RK4 stage.
        baumgarte: drift control rate w [1/s] (see :func:`constrained_accelerations`).
        project: after each step, close the loops (Newton, independent coordinates held) and
            project the velocities on ``K qd = 0``.

    Returns:
        A SimulationResult; integration stops (``ok=False``) on a non-finite state or a failed
        loop closure instead of raising.
    """
    times = np.asarray(t, dtype=float).reshape(-1)
    q = as_batch(q0, mech.nq, "q0", mech.tree.joint_names)[0][0].copy()
    qd = as_batch(qd0, mech.nq, "qd0", mech.tree.joint_names)[0][0].copy()
    qd = solve_velocities(mech, q, qd)
    nT = len(times)
    Q, QD, QDD = np.full((nT, mech.nq), np.nan), np.full((nT, mech.nq), np.nan), np.full((nT, mech.nq), np.nan)
    TAU, ERR = np.full((nT, mech.na), np.nan), np.full(nT, np.nan)

    def f(tk: float, qk: Array, qdk: Array) -> tuple[Array, Array, Array]:
        u = np.asarray(control(tk, qk, qdk), dtype=float).reshape(mech.na)
        return qdk, constrained_accelerations(mech, qk, qdk, u, baumgarte=baumgarte).qdd, u

    def xdot(tk: float, x: Array) -> Array:
        qdk, qddk, _ = f(tk, x[: mech.nq], x[mech.nq :])
        return np.concatenate([qdk, qddk])

    ok, msg = True, "integrated"
    for k in range(nT):
        _, qdd, u = f(times[k], q, qd)
        Q[k], QD[k], QDD[k], TAU[k] = q, qd, qdd, u
        ERR[k] = np.abs(_residual_flat(mech, q[None])).max(initial=0.0)
        if k == nT - 1:
            break
        x = rk4_step(xdot, np.concatenate([q, qd]), times[k + 1] - times[k], np.concatenate([qd, qdd]), t=times[k])
        q, qd = x[: mech.nq], x[mech.nq :]
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
            ok, msg = False, f"non-finite state at t = {times[k + 1]:.4g} s"
            break
        if project and mech.nc:
            sol = solve_positions(mech, q)
            if not bool(sol.success):
                ok, msg = False, f"t = {times[k + 1]:.4g} s: {sol.message}"
                break
            q = sol.q
            try:
                qd = solve_velocities(mech, q, qd)
            except SingularityError as exc:
                ok, msg = False, f"t = {times[k + 1]:.4g} s: {exc}"
                break
    return SimulationResult(times, Q, QD, QDD, TAU, ERR, ok, msg)
