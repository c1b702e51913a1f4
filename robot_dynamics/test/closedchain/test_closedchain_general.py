"""General closed-chain layer: constraint kinematics, loop closure, inverse/forward dynamics.

Independent references: finite differences of the constraints, the Lagrange equation of a
one-dof four-bar in its crank angle (mass and potential from the tree, derivatives by
finite differences), energy conservation, power balance.
"""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
import robot_dynamics.closedchain as cc
from robot_dynamics.errors import SingularityError, UnknownNameError
from robot_dynamics.model import JointSpec, LinkSpec, build_model
from robot_dynamics.model.robot_model import origin_matrix
from robot_dynamics.testing import random_tree_urdf

Z = np.array([0.0, 0.0, 1.0])
A_CRANK, B_ROCKER, C_COUPLER, D_GROUND = 0.3, 0.6, 0.7, 0.8


def _rod(name: str, length: float, mass: float) -> LinkSpec:
    return LinkSpec(name, mass, np.array([length / 2, 0, 0]), np.diag([1e-4, mass * length**2 / 12, mass * length**2 / 12]))


def four_bar(actuated: tuple[str, ...] = ("crank_joint",)) -> cc.ClosedChainModel:
    links = [LinkSpec("ground"), _rod("crank", A_CRANK, 1.0), _rod("coupler", C_COUPLER, 2.0), _rod("rocker", B_ROCKER, 1.5)]
    joints = [
        JointSpec("crank_joint", "revolute", "ground", "crank", axis=Z),
        JointSpec("coupler_joint", "revolute", "crank", "coupler", origin=origin_matrix([A_CRANK, 0, 0], [0, 0, 0]), axis=Z),
        JointSpec("rocker_joint", "revolute", "ground", "rocker", origin=origin_matrix([D_GROUND, 0, 0], [0, 0, 0]), axis=Z),
    ]
    tree = build_model("four_bar", links, joints, gravity=(0, -9.81, 0))
    pin = cc.point_constraint("pin", "coupler", (C_COUPLER, 0, 0), "rocker", (B_ROCKER, 0, 0),
                              directions=[(1, 0, 0), (0, 1, 0)])
    return cc.ClosedChainModel.build(tree, [pin], actuated=list(actuated), independent=["crank_joint"],
                                     q_reference=[1.0, -0.5, 1.6])


def test_four_bar_closes_and_matches_lagrange_in_crank_angle():
    mech = four_bar()
    th, thd, thdd = 1.0, 2.0, 0.5
    q, qd, qdd = cc.complete_state(mech, [th], [thd], [thdd])
    assert np.abs(cc.constraint_residual(mech, q)).max() < 1e-12
    assert np.abs(cc.constraint_jacobian(mech, q) @ qd).max() < 1e-12
    assert np.abs(cc.constraint_jacobian(mech, q) @ qdd + cc.constraint_bias(mech, q, qd)).max() < 1e-12
    tau = cc.actuator_forces(mech, q, qd, qdd).tau[0]

    # Lagrange in the crank angle: tau = m th'' + 1/2 m'(th) th'^2 + U'(th), where
    # m(th) = 2 T(th, th'=1) and U come from the tree and the closed loop.
    def m_of(t):
        qq, qqd, _ = cc.complete_state(mech, [t], [1.0])
        return 2.0 * float(rd.kinetic_energy(mech.tree, qq, qqd))

    def u_of(t):
        qq, _, _ = cc.complete_state(mech, [t])
        return float(rd.potential_energy(mech.tree, qq, gravity=mech.gravity))

    h = 1e-5
    dm = (m_of(th + h) - m_of(th - h)) / (2 * h)
    du = (u_of(th + h) - u_of(th - h)) / (2 * h)
    expected = m_of(th) * thdd + 0.5 * dm * thd**2 + du
    assert tau == pytest.approx(expected, rel=1e-7)
    # the reduced mass matrix is the same m(th)
    assert float(mech.mass_matrix([th])[0, 0]) == pytest.approx(m_of(th), rel=1e-12)


