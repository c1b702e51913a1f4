"""Spatial algebra and the conventions, pinned (including the conversion to Pinocchio's order)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from robot_dynamics import conventions, spatial

finite = st.floats(-3.0, 3.0, allow_nan=False)
vec3 = arrays(np.float64, 3, elements=finite)
vec6 = arrays(np.float64, 6, elements=finite)


@pytest.fixture(scope="module")
def pin():
    # imported in the test, not the module: launch_testing's pytest plugin imports every test
    # module under `colcon test` and stops the session on any import error
    return pytest.importorskip("pinocchio")


def test_gravity_default_points_down_z():
    assert conventions.GRAVITY == (0.0, 0.0, -9.81)


@settings(max_examples=40, deadline=None)
@given(vec3, vec3)
def test_cross_and_skew_agree_with_numpy(a, b):
    np.testing.assert_allclose(spatial.cross(a, b), np.cross(a, b), atol=1e-12)
    np.testing.assert_allclose(spatial.skew(a) @ b, np.cross(a, b), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(vec3)
def test_rpy_round_trip_and_urdf_order(pin, rpy):
    R = spatial.rpy_to_matrix(rpy)
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(spatial.rpy_to_matrix(spatial.matrix_to_rpy(R)), R, atol=1e-9)
    # URDF: fixed axes X then Y then Z, i.e. R = Rz(yaw) Ry(pitch) Rx(roll) (Pinocchio's rpyToMatrix)
    np.testing.assert_allclose(R, pin.rpy.rpyToMatrix(*rpy), atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, 3, elements=st.floats(-3.1, 3.1)))
def test_exp_log_so3(pin, w):
    R = spatial.exp_so3(w)
    np.testing.assert_allclose(R, pin.exp3(w), atol=1e-12)
    np.testing.assert_allclose(spatial.exp_so3(spatial.log_so3(R)), R, atol=1e-9)


def test_log_so3_near_pi():
    axis = np.array([1.0, 2.0, -0.5]) / np.linalg.norm([1.0, 2.0, -0.5])
    for angle in (np.pi - 1e-7, np.pi):
        R = spatial.rotation_about_axis(axis, angle)
        np.testing.assert_allclose(spatial.exp_so3(spatial.log_so3(R)), R, atol=1e-7)


@settings(max_examples=30, deadline=None)
@given(vec3, vec3, vec6, vec6)
def test_motion_and_force_transforms_are_dual(rpy, r, m, f):
    E = spatial.rpy_to_matrix(rpy)
    X = spatial.plucker(E, r)
    np.testing.assert_allclose(spatial.transform_motion(E, r, m), X @ m, atol=1e-12)
    np.testing.assert_allclose(spatial.inverse_transform_motion(E, r, X @ m), m, atol=1e-10)
    np.testing.assert_allclose(spatial.transform_force_to_parent(E, r, f), X.T @ f, atol=1e-12)
    # power is frame invariant: (X m) . (X^-T f) = m . f
    np.testing.assert_allclose((X @ m) @ np.linalg.solve(X.T, f), m @ f, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(vec6, vec6)
def test_cross_products(v, m):
    np.testing.assert_allclose(spatial.crm(v, m), spatial.crm_matrix(v) @ m, atol=1e-12)
    np.testing.assert_allclose(spatial.crf(v, m), spatial.crf_matrix(v) @ m, atol=1e-12)
    np.testing.assert_allclose(spatial.crf_matrix(v), -spatial.crm_matrix(v).T, atol=0)


def test_featherstone_order_vs_pinocchio_order(pin):
    """Ours: [angular; linear]; Pinocchio: [linear; angular]. swap_halves converts."""
    rng = np.random.default_rng(0)
    E = spatial.rpy_to_matrix(rng.normal(size=3))
    r = rng.normal(size=3)
    m = rng.normal(size=6)
    # Pinocchio's SE3 (R, p) acting on motions maps child coordinates to parent coordinates;
    # our (E, r) maps parent to child with E = R^T, r = p.
    M = pin.SE3(E.T, r)
    ours = spatial.inverse_transform_motion(E, r, m)  # child -> parent
    theirs = M.act(pin.Motion(conventions.swap_halves(m))).vector
    np.testing.assert_allclose(conventions.swap_halves(ours), theirs, atol=1e-12)
    mass, com, I = 2.5, rng.normal(size=3), np.diag([0.1, 0.2, 0.25])
    I6 = spatial.spatial_inertia(mass, com, I)
    np.testing.assert_allclose(conventions.swap_halves(conventions.swap_halves(I6).T).T, pin.Inertia(mass, com, I).matrix(), atol=1e-12)


def test_swap_halves_rejects_other_shapes():
    with pytest.raises(ValueError, match="6-vector"):
        conventions.swap_halves(np.zeros(5))


def test_rpy_rate_matrix_gives_the_angular_velocity():
    """omega = E(rpy) rpy_dot, with [omega]x = Rdot R^T (central differences), and Edot."""
    rng = np.random.default_rng(4)
    for _ in range(10):
        rpy, rpy_dot = rng.uniform(-1.2, 1.2, 3), rng.normal(size=3)
        h = 1e-6
        Rdot = (spatial.rpy_to_matrix(rpy + h * rpy_dot) - spatial.rpy_to_matrix(rpy - h * rpy_dot)) / (2 * h)
        W = Rdot @ spatial.rpy_to_matrix(rpy).T
        omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
        np.testing.assert_allclose(spatial.rpy_rate_matrix(rpy) @ rpy_dot, omega, atol=1e-8)
        Edot = (spatial.rpy_rate_matrix(rpy + h * rpy_dot) - spatial.rpy_rate_matrix(rpy - h * rpy_dot)) / (2 * h)
        np.testing.assert_allclose(spatial.rpy_rate_matrix_dot(rpy, rpy_dot), Edot, atol=1e-8)
