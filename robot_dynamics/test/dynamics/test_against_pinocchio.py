"""rnea, crba, aba, kinematics against Pinocchio on the same URDF (joints matched by name)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_state
from peer import Peer, relative_error

import robot_dynamics as rd
from robot_dynamics.testing import random_tree_urdf

N_STATES = 50
TOL = 1e-9


def _check_dynamics(model: rd.RobotModel, peer: Peer, rng: np.random.Generator) -> None:
    q, qd, qdd = random_state(model, rng, (N_STATES,))
    tau = rd.rnea(model, q, qd, qdd, friction=False)
    M = rd.crba(model, q)
    qdd_back = rd.aba(model, q, qd, tau, friction=False)
    for k in range(N_STATES):
        tau_p = peer.rnea(q[k], qd[k], qdd[k])
        assert relative_error(tau[k], tau_p) < TOL
        assert relative_error(M[k], peer.crba(q[k])) < TOL
        assert relative_error(qdd_back[k], peer.aba(q[k], qd[k], tau_p)) < TOL


def test_bundled_robots_agree_with_pinocchio(bundled):
    if bundled.drivetrain is not None:
        # Pinocchio knows no gear trains: compare the virtual chain (gears lumped into their
        # carriers); the gears' spin terms are checked against a brute-force Lagrangian.
        from robot_dynamics.drivetrain import virtual_chain_model, virtual_chain_urdf

        text = virtual_chain_urdf(bundled)
        bundled = virtual_chain_model(bundled)
        _check_dynamics(bundled, Peer(bundled, text), np.random.default_rng(1))
        return
    _check_dynamics(bundled, Peer(bundled), np.random.default_rng(1))


def test_random_trees_agree_with_pinocchio(random_tree):
    assert random_tree.nb >= 10
    assert len(random_tree.frame_names) > random_tree.nb + 1  # fixed joints merged, still frames
    _check_dynamics(random_tree, Peer(random_tree), np.random.default_rng(2))


def test_random_tree_features_are_exercised():
    """The generator really makes what the cross-check claims: branches, prismatic and continuous
    joints, oblique axes, rotated inertial frames, fixed joints and massless links."""
    text = random_tree_urdf(np.random.default_rng(1000), 12, n_fixed=3)
    model = rd.load_urdf(text)
    children = np.bincount(model.parent[model.parent >= 0], minlength=model.nb)
    assert children.max() >= 2 or np.sum(model.parent == -1) >= 2  # a branch
    assert 'type="fixed"' in text and 'type="prismatic"' in text and 'type="continuous"' in text
    assert model.continuous.any() and model.is_prismatic.any()
    oblique = np.sum(np.abs(model.axis) > 1e-6, axis=1) > 1
    assert oblique.any()
    assert "<link name=" in text and '"/>' in text  # some link without <inertial>


def test_continuous_joint_is_one_angle_beyond_pi():
    text = random_tree_urdf(np.random.default_rng(1001), 10, n_fixed=1)
    model = rd.load_urdf(text)
    assert model.continuous.any()
    peer = Peer(model)
    rng = np.random.default_rng(3)
    q, qd, qdd = random_state(model, rng)
    q = np.where(model.continuous, q + 4 * np.pi + 0.3, q)  # angles far outside [-pi, pi]
    assert relative_error(rd.rnea(model, q, qd, qdd, friction=False), peer.rnea(q, qd, qdd)) < TOL


def test_mimic_joints_agree_with_pinocchio_mimic_model():
    """Mimic joints against Pinocchio's JointModelMimic.

    Pinocchio 4.1 supports mimic joints in rnea only: its aba refuses them and its crba
    disagrees with its own rnea (by ~1e-3 relative on these trees), so the mass matrix is
    compared with the one Pinocchio's rnea implies, column by column, and aba by identity.
    """
    rng = np.random.default_rng(11)
    for seed in range(30):
        text = random_tree_urdf(np.random.default_rng(seed), 10, n_fixed=1, mimic=True, prismatic=False, continuous=False)
        model = rd.load_urdf(text)
        if model.has_mimic:
            break
    assert model.has_mimic and model.nq < model.nb
    peer = Peer(model, mimic=True)
    assert peer.pm.nv == model.nq  # Pinocchio's mimic joints carry no coordinate either
    q, qd, qdd = random_state(model, rng, (N_STATES,))
    tau = rd.rnea(model, q, qd, qdd, friction=False)
    M = rd.crba(model, q)
    eye = np.eye(model.nq)
    for k in range(N_STATES):
        assert relative_error(tau[k], peer.rnea(q[k], qd[k], qdd[k])) < TOL
        g = peer.rnea(q[k], 0 * eye[0], 0 * eye[0])
        M_peer = np.stack([peer.rnea(q[k], 0 * eye[0], e) - g for e in eye], axis=1)
        assert relative_error(M[k], M_peer) < TOL
    assert relative_error(rd.aba(model, q, qd, tau, friction=False), qdd) < TOL


def test_frames_and_jacobians_agree_with_pinocchio(bundled, rng):
    peer = Peer(bundled)
    q, _, _ = random_state(bundled, rng, (10,))
    for frame in (bundled.end_effector, bundled.frame_names[len(bundled.frame_names) // 2]):
        T = rd.frame_pose(bundled, q, frame)
        J = rd.jacobian(bundled, q, frame)
        for k in range(len(q)):
            np.testing.assert_allclose(T[k], peer.frame_placement(q[k], frame), atol=1e-12)
            np.testing.assert_allclose(J[k], peer.jacobian(q[k], frame), atol=1e-12)


def test_external_wrench_matches_pinocchio_fext(rng):
    """f_ext (the wrench a link exerts on the environment) equals Pinocchio's fext with the
    opposite sign, after moving it to the joint frame."""
    import pinocchio as pin

    model = rd.load_robot("iiwa14")
    peer = Peer(model)
    q, qd, qdd = random_state(model, rng)
    w = rng.normal(size=6)
    link = model.end_effector
    tau = rd.rnea(model, q, qd, qdd, f_ext={link: w}, friction=False)
    qp = peer.q(q)
    pin.framesForwardKinematics(peer.pm, peer.pd, qp)
    fid = peer.pm.getFrameId(link)
    jid = peer.pm.frames[fid].parentJoint
    oMl, oMj = peer.pd.oMf[fid], peer.pd.oMi[jid]
    # wrench on the link by the environment = -w; as a pin.Force at the link origin, world axes
    f_world_at_link = pin.Force(-w[:3], -w[3:])
    # move to the joint frame: first to a frame at the link origin with world axes, then to joint
    world_aligned_link = pin.SE3(np.eye(3), oMl.translation)
    f_joint = oMj.actInv(world_aligned_link.act(f_world_at_link))
    fext = [pin.Force.Zero() for _ in range(peer.pm.njoints)]
    fext[jid] = f_joint
    tau_p = pin.rnea(peer.pm, peer.pd, qp, peer.v(qd), peer.v(qdd), fext)[peer.iv]
    assert relative_error(tau, tau_p) < TOL
