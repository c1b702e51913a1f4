"""Analytical derivatives of rnea and aba, and the linearisation, against finite differences of
our own rnea/aba, against Pinocchio's computeRNEADerivatives / computeABADerivatives on the same
URDF, and against identities (M = d tau / d qdd, the discrete model against an integration)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from conftest import BUNDLED, frictionless, random_state
from peer import Peer, relative_error

import robot_dynamics as rd
from robot_dynamics.errors import InputError, SingularityError
from robot_dynamics.testing import random_tree_urdf

FD_TOL = 1e-6  # central differences with h = 1e-6: truncation ~h^2, round-off ~eps/h
PEER_TOL = 1e-9


def central_differences(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d f / d x (columns: the coordinates of x) by central differences."""
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)], axis=-1)


def away_from_rest(qd: np.ndarray) -> np.ndarray:
    """Velocities at least 0.2 from zero: the Coulomb step at qd = 0 has no derivative."""
    return np.where(np.abs(qd) < 0.2, np.copysign(0.2, qd) + qd, qd)


def check_against_differences(model: rd.RobotModel, q, qd, qdd, tau, f_ext=None, friction=True):
    dq, dqd, M = rd.rnea_derivatives(model, q, qd, qdd, f_ext=f_ext, friction=friction)
    fq = central_differences(lambda x: rd.rnea(model, x, qd, qdd, f_ext=f_ext, friction=friction), q)
    fqd = central_differences(lambda x: rd.rnea(model, q, x, qdd, f_ext=f_ext, friction=friction), qd)
    fqdd = central_differences(lambda x: rd.rnea(model, q, qd, x, f_ext=f_ext, friction=friction), qdd)
    assert relative_error(dq, fq) < FD_TOL
    assert relative_error(dqd, fqd) < FD_TOL
    assert relative_error(M, fqdd) < FD_TOL  # M = d tau / d qdd, rotor inertia and gears included
    aq, aqd, Minv = rd.aba_derivatives(model, q, qd, tau, f_ext=f_ext, friction=friction)
    gq = central_differences(lambda x: rd.aba(model, x, qd, tau, f_ext=f_ext, friction=friction), q)
    gqd = central_differences(lambda x: rd.aba(model, q, x, tau, f_ext=f_ext, friction=friction), qd)
    gtau = central_differences(lambda x: rd.aba(model, q, qd, x, f_ext=f_ext, friction=friction), tau)
    assert relative_error(aq, gq) < FD_TOL
    assert relative_error(aqd, gqd) < FD_TOL
    assert relative_error(Minv, gtau) < FD_TOL
    np.testing.assert_allclose(Minv @ M, np.eye(model.nq), atol=1e-9)
    return dq, dqd


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_robots_against_finite_differences(name):
    """Every bundled robot, its own friction (viscous, Coulomb, Stribeck), rotor inertia and gears."""
    model = rd.load_robot(name)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, qd, qdd = random_state(model, rng)
        qd = away_from_rest(qd)
        tau = rd.rnea(model, q, qd, qdd)
        dq, dqd = check_against_differences(model, q, qd, qdd, tau)
        assert np.abs(dq).max() > 0.1 and np.abs(dqd).max() > 1e-3  # not a vacuous comparison


def test_geared_robot_coupling_is_differentiated():
    """three_dof_geared: the gears' spin couples the joints (Chen & Wang); the derivatives of the
    geared model, not of its virtual chain, match finite differences of the geared rnea."""
    model = rd.load_robot("three_dof_geared")
    assert model.drivetrain is not None
    from robot_dynamics.drivetrain import virtual_chain_model

    chain = virtual_chain_model(model)
    rng = np.random.default_rng(4)
    q, qd, qdd = random_state(model, rng)
    qd = away_from_rest(qd)
    dq, dqd = check_against_differences(model, q, qd, qdd, rd.rnea(model, q, qd, qdd))
    dq_chain, dqd_chain, _ = rd.rnea_derivatives(chain, q, qd, qdd)
    assert np.abs(dqd - dqd_chain).max() > 1e-4  # the gears' terms are really there


