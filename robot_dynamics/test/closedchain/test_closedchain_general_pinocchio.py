"""The general layer's constrained forward dynamics against Pinocchio's constraintDynamics
(the peer library) on the Stewart platform's U-P-S spanning tree with six point contacts."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics.closedchain as cc
from robot_dynamics.closedchain import stewart as st
from robot_dynamics.model import specs_to_urdf

from peer import pin, require_pinocchio  # noqa: E402


@pytest.fixture(autouse=True)
def _needs_pinocchio_3():
    require_pinocchio()
from peer import Peer  # noqa: E402


def test_constrained_accelerations_match_pinocchio_constraint_dynamics():
    params = st.load_stewart_parameters().replace(I_C=(0.01, 0.1, 0.2), I_S=(0.02, 0.15, 0.1))  # any inertia
    mech = st.stewart_closed_chain(params)
    links, joints = st.stewart_tree_specs(params)
    peer = Peer(mech.tree, specs_to_urdf(params.name, links, joints))
    pm, pd = peer.pm, peer.pd
    pm.gravity.linear = np.array([0.0, 0.0, -params.g])
    plat = pm.getJointId("platform_roll")
    contacts = pin.StdVec_RigidConstraintModel()
    for i, p in enumerate(params.p, start=1):
        contacts.append(pin.RigidConstraintModel(
            pin.ContactType.CONTACT_3D, pm, pm.getJointId(f"leg{i}"), pin.SE3.Identity(),
            plat, pin.SE3(np.eye(3), p), pin.ReferenceFrame.LOCAL))
    datas = pin.StdVec_RigidConstraintData()
    for c in contacts:
        datas.append(c.createData())
    pin.initConstraintDynamics(pm, pd, contacts, datas)
    prox = pin.ProximalSettings(1e-14, 0.0, 1)  # mu = 0: the exact KKT solution
    rng = np.random.default_rng(11)
    for _ in range(3):
        x = np.array([0.0, 0.0, 2.2, 0, 0, 0]) + rng.uniform(-0.2, 0.2, 6)
        q, qd, _ = cc.complete_state(mech, x, rng.normal(size=6))
        tau = rng.normal(size=6) * 20.0
        ours = cc.constrained_accelerations(mech, q, qd, tau).qdd
        tau_tree = np.zeros(mech.nq)
        tau_tree[list(mech.actuated)] = tau
        a = pin.constraintDynamics(pm, pd, peer.q(q), peer.v(qd), peer.v(tau_tree), contacts, datas, prox)
        theirs = np.asarray(a)[peer.iv]
        np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-8 * np.abs(theirs).max())
