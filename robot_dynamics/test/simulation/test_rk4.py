"""The one RK4 step (robot_dynamics._rk4), against exact solutions: autonomous and time-varying."""

import numpy as np
import pytest

from robot_dynamics._rk4 import rk4_step
from robot_dynamics.simulation import rk4_step as simulation_rk4_step


def test_the_simulation_exports_the_same_step():
    assert simulation_rk4_step is rk4_step


@pytest.mark.parametrize("h", [0.1, 0.05])
def test_a_harmonic_oscillator_has_the_fourth_order_local_error(h):
    # x = [q, qd], qdd = -q: one step from [1, 0] is [cos h, -sin h] up to the h^5/120 term
    def f(x):
        return np.array([x[1], -x[0]])

    x = rk4_step(f, np.array([1.0, 0.0]), h)
    err = np.abs(x - [np.cos(h), -np.sin(h)]).max()
    assert 0.2 * h**5 / 120 < err < 2 * h**5 / 120  # RK4's leading term, neither zero nor larger


def test_a_time_varying_system_is_exact_for_a_cubic_in_time():
    # xdot = 3 t^2 + 1 (RK4 is Simpson's rule here: exact for polynomials of degree 3)
    x = rk4_step(lambda t, x: np.array([3 * t**2 + 1.0]), np.array([2.0]), 0.5, t=1.0)
    assert x[0] == pytest.approx(2.0 + (1.5**3 - 1.0) + 0.5, abs=1e-15)


def test_a_known_first_stage_is_not_recomputed():
    calls = []

    def f(t, x):
        calls.append(t)
        return -x

    k1 = -np.ones(2)
    assert np.array_equal(rk4_step(f, np.ones(2), 0.2, k1, t=3.0), rk4_step(f, np.ones(2), 0.2, t=3.0))
    assert calls == [3.1, 3.1, 3.2, 3.0, 3.1, 3.1, 3.2]
