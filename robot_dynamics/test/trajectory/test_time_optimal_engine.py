"""The engine's pieces of time_optimal before the solve: the torque coefficients along a path
(rd_path_coefficients: rnea's at (q, 0, q') and (q, q', q'') without gravity and at (q, 0, 0) with
it, four points a call sharing their joint transforms) and a scipy PPoly's derivatives
(rd_ppoly_derivatives: PPoly's own evaluation), each against what it replaces, bit for bit; and the
spline through waypoints (rd_spline_through) against scipy's CubicSpline and an exact solve."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import CubicSpline, PPoly

import robot_dynamics as rd
from robot_dynamics.engine import engine
from robot_dynamics.errors import InputError
from robot_dynamics.testing import random_tree_urdf
from robot_dynamics.trajectory import path_through, time_optimal

ROBOTS = ["puma560", "iiwa14", "rx90", "planar2", "three_dof_geared"]


def _models():
    for name in ROBOTS:
        yield name, rd.load_robot(name)
    for seed in (3, 8):  # prismatic, massless and mimic joints
        yield f"random tree {seed}", rd.load_urdf(random_tree_urdf(np.random.default_rng(seed), 9, mimic=True))


MODELS = list(_models())


@pytest.mark.parametrize("name, model", MODELS, ids=[n for n, _ in MODELS])
def test_path_coefficients_equal_three_rnea_calls(name, model, threads):
    rng = np.random.default_rng(len(name))
    gravity = np.array([0.3, -1.2, -9.81])
    for n in (1, 3, 4, 7, 203):  # remainders of the four-point calls, and chunks over threads
        q, dq, ddq = rng.uniform(-1.5, 1.5, (3, n, model.nq))
        a, b, g = np.full((3, n, model.nq), np.nan)
        assert engine().path_coefficients(model.engine_model, q, dq, ddq, gravity, a, b, g) == 0
        zero = np.zeros_like(q)
        assert np.array_equal(a, rd.rnea(model, q, zero, dq, np.zeros(3), friction=False)), (name, n)
        assert np.array_equal(b, rd.rnea(model, q, dq, ddq, np.zeros(3), friction=False)), (name, n)
        assert np.array_equal(g, rd.rnea(model, q, zero, zero, gravity, friction=False)), (name, n)
        # and the physics: tau = a u + b x + g is the inverse dynamics of the timed path
        u, x = 0.7, 1.9
        tau = rd.rnea(model, q, dq * np.sqrt(x), dq * u + ddq * x, gravity, friction=False)
        np.testing.assert_allclose(a * u + b * x + g, tau, rtol=1e-12, atol=1e-9)


def test_path_coefficients_flag_a_result_that_is_not_finite():
    model = rd.load_robot("puma560")
    q = np.zeros((5, 6))
    dq = np.zeros((5, 6))
    dq[4, 1] = 1e200  # the remainder's velocity product overflows
    out = np.empty((3, 5, 6))
    assert engine().path_coefficients(model.engine_model, q, dq, q, np.zeros(3), out[0], out[1], out[2]) != 0


def test_ppoly_derivatives_equal_scipys_evaluation():
    rng = np.random.default_rng(2)
    s = np.r_[np.linspace(0.0, 1.0, 1001), 1.0]
    for order, pieces in ((4, 1), (4, 5), (2, 3), (6, 4), (1, 2)):
        x = np.r_[0.0, np.sort(rng.uniform(0.0, 1.0, pieces - 1)), 1.0]
        pp = PPoly(rng.uniform(-3.0, 3.0, (order, pieces, 4)), x)
        out = np.empty((3, s.size, 4))
        assert engine().ppoly_derivatives(pp.x, pp.c, s, out[0], out[1], out[2]) == -1
        for nu in (0, 1, 2):
            assert np.array_equal(out[nu], pp(s, nu)), (order, pieces, nu)
    pp.c[0, 1, 2] = np.inf
    assert engine().ppoly_derivatives(pp.x, pp.c, s, out[0], out[1], out[2]) == 0


def test_a_spline_path_and_the_same_path_as_a_plain_callable_time_alike():
    # the engine evaluates a CubicSpline itself; any other callable is called: the same timing
    model = rd.load_robot("iiwa14")
    rng = np.random.default_rng(5)
    spline = CubicSpline(np.r_[0.0, 0.3, 0.55, 1.0], rng.uniform(-1.5, 1.5, (4, model.nq)))
    fast = time_optimal(model, spline)

    class Plain:  # the spline behind a plain call, its knots where toppra's interpolators give theirs
        ss_waypoints = spline.x

        def __call__(self, s, order):
            return spline(s, order)

    plain = time_optimal(model, Plain())
    assert np.array_equal(fast.sd_grid, plain.sd_grid) and fast.duration == plain.duration
    # one that does not span [0, 1], or not along axis 0, is called as well
    short = CubicSpline(np.linspace(0.0, 0.9, 4), rng.uniform(-1.0, 1.0, (4, model.nq)))
    assert np.isfinite(time_optimal(model, short).duration)
    sideways = CubicSpline(np.linspace(0.0, 1.0, 4), rng.uniform(-1.0, 1.0, (model.nq, 4)), axis=1)
    with pytest.raises(InputError, match=r"shape \(len\(s\), 7\)"):
        time_optimal(model, sideways)
    bad = CubicSpline(np.linspace(0.0, 1.0, 4), rng.uniform(-1.0, 1.0, (4, model.nq)))
    bad.c[1, 1, 0] = np.nan
    with pytest.raises(InputError, match="derivative 0 is not finite"):
        time_optimal(model, bad)


def _chord(y: np.ndarray) -> np.ndarray:
    s = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(y, axis=0), axis=1))))
    return s / s[-1]


@pytest.mark.parametrize("K", [3, 4, 5, 9, 40])
def test_spline_through_is_scipys_not_a_knot_spline_on_the_chord_length(K):
    rng = np.random.default_rng(K)
    t = np.linspace(0.0, 1.0, 777)
    for nq in (1, 6, 7):
        y = rng.uniform(-3.0, 3.0, (K, nq))
        path = path_through(y)
        assert isinstance(path, PPoly)
        np.testing.assert_allclose(path.x, _chord(y), rtol=0, atol=2e-16)
        scipy = CubicSpline(_chord(y), y, bc_type="not-a-knot")
        scale = max(1.0, *(np.abs(scipy(t, order)).max() for order in (0, 1, 2)))  # a parabola's third is 0
        for order in (0, 1, 2, 3):
            assert np.abs(path(t, order) - scipy(t, order)).max() <= 1e-13 * scale, (K, nq, order)


def test_spline_through_pivots_on_graded_steps():
    """A step of 1e-6 beside steps of 1 (the end rows' pivots change): the slopes at the waypoints
    equal an exact solve of the same equations (Fractions) to round-off."""
    from fractions import Fraction as F

    rng = np.random.default_rng(2)
    for K in (4, 5, 8):
        y = rng.uniform(-3.0, 3.0, (K, 1))
        y[1] = y[0] + 1e-6
        s, c = np.empty(K), np.empty((4, K - 1, 1))
        assert engine().spline_through(y, s, c) == -1
        x, Y = [F(v) for v in s], [F(v) for v in y[:, 0]]
        h = [x[i + 1] - x[i] for i in range(K - 1)]
        m = [(Y[i + 1] - Y[i]) / h[i] for i in range(K - 1)]
        A = [[F(0)] * K for _ in range(K)]
        b = [F(0)] * K
        for i in range(1, K - 1):
            A[i][i - 1], A[i][i], A[i][i + 1] = h[i], 2 * (h[i - 1] + h[i]), h[i - 1]
            b[i] = 3 * (h[i] * m[i - 1] + h[i - 1] * m[i])
        w0, wl = x[2] - x[0], x[-1] - x[-3]
        A[0][0], A[0][1], b[0] = h[1], w0, ((h[0] + 2 * w0) * h[1] * m[0] + h[0] ** 2 * m[1]) / w0
        A[-1][-2], A[-1][-1], b[-1] = wl, h[-2], (h[-1] ** 2 * m[-2] + (2 * wl + h[-1]) * h[-2] * m[-1]) / wl
        for i in range(K):  # Gauss-Jordan in exact arithmetic
            p = next(r for r in range(i, K) if A[r][i] != 0)
            A[i], A[p], b[i], b[p] = A[p], A[i], b[p], b[i]
            for r in range(K):
                if r != i and A[r][i] != 0:
                    f = A[r][i] / A[i][i]
                    A[r] = [u - f * v for u, v in zip(A[r], A[i])]
                    b[r] -= f * b[i]
        exact = np.array([float(b[i] / A[i][i]) for i in range(K)])
        np.testing.assert_allclose(c[2, :, 0], exact[:-1], rtol=1e-13, atol=1e-13 * np.abs(exact).max())


def test_spline_through_names_equal_and_non_finite_waypoints():
    y = np.array([[0.0, 1.0], [0.5, 1.0], [0.5, 1.0], [1.0, 2.0]])
    with pytest.raises(InputError, match="waypoints: 1 and 2 are equal"):
        path_through(y)
    y[3, 1] = np.inf
    with pytest.raises(InputError, match="NaN or infinite"):
        path_through(y)
    with pytest.raises(InputError, match="0 and 1 are equal"):
        path_through(np.ones((2, 3)))