@pytest.mark.parametrize("seed", range(4))
def test_random_trees_with_wrenches_and_friction(seed):
    """Branches, prismatic and continuous joints, oblique axes, massless links; wrenches on two
    links (fixed in base axes, turning with the link); viscous, Coulomb and Stribeck friction."""
    rng = np.random.default_rng(2000 + seed)
    model = rd.load_urdf(random_tree_urdf(rng, 9, n_fixed=2))
    n = model.nq
    model = model.replace(viscous=rng.uniform(0.1, 1.0, n), coulomb=rng.uniform(0.1, 1.0, n),
                          static_friction=rng.uniform(1.2, 2.0, n), stribeck=rng.uniform(0.5, 3.0, n),
                          rotor_inertia=rng.uniform(0.0, 0.05, n))
    moving = [model.frame_names[k] for k in range(len(model.frame_names)) if model.frame_body[k] >= 0]
    f_ext = {moving[-1]: rng.normal(size=6), moving[len(moving) // 2]: rng.normal(size=6)}
    q, qd, qdd = random_state(model, rng)
    qd = away_from_rest(qd)
    tau = rd.rnea(model, q, qd, qdd, f_ext=f_ext)
    check_against_differences(model, q, qd, qdd, tau, f_ext=f_ext)


@pytest.mark.parametrize("seed", range(3))
def test_mimic_joints_against_finite_differences(seed):
    for s in range(50):
        model = rd.load_urdf(random_tree_urdf(np.random.default_rng(3000 + 50 * seed + s), 9, n_fixed=1, mimic=True))
        if model.has_mimic:
            break
    assert model.has_mimic and model.nq < model.nb
    rng = np.random.default_rng(seed)
    q, qd, qdd = random_state(model, rng)
    qd = away_from_rest(qd)
    check_against_differences(model, q, qd, qdd, rd.rnea(model, q, qd, qdd))


def test_batches_broadcast_and_match_one_state_calls():
    model = rd.load_robot("iiwa14")
    rng = np.random.default_rng(5)
    q, qd, qdd = random_state(model, rng, (4, 3))
    out = rd.rnea_derivatives(model, q, qd, qdd)
    tau = rd.rnea(model, q, qd, qdd)
    back = rd.aba_derivatives(model, q, qd[0, 0], tau)  # one velocity broadcast over the batch
    for i in range(4):
        for j in range(3):
            one = rd.rnea_derivatives(model, q[i, j], qd[i, j], qdd[i, j])
            for a, b in zip(out, one):
                assert a.shape == (4, 3, model.nq, model.nq)
                np.testing.assert_array_equal(a[i, j], b)
            one = rd.aba_derivatives(model, q[i, j], qd[0, 0], tau[i, j])
            for a, b in zip(back, one):
                np.testing.assert_array_equal(a[i, j], b)


def test_threads_give_the_same_numbers():
    model = rd.load_robot("puma560")
    q, qd, qdd = random_state(model, np.random.default_rng(6), (300,))
    threads = rd.get_num_threads()
    try:
        rd.set_num_threads(1)
        serial = rd.aba_derivatives(model, q, qd, qdd)
        rd.set_num_threads(max(2, threads))
        parallel = rd.aba_derivatives(model, q, qd, qdd)
    finally:
        rd.set_num_threads(threads)
    for a, b in zip(serial, parallel):
        np.testing.assert_array_equal(a, b)


def test_gravity_argument_and_gravity_gradient():
    """At rest, dtau/dq is the gradient of the gravity torques; it scales with g and is symmetric
    (the Hessian of the potential energy)."""
    model = rd.load_robot("puma560")
    q = np.array([0.3, -0.7, 0.9, 0.1, 0.4, -0.2])
    z = np.zeros(6)
    dq, dqd, _ = rd.rnea_derivatives(model, q, z, z, friction=False)
    dq2, _, _ = rd.rnea_derivatives(model, q, z, z, gravity=2.0 * np.asarray(model.gravity), friction=False)
    np.testing.assert_allclose(dq2, 2.0 * dq, atol=1e-12)
    np.testing.assert_allclose(dq, dq.T, atol=1e-12)
    np.testing.assert_array_equal(dqd, 0.0)
    np.testing.assert_allclose(dq, central_differences(lambda x: rd.gravity_torques(model, x), q), atol=1e-6)


# -- Pinocchio's derivatives on the same URDF ----------------------------------------------------------
def _peer_derivatives(peer: Peer, q, qd, qdd, tau):
    import pinocchio as pin

    qp, vp = peer.q(q), peer.v(qd)
    dq, dv, M = (np.array(x) for x in pin.computeRNEADerivatives(peer.pm, peer.pd, qp, vp, peer.v(qdd)))
    M = np.triu(M) + np.triu(M, 1).T
    aq, av, Minv = (np.array(x) for x in pin.computeABADerivatives(peer.pm, peer.pd, qp, vp, peer.v(tau)))
    Minv = np.triu(Minv) + np.triu(Minv, 1).T
    ix = np.ix_(peer.iv, peer.iv)
    return (dq[ix], dv[ix], M[ix]), (aq[ix], av[ix], Minv[ix])


def _check_against_pinocchio(model: rd.RobotModel, peer: Peer, rng: np.random.Generator, n: int = 5) -> None:
    q, qd, qdd = random_state(model, rng, (n,))
    tau = rd.rnea(model, q, qd, qdd, friction=False)
    ours_r = rd.rnea_derivatives(model, q, qd, qdd, friction=False)
    ours_a = rd.aba_derivatives(model, q, qd, tau, friction=False)
    for k in range(n):
        peer_r, peer_a = _peer_derivatives(peer, q[k], qd[k], qdd[k], tau[k])
        for a, b in zip(ours_r, peer_r):
            assert relative_error(a[k], b) < PEER_TOL
        for a, b in zip(ours_a, peer_a):
            assert relative_error(a[k], b) < PEER_TOL


@pytest.mark.parametrize("name", BUNDLED)
def test_bundled_robots_agree_with_pinocchio_derivatives(name):
    model = frictionless(rd.load_robot(name))
    if model.drivetrain is not None:
        from robot_dynamics.drivetrain import virtual_chain_model, virtual_chain_urdf

        text = virtual_chain_urdf(model)
        model = frictionless(virtual_chain_model(model))
        _check_against_pinocchio(model, Peer(model, text), np.random.default_rng(8))
        return
    _check_against_pinocchio(model, Peer(model), np.random.default_rng(8))


def test_random_trees_agree_with_pinocchio_derivatives(random_tree):
    _check_against_pinocchio(random_tree, Peer(random_tree), np.random.default_rng(9))


# -- linearize ------------------------------------------------------------------------------------------
def test_linearize_continuous_structure():
    model = rd.load_robot("puma560")
    q, qd, qdd = random_state(model, np.random.default_rng(10))
    tau = rd.rnea(model, q, qd, qdd)
    A, B = rd.linearize(model, q, qd, tau)
    aq, aqd, Minv = rd.aba_derivatives(model, q, qd, tau)
    n = model.nq
    np.testing.assert_array_equal(A[:n, :n], 0.0)
    np.testing.assert_array_equal(A[:n, n:], np.eye(n))
    np.testing.assert_array_equal(A[n:, :n], aq)
    np.testing.assert_array_equal(A[n:, n:], aqd)
    np.testing.assert_array_equal(B[:n], 0.0)
    np.testing.assert_array_equal(B[n:], Minv)


def test_linearize_discrete_matches_an_integration_of_the_linear_model():
    """Ad x + Bd u equals the linear ODE dx = A x + B u integrated over dt with u held (RK4, 1000 steps)."""
    model = rd.load_robot("three_dof_geared")
    rng = np.random.default_rng(11)
    q, qd, qdd = random_state(model, rng)
    tau = rd.rnea(model, q, qd, qdd)
    dt = 0.01
    A, B = rd.linearize(model, q, qd, tau)
    Ad, Bd = rd.linearize(model, q, qd, tau, dt=dt)
    x0, u = rng.normal(size=2 * model.nq), rng.normal(size=model.nq)
    x, h = x0.copy(), dt / 1000

    def f(x):
        return A @ x + B @ u

    for _ in range(1000):
        k1 = f(x)
        k2 = f(x + h / 2 * k1)
        k3 = f(x + h / 2 * k2)
        k4 = f(x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    np.testing.assert_allclose(Ad @ x0 + Bd @ u, x, rtol=1e-10, atol=1e-12)


def test_linearize_batch_and_bad_input():
    model = rd.load_robot("planar2")
    q, qd, qdd = random_state(model, np.random.default_rng(12), (5,))
    tau = rd.rnea(model, q, qd, qdd)
    A, B = rd.linearize(model, q, qd, tau, dt=0.001)
    assert A.shape == (5, 4, 4) and B.shape == (5, 4, 2)
    A2, B2 = rd.linearize(model, q[2], qd[2], tau[2], dt=0.001)
    np.testing.assert_allclose(A[2], A2, atol=1e-14)
    np.testing.assert_allclose(B[2], B2, atol=1e-14)
    for dt in (0.0, -1.0, float("nan"), float("inf"), "0.1", True, 10**400, 1 + 2j):
        with pytest.raises(InputError, match="dt: expected a sampling period > 0"):
            rd.linearize(model, q[0], qd[0], tau[0], dt=dt)
    with pytest.raises(InputError, match="too long"):
        rd.linearize(model, q[0], qd[0], tau[0], dt=1e300)


def test_bad_input_is_refused_with_the_package_error():
    model = rd.load_robot("planar2")
    z = np.zeros(2)
    with pytest.raises(InputError, match="expected"):
        rd.rnea_derivatives(model, [0.0, 0.0, 0.0], z, z)
    with pytest.raises(InputError):
        rd.aba_derivatives(model, [np.nan, 0.0], z, z)
    with pytest.raises(InputError):
        rd.rnea_derivatives(model, [[0.0, 0.0], [0.0]], z, z)  # ragged
    with pytest.raises(InputError):
        rd.rnea_derivatives(model, z, z, [1e308, 1e308])  # not finite after the recursion
    massless = model.replace(mass=np.zeros(model.nb), inertia_com=np.zeros((model.nb, 3, 3)),
                             rotor_inertia=np.zeros(model.nq))
    with pytest.raises(SingularityError, match="moves no inertia"):
        rd.aba_derivatives(massless, z, z, z)


@pytest.mark.parametrize("seed", range(3))
def test_the_two_derivations_agree(seed):
    """Trees without wrenches or gears take the base-frame formulas (rnea_derivatives_tree), the
    rest the tangents of the recursion (rnea_tangent): two derivations, the same numbers."""
    from robot_dynamics.engine import engine

    rng = np.random.default_rng(4000 + seed)
    models = [rd.load_urdf(random_tree_urdf(rng, 10, n_fixed=2)), rd.load_robot(BUNDLED[seed % len(BUNDLED)])]
    for s in range(50):
        mimic = rd.load_urdf(random_tree_urdf(np.random.default_rng(5000 + 50 * seed + s), 8, mimic=True))
        if mimic.has_mimic:
            models.append(mimic)
            break
    for model in models:
        q, qd, qdd = random_state(model, rng, (3,))
        qd = away_from_rest(qd)
        fast = rd.rnea_derivatives(model, q, qd, qdd)
        old = engine().set_tangent_derivatives(True)
        try:
            general = rd.rnea_derivatives(model, q, qd, qdd)
        finally:
            engine().set_tangent_derivatives(old)
        for a, b in zip(fast, general):
            assert relative_error(a, b) < 1e-11
        assert not np.array_equal(fast[0], general[0]) or model.nq == 0  # really two computations


@pytest.mark.parametrize("scale", [1e-4, 0.3, 3.0, 40.0])
def test_the_matrix_exponential_equals_scipys(scale):
    """linearize's discretisation: numpy's Pade [13/13] with scaling and squaring (Higham 2005)
    against scipy.linalg.expm, batched, from small to large norms (squarings per matrix)."""
    import scipy.linalg

    from robot_dynamics.dynamics.derivatives import expm

    S = np.random.default_rng(3).normal(size=(4, 7, 7)) * scale * np.array([1.0, 0.1, 2.0, 0.5])[:, None, None]
    E = expm(S)
    R = np.stack([scipy.linalg.expm(x) for x in S])
    np.testing.assert_allclose(E, R, rtol=1e-11, atol=1e-13 * np.max(np.abs(R)))
    # and an identity: exp of a rotation generator is the rotation
    w = np.array([0.3, -1.2, 0.7])
    K = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    th = np.linalg.norm(w)
    Rot = np.eye(3) + np.sin(th) / th * K + (1 - np.cos(th)) / th**2 * K @ K
    np.testing.assert_allclose(expm(K), Rot, atol=1e-14)


def test_the_first_discretisation_imports_no_scipy_linalg():
    """rd.linearize(..., dt) answered its first call in 0.3-0.44 s: scipy.linalg's import."""
    import subprocess
    import sys

    code = ("import sys, numpy as np, robot_dynamics as rd\n"
            "m = rd.load_robot('puma560')\n"
            "Ad, Bd = rd.linearize(m, np.zeros(6), np.zeros(6), np.zeros(6), dt=0.001)\n"
            "assert Ad.shape == (12, 12) and np.all(np.isfinite(Ad))\n"
            "print('scipy.linalg' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))).stdout
    assert out.strip() == "False"
