"""Identities that cannot be faked: M SPD, M from rnea, aba undoes rnea, Mdot - 2C skew,
energy conservation, power balance, J^T f for a tool wrench, batch = loop."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import frictionless, random_state
from scipy.integrate import solve_ivp

import robot_dynamics as rd


def test_mass_matrix_symmetric_positive_definite(bundled, rng):
    q, _, _ = random_state(bundled, rng, (20,))
    M = rd.crba(bundled, q)
    np.testing.assert_allclose(M, np.swapaxes(M, -1, -2), atol=1e-12)
    assert np.all(np.linalg.eigvalsh(M) > 0)


def test_mass_matrix_rebuilt_from_rnea_columns(bundled, random_tree, rng):
    for model in (bundled, random_tree):
        q, _, _ = random_state(model, rng)
        g = rd.gravity_torques(model, q)
        zero = np.zeros(model.nq)
        cols = [rd.rnea(model, q, zero, e, friction=False) - g for e in np.eye(model.nq)]
        np.testing.assert_allclose(np.stack(cols, 1), rd.crba(model, q), atol=1e-11)


def test_aba_undoes_rnea_with_friction_and_rotors(bundled, random_tree, rng):
    for model in (bundled, random_tree):
        q, qd, qdd = random_state(model, rng, (30,))
        tau = rd.rnea(model, q, qd, qdd)  # friction and rotor inertia included
        np.testing.assert_allclose(rd.aba(model, q, qd, tau), qdd, rtol=1e-9, atol=1e-9)


def test_coriolis_skew_symmetry_and_bias(bundled, random_tree, rng):
    """Mdot - 2C is skew-symmetric (Mdot by central differences) and C qd + Q = rnea(q, qd, 0)."""
    for model in (bundled, random_tree):
        q, qd, _ = random_state(model, rng)
        C = rd.coriolis_matrix(model, q, qd)
        h = rd.rnea(model, q, qd, np.zeros(model.nq), friction=False)
        np.testing.assert_allclose(C @ qd + rd.gravity_torques(model, q), h, atol=1e-10)
        eps = 1e-6
        Mdot = (rd.crba(model, q + eps * qd) - rd.crba(model, q - eps * qd)) / (2 * eps)
        S = Mdot - 2 * C
        scale = max(1.0, np.abs(Mdot).max())
        assert np.abs(S + S.T).max() < 1e-7 * scale


def test_coriolis_matrix_is_the_christoffel_one(rng):
    """C_ij = sum_k c_ijk qd_k with c_ijk from dM/dq by finite differences (Khalil [7.7])."""
    model = rd.load_robot("rx90")
    q, qd, _ = random_state(model, rng)
    n, eps = model.nq, 1e-6
    dM = np.stack([(rd.crba(model, q + eps * e) - rd.crba(model, q - eps * e)) / (2 * eps) for e in np.eye(n)], -1)
    c = 0.5 * (dM + np.transpose(dM, (0, 2, 1)) - np.transpose(dM, (2, 1, 0)))  # c[i, j, k]
    np.testing.assert_allclose(rd.coriolis_matrix(model, q, qd), c @ qd, atol=1e-7)


@pytest.mark.parametrize("name", ["puma560", "iiwa14"])
def test_energy_conserved_in_unforced_frictionless_motion(name):
    model = frictionless(rd.load_robot(name))
    rng = np.random.default_rng(5)
    q0, qd0, _ = random_state(model, rng)
    zero = np.zeros(model.nq)

    def f(_t, x):
        q, qd = x[: model.nq], x[model.nq :]
        return np.concatenate([qd, rd.aba(model, q, qd, zero)])

    sol = solve_ivp(f, (0.0, 2.0), np.concatenate([q0, qd0]), method="DOP853", rtol=1e-11, atol=1e-11, dense_output=False, t_eval=np.linspace(0, 2, 41))
    assert sol.success
    qs, qds = sol.y[: model.nq].T, sol.y[model.nq :].T
    E = rd.mechanical_energy(model, qs, qds)
    T0 = rd.kinetic_energy(model, q0, qd0)
    assert np.abs(E - E[0]).max() < 1e-6 * max(abs(E[0]), T0)
    assert np.ptp(rd.kinetic_energy(model, qs, qds)) > 1e-2 * T0  # energy really moved around


def test_power_balance(bundled, rng):
    """tau . qd = dE/dt along a motion (frictionless), dE/dt by central differences in time."""
    model = frictionless(bundled)
    q, qd, qdd = random_state(model, rng)
    tau = rd.rnea(model, q, qd, qdd)
    dt = 1e-6

    def energy(t):
        qt = q + qd * t + 0.5 * qdd * t**2
        return rd.mechanical_energy(model, qt, qd + qdd * t)

    dEdt = (energy(dt) - energy(-dt)) / (2 * dt)
    assert abs(tau @ qd - dEdt) < 1e-6 * max(1.0, abs(tau @ qd))


def test_potential_energy_gradient_is_gravity_torque(bundled, rng):
    q, _, _ = random_state(bundled, rng)
    eps = 1e-6
    grad = [(rd.potential_energy(bundled, q + eps * e) - rd.potential_energy(bundled, q - eps * e)) / (2 * eps) for e in np.eye(bundled.nq)]
    np.testing.assert_allclose(grad, rd.gravity_torques(bundled, q), atol=1e-6)


def test_tool_wrench_adds_jacobian_transpose(bundled, rng):
    q, qd, qdd = random_state(bundled, rng, (8,))
    w = rng.normal(size=(8, 6)) * [10, 10, 10, 1, 1, 1]
    tool = bundled.end_effector
    tau_w = rd.rnea(bundled, q, qd, qdd, f_ext={tool: w})
    J = rd.jacobian(bundled, q, tool)
    expected = rd.rnea(bundled, q, qd, qdd) + (np.swapaxes(J, -1, -2) @ w[..., None])[..., 0]
    np.testing.assert_allclose(tau_w, expected, atol=1e-10)
    # and aba with the same wrench gives back qdd
    np.testing.assert_allclose(rd.aba(bundled, q, qd, tau_w, f_ext={tool: w}), qdd, atol=1e-9)


def test_jacobian_and_jdot_qdot_by_finite_differences(bundled, random_tree, rng):
    from robot_dynamics.spatial import log_so3

    for model in (bundled, random_tree):
        frame = model.end_effector
        q, qd, _ = random_state(model, rng)
        J = rd.jacobian(model, q, frame)
        eps = 1e-6
        Tp, Tm = rd.frame_pose(model, q + eps * qd, frame), rd.frame_pose(model, q - eps * qd, frame)
        v = (Tp[:3, 3] - Tm[:3, 3]) / (2 * eps)
        w = log_so3(Tp[:3, :3] @ Tm[:3, :3].T) / (2 * eps)
        np.testing.assert_allclose(J @ qd, np.concatenate([v, w]), atol=1e-7)
        np.testing.assert_allclose(rd.frame_velocity(model, q, qd, frame), J @ qd, atol=1e-12)
        # d/dt (J qd) at qdd = 0 along q(t) = q + qd t
        Jd = (rd.jacobian(model, q + eps * qd, frame) - rd.jacobian(model, q - eps * qd, frame)) / (2 * eps)
        np.testing.assert_allclose(rd.jacobian_dot_qdot(model, q, qd, frame), Jd @ qd, atol=1e-6)


@pytest.mark.parametrize("shape", [(), (5,), (3, 4)])
def test_batch_equals_loop_of_single_calls(shape):
    model = rd.load_robot("puma560")
    rng = np.random.default_rng(9)
    q, qd, qdd = random_state(model, rng, shape)
    tau = rd.rnea(model, q, qd, qdd)
    M = rd.crba(model, q)
    qdd2 = rd.aba(model, q, qd, tau)
    C = rd.coriolis_matrix(model, q, qd)
    E = rd.mechanical_energy(model, q, qd)
    J = rd.jacobian(model, q)
    assert tau.shape == shape + (6,) and M.shape == shape + (6, 6) and C.shape == shape + (6, 6)
    assert E.shape == shape and J.shape == shape + (6, 6)
    # the same numbers up to round-off (BLAS may sum a batch in another order than a single call)
    close = dict(rtol=1e-12, atol=1e-12)
    for idx in np.ndindex(*shape):
        np.testing.assert_allclose(tau[idx], rd.rnea(model, q[idx], qd[idx], qdd[idx]), **close)
        np.testing.assert_allclose(M[idx], rd.crba(model, q[idx]), **close)
        np.testing.assert_allclose(qdd2[idx], rd.aba(model, q[idx], qd[idx], tau[idx]), **close)
        np.testing.assert_allclose(C[idx], rd.coriolis_matrix(model, q[idx], qd[idx]), **close)
        np.testing.assert_allclose(E[idx], rd.mechanical_energy(model, q[idx], qd[idx]), **close)
        np.testing.assert_allclose(J[idx], rd.jacobian(model, q[idx]), **close)


def test_batch_shapes_broadcast():
    model = rd.load_robot("planar2")
    q = np.zeros((4, 2))
    tau = rd.rnea(model, q, np.zeros(2), np.ones((1, 2)))
    assert tau.shape == (4, 2)
    np.testing.assert_allclose(tau, np.broadcast_to(rd.rnea(model, q[0], np.zeros(2), np.ones(2)), (4, 2)))


def test_inverse_kinematics_reaches_a_reachable_pose(bundled, rng):
    q_true, _, _ = random_state(bundled, rng)
    q_true = 0.5 * q_true  # stay away from joint limits
    frame = bundled.end_effector
    target = rd.frame_pose(bundled, q_true, frame)
    res = rd.inverse_kinematics(bundled, target, frame, q0=q_true + 0.1)
    assert res.success, res
    np.testing.assert_allclose(rd.frame_pose(bundled, res.q, frame), target, atol=1e-8)


def test_inverse_kinematics_reports_unreachable_target():
    model = rd.load_robot("planar2")
    target = np.eye(4)
    target[:3, 3] = [2.0, 0.0, 0.0]  # the arm reaches 0.9 m
    res = rd.inverse_kinematics(model, target, position_only=True, max_iterations=100)
    assert not res.success and res.position_error > 1.0
    with pytest.raises(rd.SingularityError, match="did not converge"):
        rd.inverse_kinematics(model, target, position_only=True, max_iterations=50, raise_on_failure=True)
