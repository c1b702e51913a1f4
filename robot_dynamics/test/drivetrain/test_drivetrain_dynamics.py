"""Geared dynamics: diagonal-armature limit, identities, actuator space, power balance."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import robot_dynamics as rd
from robot_dynamics.drivetrain import (
    actuator_velocities,
    diagonal_armature_model,
    joint_torques_from_actuators,
    virtual_chain_model,
)
from robot_dynamics.testing import random_tree_urdf


def _rel(a, b):
    return np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)


@pytest.mark.parametrize("seed", range(2))
def test_rotors_on_the_base_with_diagonal_b_are_the_armature_of_khalil_7_29(seed):
    rng = np.random.default_rng(729 + seed)
    text = random_tree_urdf(rng, 6, n_fixed=1)
    plain = rd.load_urdf(text)
    N = rng.uniform(-80, 80, plain.nq)
    Jm = rng.uniform(1e-5, 5e-4, plain.nq)
    sec = {}
    for k, jn in enumerate(plain.joint_names):
        axis = rng.normal(size=3)
        sec[f"motor{k}"] = {
            "carrier": plain.base_link,
            "axis": (axis / np.linalg.norm(axis)).tolist(),
            "inertia": float(Jm[k]),
            "mass": 1.0,
            "coefficients": {jn: float(N[k])},
        }
    geared = rd.load_urdf(text, drivetrain={"secondary_links": sec})
    armature = plain.replace(rotor_inertia=N**2 * Jm)  # Ia = N^2 Jm
    q, qd, qdd = rng.uniform(-2, 2, (5, plain.nq)), rng.normal(0, 2, (5, plain.nq)), rng.normal(0, 3, (5, plain.nq))
    assert _rel(rd.rnea(geared, q, qd, qdd), rd.rnea(armature, q, qd, qdd)) < 1e-13
    assert _rel(rd.crba(geared, q), rd.crba(armature, q)) < 1e-13
    tau = rd.rnea(armature, q, qd, qdd)
    assert _rel(rd.aba(geared, q, qd, tau), qdd) < 1e-10
    assert _rel(rd.coriolis_matrix(geared, q, qd), rd.coriolis_matrix(armature, q, qd)) < 1e-12
    assert _rel(rd.kinetic_energy(geared, q, qd), rd.kinetic_energy(armature, q, qd)) < 1e-13
    # the same rotors on a moving link are not an armature any more
    body_link = plain.body_names[0]
    moved = {k: dict(v, carrier=body_link) for k, v in sec.items()}
    moving = rd.load_urdf(text, drivetrain={"secondary_links": moved})
    assert _rel(rd.crba(moving, q), rd.crba(armature, q)) > 1e-6


@pytest.fixture(scope="module")
def geared():
    return rd.load_robot("three_dof_geared")


@pytest.mark.parametrize("shape", [(), (4,), (2, 3)])
def test_geared_identities_on_batches(geared, shape):
    rng = np.random.default_rng(7)
    q, qd, qdd = rng.uniform(-2, 2, shape + (3,)), rng.normal(0, 3, shape + (3,)), rng.normal(0, 9, shape + (3,))
    M = rd.crba(geared, q)
    assert M.shape == shape + (3, 3)
    np.testing.assert_allclose(M, np.swapaxes(M, -1, -2), atol=1e-15)
    assert np.all(np.linalg.eigvalsh(M) > 0)
    tau = rd.rnea(geared, q, qd, qdd)
    assert tau.shape == shape + (3,)
    np.testing.assert_allclose(rd.aba(geared, q, qd, tau), qdd, rtol=1e-10, atol=1e-10)
    # mass matrix column by column from rnea (no gravity, no velocity)
    zero = np.zeros(shape + (3,))
    cols = np.stack([rd.rnea(geared, q, zero, np.broadcast_to(e, shape + (3,)), gravity=np.zeros(3), friction=False)
                     for e in np.eye(3)], -1)
    np.testing.assert_allclose(cols, M, atol=1e-13)
    # Mdot - 2C skew-symmetric, C qd = velocity torques
    C = rd.coriolis_matrix(geared, q, qd)
    h = 1e-6
    Mdot = (rd.crba(geared, q + h * qd) - rd.crba(geared, q - h * qd)) / (2 * h)
    S = Mdot - 2 * C
    np.testing.assert_allclose(S, -np.swapaxes(S, -1, -2), atol=1e-8)
    vel = rd.rnea(geared, q, qd, zero, gravity=np.zeros(3), friction=False)
    np.testing.assert_allclose((C @ qd[..., None])[..., 0], vel, atol=1e-12)


def test_actuator_torques_and_actuated_direct_dynamics(geared):
    rng = np.random.default_rng(8)
    q, qd, qdd = rng.uniform(-2, 2, (6, 3)), rng.normal(0, 3, (6, 3)), rng.normal(0, 9, (6, 3))
    xi = rd.actuator_torques(geared, q, qd, qdd)
    G = rd.rnea(geared, q, qd, qdd)
    A = geared.drivetrain.A
    np.testing.assert_allclose(xi @ A.T, G, rtol=1e-13, atol=1e-13)  # G = A xi, eq. (22)
    np.testing.assert_allclose(joint_torques_from_actuators(geared, xi), G, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(rd.actuated_aba(geared, q, qd, xi), qdd, rtol=1e-10, atol=1e-10)
    # power: xi . phidot = G . thetadot (eq. 12 and 22)
    phid = actuator_velocities(geared, qd)
    np.testing.assert_allclose(np.sum(xi * phid, -1), np.sum(G * qd, -1), rtol=1e-12)
    # without a drive train the actuators are the joints
    plain = virtual_chain_model(geared)
    np.testing.assert_array_equal(rd.actuator_torques(plain, q, qd, qdd), rd.rnea(plain, q, qd, qdd))


def test_power_balance_along_a_simulated_trajectory(geared):
    """xi . phidot = dE/dt + friction losses, integrated along an actuator-driven simulation."""
    A = geared.drivetrain.A
    Fv, Fc = geared.viscous, geared.coulomb

    def xi(t):
        return np.array([0.8 * np.sin(3 * t), 1.5 * np.cos(2 * t) - 0.5, 0.3 * np.sin(5 * t + 1)])

    def rhs(t, y):
        q, qd = y[:3], y[3:6]
        x = xi(t)
        qdd = rd.actuated_aba(geared, q, qd, x)
        p_in = x @ (A.T @ qd)  # xi . phidot
        p_loss = qd @ (Fv * qd + Fc * np.sign(qd))  # Khalil [7.28]
        return np.concatenate([qd, qdd, [p_in, p_loss]])

    y0 = np.array([0.1, 0.4, -0.3, 0.5, -0.2, 1.0, 0.0, 0.0])
    sol = solve_ivp(rhs, (0.0, 0.6), y0, rtol=1e-9, atol=1e-9, method="DOP853")
    assert sol.success
    q1, qd1, W_in, W_loss = sol.y[:3, -1], sol.y[3:6, -1], sol.y[6, -1], sol.y[7, -1]
    E0 = rd.mechanical_energy(geared, y0[:3], y0[3:6])
    E1 = rd.mechanical_energy(geared, q1, qd1)
    assert abs(W_in) > 1.0 and W_loss > 0.1  # real work in and real losses
    assert abs((E1 - E0) - (W_in - W_loss)) < 1e-6 * abs(W_in)
    # the virtual chain driven the same way ends elsewhere: the gear terms matter
    virtual = virtual_chain_model(geared)
    sol_v = solve_ivp(lambda t, y: np.concatenate([y[3:6], rd.aba(virtual, y[:3], y[3:6], A @ xi(t))]),
                      (0.0, 0.6), y0[:6], rtol=1e-6, atol=1e-6)
    assert np.max(np.abs(sol_v.y[:3, -1] - q1)) > 1e-2


def test_diagonal_armature_model_keeps_only_the_diagonal(geared):
    dt = geared.drivetrain
    q = np.array([0.3, 1.1, -0.6])
    M_full = rd.crba(geared, q)
    M_diag = rd.crba(diagonal_armature_model(geared), q)
    M_v = rd.crba(virtual_chain_model(geared), q)
    np.testing.assert_allclose(np.diag(M_full), np.diag(M_diag), rtol=1e-13)
    np.testing.assert_allclose(np.diag(M_diag - M_v), dt.reflected_inertia(), rtol=1e-13)
    assert np.max(np.abs(M_full - M_diag)) > 1e-3
