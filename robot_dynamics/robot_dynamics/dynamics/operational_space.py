"""The operational space of one frame (Khatib 1987): the task inertia, the dynamically consistent
inverse of the Jacobian and the null-space projector of the torques.

With A = A(q) the joint-space inertia matrix (:func:`robot_dynamics.crba`) and J the task rows of
the frame's geometric Jacobian (:func:`robot_dynamics.jacobian`, rows [linear; angular] among
[x, y, z, rx, ry, rz]):

* ``Lambda = (J A^-1 J^T)^-1``, the task inertia [kg on translation rows, kg m^2 on rotation rows,
  kg m between them]: the force at the frame that gives it a unit acceleration;
* ``J_bar = A^-1 J^T Lambda``, the dynamically consistent generalized inverse (nq, r);
* ``N = 1 - J^T J_bar^T``, the null-space projector of the torques (nq, nq): a torque ``N tau0``
  accelerates no task coordinate (``J A^-1 N = 0``), ``N N = N``, and ``N^T`` projects joint
  velocities onto those that move no task coordinate (``J N^T = 0``).

The engine's ``rd_task_space`` (src/engine/task_space.c) computes them from Cholesky factors, of A
and of ``J A^-1 J^T`` (r x r): no inverse of A is formed. Near a singular pose the damped variant
``Lambda = (J A^-1 J^T + damping^2 1)^-1`` stays bounded (``damping^2`` in [1/kg] on translation
rows and [1/(kg m^2)] on rotation rows, one number for both); the identities above then hold to
O(damping^2 |Lambda|). Without damping, rows that lose rank raise SingularityError.

Every function takes leading batch dimensions: ``q`` of shape (..., nq).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import engine
from ..errors import InputError
from ..kinematics import reference_axes, task_row_mask
from ..model.robot_model import RobotModel

__all__ = ["OperationalSpace", "operational_space", "task_inertia", "dynamically_consistent_inverse", "null_space_projector"]

Array = NDArray[np.float64]


class OperationalSpace(NamedTuple):
    """The operational-space quantities of one frame at q (batch shape ``...``, r task rows).

    Attributes:
        J: the task rows of the frame Jacobian, (..., r, nq).
        Lambda: the task inertia (J A^-1 J^T)^-1, (..., r, r) [kg, kg m, kg m^2].
        J_bar: the dynamically consistent inverse A^-1 J^T Lambda, (..., nq, r).
        N: the null-space projector of the torques 1 - J^T J_bar^T, (..., nq, nq).
    """

    J: Array
    Lambda: Array
    J_bar: Array
    N: Array


def _damping(damping: object) -> float:
    if isinstance(damping, bool) or not isinstance(damping, (int, float, np.integer, np.floating)) or not (
            0.0 <= float(damping) < math.inf):
        raise InputError(f"damping: expected a finite number >= 0 (lambda of (J A^-1 J^T + lambda^2 1)^-1), got {damping!r}")
    return float(damping)


def _compute(model: RobotModel, q: ArrayLike, frame: str | None, reference: str, rows: object, damping: object,
             want: tuple[str, ...], what: str) -> list[Array]:
    """The engine's outputs ``want`` (of "J", "Lambda", "Jbar", "N"), the rows in the order asked."""
    k = model.frame_index(frame or model.end_effector)
    mask, order = task_row_mask(rows)
    out = engine.task_space(model, q, None, k, reference_axes(reference), mask, _damping(damping), want, what)
    if order is None:
        return out
    permuted = []
    for name, x in zip(want, out):
        if name == "J":
            x = x[..., order, :]
        elif name == "Lambda":
            x = x[..., order, :][..., order]
        elif name == "Jbar":
            x = x[..., order]
        permuted.append(x)
    return permuted


def operational_space(model: RobotModel, q: ArrayLike, frame: str | None = None, *, reference: str = "local_world_aligned",
                      rows: object = None, damping: float = 0.0) -> OperationalSpace:
    """J, Lambda, J_bar and N of a frame at q (see :class:`OperationalSpace`), from one A(q).

    Args:
        model: the robot.
        q: joint positions, (..., nq) [rad or m].
        frame: the task frame (default ``model.end_effector``).
        reference: the task's axes: ``"local_world_aligned"`` (the base frame's axes at the frame's
            origin, as :func:`robot_dynamics.jacobian`) or ``"local"`` (the frame's own axes).
        rows: the task rows, distinct indices into [x, y, z, rx, ry, rz] in the order wanted
            (e.g. ``(0, 1, 2)``: the position only); None: all six.
        damping: lambda >= 0 of the damped task inertia (J A^-1 J^T + lambda^2 1)^-1; 0: exact.

    Raises:
        SingularityError: the task rows lose rank (a singular pose, a frame no joint moves) and
            damping is 0; or A is not positive definite.
        InputError: a bad state, reference, rows or damping (named).
    """
    J, Lambda, Jbar, N = _compute(model, q, frame, reference, rows, damping, ("J", "Lambda", "Jbar", "N"),
                                  "operational_space")
    return OperationalSpace(J, Lambda, Jbar, N)


def task_inertia(model: RobotModel, q: ArrayLike, frame: str | None = None, *, reference: str = "local_world_aligned",
                 rows: object = None, damping: float = 0.0) -> Array:
    """The task inertia Lambda = (J A^-1 J^T)^-1 of a frame, (..., r, r) [kg, kg m, kg m^2].

    Arguments as :func:`operational_space`; r = len(rows) (6 by default).
    """
    return _compute(model, q, frame, reference, rows, damping, ("Lambda",), "task_inertia")[0]


def dynamically_consistent_inverse(model: RobotModel, q: ArrayLike, frame: str | None = None, *,
                                   reference: str = "local_world_aligned", rows: object = None,
                                   damping: float = 0.0) -> Array:
    """J_bar = A^-1 J^T Lambda, (..., nq, r): the generalized inverse of J (J J_bar = 1) that
    minimises the kinetic energy. Arguments as :func:`operational_space`."""
    return _compute(model, q, frame, reference, rows, damping, ("Jbar",), "dynamically_consistent_inverse")[0]


def null_space_projector(model: RobotModel, q: ArrayLike, frame: str | None = None, *, rows: object = None,
                         damping: float = 0.0) -> Array:
    """N = 1 - J^T J_bar^T, (..., nq, nq): the torques ``N tau0`` give the task no acceleration
    (J A^-1 N = 0); the same in either reference. Arguments as :func:`operational_space`."""
    return _compute(model, q, frame, "local_world_aligned", rows, damping, ("N",), "null_space_projector")[0]