def test_inverse_then_forward_and_mechanism_protocol():
    mech = four_bar()
    assert isinstance(mech, cc.Mechanism)
    rng = np.random.default_rng(3)
    th = rng.uniform(0.5, 1.5, 4)
    thd, thdd = rng.normal(size=4), rng.normal(size=4)
    tau = mech.inverse_dynamics(th[:, None], thd[:, None], thdd[:, None])
    assert tau.shape == (4, 1)
    back = mech.forward_dynamics(th[:, None], thd[:, None], tau)
    np.testing.assert_allclose(back[:, 0], thdd, rtol=1e-9, atol=1e-10)
    # full-coordinate forward dynamics also satisfies the acceleration constraint
    q, qd, qdd = cc.complete_state(mech, th[:, None], thd[:, None], thdd[:, None])
    fd = cc.constrained_accelerations(mech, q, qd, tau)
    np.testing.assert_allclose(fd.qdd, qdd, rtol=1e-9, atol=1e-10)
    # the multipliers of both directions agree
    np.testing.assert_allclose(fd.multipliers, cc.actuator_forces(mech, q, qd, qdd).multipliers, rtol=1e-8, atol=1e-9)


def test_over_actuated_minimum_norm_and_prescribed():
    mech = four_bar(actuated=("crank_joint", "rocker_joint"))
    q, qd, qdd = cc.complete_state(mech, [1.0], [2.0], [0.5])
    single = cc.actuator_forces(four_bar(), q, qd, qdd).tau[0]
    sol = cc.actuator_forces(mech, q, qd, qdd)
    # any distribution moves the same motion: G^T S tau = G^T tau_tree
    G, _ = cc.null_space(cc.constraint_jacobian(mech, q))
    S = mech.selection()
    np.testing.assert_allclose(G.T @ S @ sol.tau, G.T @ sol.tau_tree, atol=1e-10)
    # minimum norm: orthogonal to the null space of G^T S
    A = G.T @ S
    n = np.array([A[0, 1], -A[0, 0]])
    assert abs(n @ sol.tau) < 1e-10 * np.linalg.norm(sol.tau)
    # prescribing zero rocker torque gives back the single-actuator answer
    pres = cc.actuator_forces(mech, q, qd, qdd, prescribed={"rocker_joint": 0.0})
    assert pres.tau[0] == pytest.approx(single, rel=1e-10)
    assert pres.tau[1] == 0.0
    with pytest.raises(UnknownNameError, match="crank_joint"):
        cc.actuator_forces(mech, q, qd, qdd, prescribed={"coupler": 1.0})


def test_energy_conserved_and_power_balance():
    mech = four_bar()
    q0, qd0, _ = cc.complete_state(mech, [1.0], [1.5])
    # unforced: energy constant to integrator accuracy
    t = np.linspace(0.0, 0.5, 251)
    res = cc.simulate(mech, q0, qd0, t, lambda tk, q, qd: np.zeros(1), baumgarte=0.0, project=False)
    assert res.ok
    E = cc.energy(mech, res.q, res.qd).total
    assert np.ptp(E) < 1e-8 * np.abs(E).max() + 1e-9
    assert res.constraint_error.max() < 1e-7
    # forced: dE/dt = tau . qd_a
    res = cc.simulate(mech, q0, qd0, t, lambda tk, q, qd: np.array([2.0 * np.sin(5 * tk)]), baumgarte=0.0, project=False)
    E = cc.energy(mech, res.q, res.qd).total
    P = cc.actuator_power(mech, res.qd, res.tau)
    dEdt = np.gradient(E, t)
    np.testing.assert_allclose(dEdt[2:-2], P[2:-2], atol=2e-4 * np.abs(P).max())


def test_baumgarte_pulls_a_drifted_state_back():
    mech = four_bar()
    q0, qd0, _ = cc.complete_state(mech, [1.0], [0.0])
    q0 = q0 + np.array([0.0, 0.02, -0.01])  # open the loop a little
    t = np.linspace(0.0, 0.5, 201)
    res = cc.simulate(mech, q0, qd0, t, lambda tk, q, qd: np.zeros(1), baumgarte=20.0, project=False)
    assert res.constraint_error[0] > 1e-3
    assert res.constraint_error[-1] < 1e-3 * res.constraint_error[0]


