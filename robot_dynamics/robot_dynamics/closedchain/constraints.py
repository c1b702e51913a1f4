"""Loop-closure constraints of a closed-chain mechanism, and what the loop kinematics read.

A :class:`LoopConstraint` glues two link frames (or a link frame and the world) back together
where a loop was cut: :func:`point_constraint` / :func:`spherical_constraint` (3 equations, or a
chosen subset of base-frame directions), :func:`universal_constraint` (4) and
:func:`fixed_point_constraint` (3). :class:`LoopTree` names what the loop kinematics
(:mod:`~robot_dynamics.closedchain.loop_kinematics`) read of a mechanism: its spanning tree, its
constraints and its independent coordinates; :class:`~robot_dynamics.closedchain.general.ClosedChainModel`
is one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError
from ..model.robot_model import RobotModel

__all__ = [
    "CONSTRAINT_KINDS",
    "LoopConstraint",
    "LoopTree",
    "point_constraint",
    "spherical_constraint",
    "universal_constraint",
    "fixed_point_constraint",
]

Array = NDArray[np.float64]

#: Kinds of loop-closure constraint.
CONSTRAINT_KINDS = ("point", "universal")


@dataclass(frozen=True)
class LoopConstraint:
    """One loop closure between two link frames.

    Attributes:
        name: constraint name (used in failure reports).
        kind: ``'point'`` (point-on-point, spherical, fixed foot) or ``'universal'``.
        frame_a: link frame of the first point.
        point_a: the point in ``frame_a`` coordinates, (3,) [m].
        frame_b: link frame of the second point; None means the world (base frame).
        point_b: the point in ``frame_b`` coordinates (world coordinates if None), (3,) [m].
        directions: base-frame unit directions along which the points must coincide,
            (k, 3); default the three axes. Planar loops use two.
        axis_a, axis_b: for ``'universal'``: the cross axes, fixed in frame_a and frame_b,
            kept orthogonal, (3,) (unused by point constraints).
    """

    name: str
    kind: str
    frame_a: str
    point_a: Array
    frame_b: str | None = None
    point_b: Array = field(default_factory=lambda: np.zeros(3))
    directions: Array = field(default_factory=lambda: np.eye(3))
    axis_a: Array = field(default_factory=lambda: np.zeros(3))
    axis_b: Array = field(default_factory=lambda: np.zeros(3))

    @property
    def size(self) -> int:
        """Number of scalar equations."""
        return len(self.directions) + (1 if self.kind == "universal" else 0)


def _vec3(v: ArrayLike, what: str) -> Array:
    arr = np.asarray(v, dtype=float).reshape(-1)
    if arr.shape != (3,) or not np.all(np.isfinite(arr)):
        raise InputError(f"{what}: expected 3 finite numbers, got {v!r}")
    return arr


def point_constraint(
    name: str,
    frame_a: str,
    point_a: ArrayLike,
    frame_b: str | None = None,
    point_b: ArrayLike = (0.0, 0.0, 0.0),
    *,
    directions: ArrayLike | None = None,
) -> LoopConstraint:
    """Point-on-point closure: point_a of frame_a coincides with point_b of frame_b.

    Args:
        name: constraint name.
        frame_a, frame_b: link frames (frame_b None: the world).
        point_a, point_b: points in their frames' coordinates, (3,) [m].
        directions: base-frame directions to constrain, (k, 3), default all three.
    """
    if directions is None:
        d = np.eye(3)
    else:
        d = np.atleast_2d(np.asarray(directions, dtype=float))
        if d.ndim != 2 or d.shape[1] != 3 or not 1 <= d.shape[0] <= 3 or not np.all(np.isfinite(d)):
            raise InputError(f"constraint {name!r}: directions must be 1 to 3 vectors of 3 numbers")
        d = d / np.linalg.norm(d, axis=1, keepdims=True)
    return LoopConstraint(name, "point", frame_a, _vec3(point_a, f"{name}.point_a"), frame_b,
                          _vec3(point_b, f"{name}.point_b"), d)


#: A spherical joint closes a loop with the point-on-point equations.
spherical_constraint = point_constraint


def universal_constraint(
    name: str,
    frame_a: str,
    point_a: ArrayLike,
    axis_a: ArrayLike,
    frame_b: str | None,
    point_b: ArrayLike,
    axis_b: ArrayLike,
) -> LoopConstraint:
    """Universal-joint closure: coincident points and orthogonal cross axes (4 equations).

    Args:
        axis_a: first cross axis, fixed in frame_a, (3,).
        axis_b: second cross axis, fixed in frame_b (world if frame_b is None), (3,).
    """
    ua, ub = _vec3(axis_a, f"{name}.axis_a"), _vec3(axis_b, f"{name}.axis_b")
    if np.linalg.norm(ua) < 1e-12 or np.linalg.norm(ub) < 1e-12:
        raise InputError(f"constraint {name!r}: universal-joint axes must be non-zero")
    return LoopConstraint(name, "universal", frame_a, _vec3(point_a, f"{name}.point_a"), frame_b,
                          _vec3(point_b, f"{name}.point_b"), np.eye(3),
                          ua / np.linalg.norm(ua), ub / np.linalg.norm(ub))


def fixed_point_constraint(name: str, frame: str, point: ArrayLike, world_point: ArrayLike) -> LoopConstraint:
    """A point of a link held at a fixed world position (a foot on the ground), 3 equations."""
    return point_constraint(name, frame, point, None, world_point)


class LoopTree(Protocol):
    """What the loop kinematics read of a closed-chain mechanism (tree coordinates).

    Attributes:
        tree: the spanning tree.
        constraints: the loop closures.
        independent: indices of the independent coordinates, (n,).
        q_reference: tree configuration the position solver starts from, (nq,).
        nq: number of tree coordinates.
        nc: number of scalar constraint equations.
        coordinate_names: names of the independent coordinates, (n,).
    """

    @property
    def tree(self) -> RobotModel: ...

    @property
    def constraints(self) -> tuple[LoopConstraint, ...]: ...

    @property
    def independent(self) -> tuple[int, ...]: ...

    @property
    def q_reference(self) -> Array: ...

    @property
    def nq(self) -> int: ...

    @property
    def nc(self) -> int: ...

    @property
    def coordinate_names(self) -> tuple[str, ...]: ...
