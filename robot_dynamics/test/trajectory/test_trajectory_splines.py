"""Multi-point trajectories: cubic/quintic splines (against SciPy), trigonometric splines
(Lopes, section 5), minimum-time scaling through via points."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.interpolate import CubicSpline, make_interp_spline

from robot_dynamics import InputError, UnknownNameError
from robot_dynamics import trajectory as tr


def _random_points(seed: int, m: int = 4, n: int = 3):
    rng = np.random.default_rng(seed)
    return rng.uniform(-2, 2, (m + 1, n)), rng.uniform(0.3, 2.0, m)


@pytest.mark.parametrize("seed", range(3))
def test_polynomial_splines_match_scipy(seed):
    P, h = _random_points(seed)
    x = np.concatenate([[0.0], np.cumsum(h)])
    t = np.linspace(0, x[-1], 501)
    cubic = tr.PolynomialSpline(P, h, 3)
    ref3 = CubicSpline(x, P, bc_type="clamped")
    quintic = tr.PolynomialSpline(P, h, 5)
    zero = np.zeros(P.shape[1])
    ref5 = make_interp_spline(x, P, k=5, bc_type=([(1, zero), (2, zero)], [(1, zero), (2, zero)]))
    for ours, ref in ((cubic, ref3), (quintic, ref5)):
        q, qd, qdd = ours.sample(t)
        np.testing.assert_allclose(q, ref(t), atol=1e-12)
        np.testing.assert_allclose(qd, ref(t, 1), atol=1e-11)
        np.testing.assert_allclose(qdd, ref(t, 2), atol=1e-10)
        np.testing.assert_array_equal(ours.position(x[-1]), P[-1])
        np.testing.assert_allclose(ours.sample(x)[0], P, atol=1e-13)  # through every via point
    # quintic: at rest with zero acceleration at both ends
    _, qd, qdd = quintic.sample(np.array([0.0, x[-1]]))
    np.testing.assert_allclose(qd, 0.0, atol=1e-12)
    np.testing.assert_allclose(qdd, 0.0, atol=1e-11)


def _trig_basis(theta, d):
    """Independent basis [1, cos, sin, cos 2, sin 2, cos 3, sin 3] and its d-th derivative."""
    cols = [np.full_like(theta, 1.0 if d == 0 else 0.0)]
    for k in (1, 2, 3):
        c, s = np.cos(k * theta), np.sin(k * theta)
        # derivatives cycle cos -> -sin -> -cos -> sin
        cyc_c = [c, -s, -c, s][d % 4]
        cyc_s = [s, c, -s, -c][d % 4]
        cols += [k**d * cyc_c, k**d * cyc_s]
    return np.stack(cols, -1)


def test_trigonometric_spline_is_a_minimum_jerk_third_order_trigonometric_polynomial():
    P, h = _random_points(7, m=3, n=2)
    V = np.random.default_rng(3).normal(size=P.shape)
    A = np.random.default_rng(4).normal(size=P.shape)
    spline = tr.trigonometric_spline(P, h, V, A)
    knots = np.concatenate([[0.0], np.cumsum(h)])
    # the via-point positions, velocities and accelerations are met exactly, from both sides
    for k, tk in enumerate(knots):
        for side in ([tk] if k in (0, len(h)) else [np.nextafter(tk, -1), tk]):
            q, qd, qdd = spline.sample(side)
            np.testing.assert_allclose(q, P[k], atol=1e-12)
            np.testing.assert_allclose(qd, V[k], atol=1e-9)
            np.testing.assert_allclose(qdd, A[k], atol=1e-8)
    x, w = np.polynomial.legendre.leggauss(40)
    theta_q = (x + 1) * np.pi / 4
    for i in range(len(h)):
        # each segment is a trigonometric polynomial of order 3 in theta = (pi/2)(t - t_i)/h_i
        theta = np.linspace(0, np.pi / 2, 60)
        q = spline.position(knots[i] + theta / (np.pi / 2) * h[i])
        basis = _trig_basis(theta, 0)
        c, *_ = np.linalg.lstsq(basis, q, rcond=None)
        np.testing.assert_allclose(basis @ c, q, atol=1e-11)
        # and the free 7th coefficient minimises int |H'''|^2: moving along the null space of
        # the six end conditions only increases it
        C = np.vstack([_trig_basis(np.array([th]), d) for th in (0.0, np.pi / 2) for d in (0, 1, 2)])
        z = np.linalg.svd(C)[2][-1]
        assert np.abs(C @ z).max() < 1e-12

        def jerk_cost(coef):
            return np.sum(w[:, None] * (_trig_basis(theta_q, 3) @ coef) ** 2, axis=0)

        base = jerk_cost(c)
        for eps in (1e-3, -1e-3, 0.1, -0.1):
            assert np.all(jerk_cost(c + eps * z[:, None]) > base)


def test_lopes_task_space_test_trajectory():
    """The Stewart platform test motion (Lopes section 5): P1 -> P2 -> P1, smooth and at rest."""
    P1 = np.array([0.0, 0.0, 2.0, 0.0, 0.0, 0.0])  # m and rad
    P2 = np.array([-0.1, -0.2, 2.5, np.radians(15), np.radians(-15), np.radians(15)])
    spline = tr.trigonometric_spline([P1, P2, P1], [2.0, 2.0])
    assert spline.duration == 4.0
    t = np.linspace(0, 4, 4001)
    q, qd, qdd = spline.sample(t)
    np.testing.assert_allclose(q[0], P1, atol=1e-14)
    np.testing.assert_allclose(q[2000], P2, atol=1e-13)
    np.testing.assert_array_equal(q[-1], P1)
    for k in (0, 2000, 4000):  # at rest at the three points (by symmetry at P2)
        np.testing.assert_allclose(qd[k], 0.0, atol=1e-12)
    np.testing.assert_allclose(qdd[[0, -1]], 0.0, atol=1e-12)
    np.testing.assert_allclose(q, q[::-1], atol=1e-12)  # the return is the mirror of the way out
    # continuity: no step in velocity or acceleration anywhere (C2)
    dt = t[1] - t[0]
    assert np.max(np.abs(np.diff(qd, axis=0))) < 2 * dt * np.max(np.abs(qdd))
    jerk = np.diff(qdd, axis=0) / dt
    assert np.max(np.abs(jerk)) < 20 * np.max(np.abs(qdd))


@pytest.mark.parametrize("kind", tr.SPLINES)
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(1, 4))
def test_minimum_time_splines_meet_and_reach_the_limits(kind, seed, m):
    rng = np.random.default_rng(seed)
    n = 3
    P = rng.uniform(-2, 2, (m + 1, n))
    kv = rng.uniform(0.3, 3.0, n)
    ka = rng.uniform(0.5, 10.0, n)
    spline = tr.spline_through(kind, P, velocity_limit=kv, acceleration_limit=ka)
    vpk, apk = spline.peak_values()
    ratio = np.concatenate([vpk / kv, apk / ka])
    assert np.all(ratio <= 1 + 1e-9)
    assert np.max(ratio) >= 1 - 1e-9
    # the peaks are the true maxima: a dense sampling never exceeds them
    t = np.linspace(0, spline.duration, 20001)
    _, qd, qdd = spline.sample(t)
    assert np.all(np.max(np.abs(qd), axis=0) <= vpk * (1 + 1e-9) + 1e-12)
    assert np.all(np.max(np.abs(qdd), axis=0) <= apk * (1 + 1e-9) + 1e-12)
    np.testing.assert_allclose(spline.sample(spline.knots)[0], P, atol=1e-11)
    # integral of the velocity is the displacement
    integral = np.sum(0.5 * (qd[1:] + qd[:-1]), axis=0) * (t[1] - t[0])
    np.testing.assert_allclose(integral, P[-1] - P[0], atol=1e-6)


def test_spline_input_errors():
    P = np.zeros((3, 2))
    with pytest.raises(InputError, match="all via points are equal"):
        tr.spline_through("cubic_spline", P, velocity_limit=1.0)
    still = tr.spline_through("quintic_spline", P, durations=[1.0, 1.0])  # a pause is fine
    assert still.duration == 2.0 and np.all(still.sample(np.linspace(0, 2, 5))[1] == 0)
    with pytest.raises(InputError, match="NaN"):
        tr.spline_through("cubic_spline", [[0.0], [np.nan]], durations=[1.0])
    with pytest.raises(InputError, match="2 segment durations"):
        tr.spline_through("cubic_spline", P, durations=[1.0, 1.0, 1.0])
    with pytest.raises(InputError, match="duration > 0"):
        tr.spline_through("trigonometric_spline", P, durations=[1.0, 0.0])
    with pytest.raises(InputError, match="at least 2 points"):
        tr.spline_through("cubic_spline", [[1.0, 2.0]], durations=[1.0])
    with pytest.raises(InputError, match="limits"):
        tr.spline_through("cubic_spline", [[0.0], [1.0]])
    with pytest.raises(InputError, match="limit"):
        tr.spline_through("cubic_spline", [[0.0], [1.0]], velocity_limit=-1.0)
    with pytest.raises(InputError, match=r"shape \(3, 2\)"):
        tr.trigonometric_spline(np.ones((3, 2)), [1.0, 1.0], velocities=np.zeros((2, 2)))
    with pytest.raises(UnknownNameError, match="Valid splines"):
        tr.spline_through("bezier", P, durations=[1.0, 1.0])