def test_unreachable_and_singular_configurations_are_reported():
    mech = four_bar()
    short = cc.ClosedChainModel.build(
        mech.tree, [cc.point_constraint("pin", "coupler", (0.05, 0, 0), "rocker", (0.05, 0, 0),
                                        directions=[(1, 0, 0), (0, 1, 0)])],
        actuated=["crank_joint"], q_reference=[0.0, 0.0, 0.0])
    bad = cc.solve_positions(short, [0.0, 0.0, 0.0])  # |crank pin - rocker pivot| = 0.5 > 0.1
    assert not bool(bad.success)
    assert "pin[" in bad.message and "failed" in bad.message
    with pytest.raises(SingularityError, match="loop closure failed"):
        cc.complete_state(short, [0.0])
    # actuation singularity: the rocker actuated alone at a dead point of the crank
    # (crank and coupler aligned: the rocker cannot drive the crank)
    rocker_driven = cc.ClosedChainModel.build(mech.tree, mech.constraints, actuated=["rocker_joint"],
                                              independent=["crank_joint"], q_reference=[1.0, -0.5, 1.6])
    # find the dead point: coupler angle relative to crank = 0 (pin at distance a + c)
    # |(a+c) u(th) - (d, 0)| = b  -> solve for th
    from scipy.optimize import brentq

    L = A_CRANK + C_COUPLER
    th = brentq(lambda t: np.hypot(L * np.cos(t) - D_GROUND, L * np.sin(t)) - B_ROCKER, 0.1, 3.0)
    q_dead = cc.solve_positions(rocker_driven, [th, 0.0, 1.0]).q
    assert abs(q_dead[1]) < 1e-6
    with pytest.raises(SingularityError, match="actuation singularity"):
        cc.actuator_forces(rocker_driven, q_dead, np.zeros(3), np.zeros(3))


@pytest.mark.parametrize("seed", [0, 1])
def test_constraint_jacobian_and_bias_by_finite_differences(seed):
    rng = np.random.default_rng(seed)
    tree = rd.load_urdf(random_tree_urdf(rng, 8, n_fixed=1))
    frames = [f for f in tree.frame_names if f != tree.base_link]
    f1, f2, f3 = rng.choice(frames, 3, replace=False)
    cons = [
        cc.spherical_constraint("s", f1, rng.normal(size=3), f2, rng.normal(size=3)),
        cc.universal_constraint("u", f2, rng.normal(size=3), rng.normal(size=3), f3, rng.normal(size=3), rng.normal(size=3)),
        cc.fixed_point_constraint("foot", f3, rng.normal(size=3), rng.normal(size=3)),
        cc.universal_constraint("uw", f1, rng.normal(size=3), rng.normal(size=3), None, rng.normal(size=3), rng.normal(size=3)),
    ]
    mech = cc.ClosedChainModel.build(tree, cons, actuated=list(tree.joint_names[:2]))
    assert mech.nc == 3 + 4 + 3 + 4
    q = rng.normal(size=(2, tree.nq))
    qd = rng.normal(size=(2, tree.nq))
    K = cc.constraint_jacobian(mech, q)
    h = 1e-6
    Kfd = np.stack([(cc.constraint_residual(mech, q + h * e) - cc.constraint_residual(mech, q - h * e)) / (2 * h)
                    for e in np.eye(tree.nq)], axis=-1)
    np.testing.assert_allclose(K, Kfd, atol=1e-7)
    # Kdot qd = d/dt (K qd) along q(t) = q + t qd
    bias_fd = (np.einsum("nij,nj->ni", cc.constraint_jacobian(mech, q + h * qd), qd)
               - np.einsum("nij,nj->ni", cc.constraint_jacobian(mech, q - h * qd), qd)) / (2 * h)
    np.testing.assert_allclose(cc.constraint_bias(mech, q, qd), bias_fd, atol=1e-6)
    assert cc.constraint_bias(mech, q[0], qd[0]).shape == (mech.nc,)


def test_free_joint_specs_match_rpy():
    links, joints = cc.free_joint_specs("world", "body")
    body = LinkSpec("body", 1.0, np.zeros(3), np.eye(3))
    tree = build_model("free", [LinkSpec("world"), *links, body], joints)
    x = np.array([0.1, -0.2, 0.3, 0.4, -0.5, 0.6])
    T = rd.frame_pose(tree, x, "body")
    from robot_dynamics.spatial import rpy_to_matrix

    np.testing.assert_allclose(T[:3, 3], x[:3])
    np.testing.assert_allclose(T[:3, :3], rpy_to_matrix(x[[5, 4, 3]]), atol=1e-14)


def test_bad_names_are_rejected():
    mech = four_bar()
    with pytest.raises(UnknownNameError, match="crank_joint"):
        cc.ClosedChainModel.build(mech.tree, mech.constraints, actuated=["nope"])
    with pytest.raises(UnknownNameError, match="frame"):
        cc.ClosedChainModel.build(mech.tree, [cc.point_constraint("p", "nolink", (0, 0, 0))], actuated=["crank_joint"])
