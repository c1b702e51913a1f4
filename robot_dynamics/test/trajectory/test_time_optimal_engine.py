"""The engine's pieces of time_optimal before the solve: the torque coefficients along a path
(rd_path_coefficients: rnea's at (q, 0, q') and (q, q', q'') without gravity and at (q, 0, 0) with
it, four points a call sharing their joint transforms) and a scipy PPoly's derivatives
(rd_ppoly_derivatives: PPoly's own evaluation), each against what it replaces, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import CubicSpline, PPoly

import robot_dynamics as rd
from robot_dynamics.engine import engine
from robot_dynamics.errors import InputError
from robot_dynamics.testing import random_tree_urdf
from robot_dynamics.trajectory import time_optimal

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
