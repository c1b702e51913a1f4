"""The paper's virtual-work model of the quadruped against the general closed-chain layer.

The general layer knows nothing of the paper's equations: it runs CRBA/RNEA on the spanning
tree (floating torso, 4 x 3 leg joints, 2 tail joints; thighs and shanks as uniform thin rods,
the paper's ideal bars) and eliminates the four foot constraints with Lagrange multipliers.
Same actuator torques, accelerations and mass matrix to 1e-8 relative on random admissible states.
"""

from __future__ import annotations

import numpy as np
import pytest

from robot_dynamics.closedchain import general
from robot_dynamics.closedchain import quadruped as qm
from robot_dynamics.closedchain.quadruped_params import load_quadruped_params
from robot_dynamics.closedchain.quadruped_tree import quadruped_mechanism, tree_configuration

P = load_quadruped_params()
RTOL = 1e-8


def rel(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


@pytest.fixture(scope="module")
def states():
    rng = np.random.default_rng(11)
    q = []
    while len(q) < 6:
        qi = P.q0 + np.r_[rng.uniform(-0.05, 0.05, 3), rng.uniform(-0.2, 0.2, 3), rng.uniform(-1.2, 1.2, 2)]
        if qm.check_configuration(P, qi)[0]:
            q.append(qi)
    q = np.array(q)
    return q, rng.normal(0, 0.6, q.shape), rng.normal(0, 3.0, q.shape)


@pytest.fixture(scope="module")
def mech():
    return quadruped_mechanism(P)


def test_tree_closes_the_loops_at_the_paper_ik(mech, states):
    q = states[0]
    qt = np.array([tree_configuration(mech.tree.joint_names, P, qi) for qi in q])
    assert np.abs(general.constraint_residual(mech, qt)).max() < 1e-12


def test_same_actuator_torques_accelerations_and_mass_matrix(mech, states):
    q, qd, qdd = states
    quad = qm.QuadrupedTail(P)
    tau_paper, tau_general = quad.inverse_dynamics(q, qd, qdd), mech.inverse_dynamics(q, qd, qdd)
    assert rel(tau_paper, tau_general) < RTOL
    tau = np.random.default_rng(12).normal(0, 20, (len(q), 8))
    assert rel(quad.forward_dynamics(q, qd, tau), mech.forward_dynamics(q, qd, tau)) < RTOL
    assert rel(quad.mass_matrix(q), mech.mass_matrix(q)) < RTOL


def test_same_energy(mech, states):
    q, qd, _ = states
    quad = qm.QuadrupedTail(P)
    qt, qdt, _ = general.complete_state(mech, q, qd)
    E = general.energy(mech, qt, qdt, gravity=(0, 0, -P.g)).total
    E_paper = quad.energy(q, qd)
    # potentials differ by a constant only (the tree measures heights from the same origin)
    np.testing.assert_allclose(E_paper, E, rtol=1e-10)


def test_redundant_actuation_prescribed_and_min_norm(states):
    q, qd, qdd = states
    mech_all = quadruped_mechanism(P, actuation="all")
    qt, qdt, qddt = general.complete_state(mech_all, q, qd, qdd)
    # a prescribed redundant-force profile tau_p (eq. 37 with tau_p != 0)
    tp = np.random.default_rng(13).normal(0, 5, (len(q), 6))
    nu, nud = qm.velocity_from_rates(q, qd, qdd)
    mine = qm.inverse_dynamics(P, q, nu, nud, tp)
    theirs = general.actuator_forces(mech_all, qt, qdt, qddt,
                                     prescribed={n: tp[:, k] for k, n in enumerate(qm.REDUNDANT_JOINTS)})
    assert rel(mine.tau_a, theirs.tau[:, :8]) < RTOL
    # minimum-norm distribution over all 14 actuators
    mn = qm.QuadrupedTail(P, actuation="all").inverse_dynamics(q, qd, qdd)
    assert rel(mn, general.actuator_forces(mech_all, qt, qdt, qddt).tau) < RTOL
