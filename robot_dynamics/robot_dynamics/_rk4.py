"""The classical fourth-order Runge-Kutta step, written once for every fixed-step integration.

The simulation's plant and the simulator node (robot_dynamics.simulation), the closed chains
(robot_dynamics.closedchain.general) and the quadruped (robot_dynamics.closedchain.quadruped_sim)
step with :func:`rk4_step`; the compiled loop's ``rd_plant_rk4`` (src/engine/plant.c) takes the
same stages in the same order, so the two agree to the last bits on the same derivatives.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]

__all__ = ["rk4_step"]


def rk4_step(f: Callable[..., Array], x: Array, h: float, k1: Array | None = None, *, t: float | None = None) -> Array:
    """One classical Runge-Kutta step of ``xdot = f(x)`` over ``h``.

    Args:
        f: the derivative, ``f(x)``, or ``f(t, x)`` when ``t`` is given (a time-varying system:
            called at ``t``, ``t + h/2`` and ``t + h``); an array shaped like ``x``.
        x: the state.
        h: the step [s].
        k1: the derivative at the start of the step when the caller has it already.
        t: the time at the start of the step [s].

    Returns:
        The state after the step.
    """
    if t is None:
        k1 = f(x) if k1 is None else k1
        k2 = f(x + 0.5 * h * k1)
        k3 = f(x + 0.5 * h * k2)
        k4 = f(x + h * k3)
    else:
        k1 = f(t, x) if k1 is None else k1
        k2 = f(t + 0.5 * h, x + 0.5 * h * k1)
        k3 = f(t + 0.5 * h, x + 0.5 * h * k2)
        k4 = f(t + h, x + h * k3)
    return x + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
