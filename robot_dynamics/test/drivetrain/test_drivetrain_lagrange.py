"""Geared dynamics on random gear trains and random trees against a brute-force Lagrangian.

The reference builds the total kinetic energy of every body (primary links and the secondary
links as separate bodies spinning about their carriers) from frame poses and Jacobians only,
then applies Lagrange's equations by finite differences: no recursion of the library is used.
"""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.kinematics import frame_poses
from robot_dynamics.testing import random_tree_urdf


def random_drivetrain(model: rd.RobotModel, rng: np.random.Generator, n: int = 6, *, inputs: bool = True) -> dict:
    """A random YAML drive-train mapping: rotors on random carriers with random couplings."""
    sec = {}
    for j in range(n):
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        b = rng.normal(0.0, 3.0, model.nq) * (rng.random(model.nq) < 0.6)
        sec[f"rotor{j}"] = {
            "carrier": str(model.frame_names[int(rng.integers(0, len(model.frame_names)))]),
            "axis": axis.tolist(),
            "inertia": float(rng.uniform(0.01, 0.3)),
            "mass": float(rng.uniform(0.0, 2.0)),
            "com": rng.uniform(-0.2, 0.2, 3).tolist(),
            "transverse_inertia": float(rng.uniform(0.0, 0.2)),
            "coefficients": b.tolist(),
        }
    doc: dict = {"secondary_links": sec}
    if inputs:
        doc["inputs"] = list(model.joint_names)
    return doc


def _energies(primary: rd.RobotModel, doc: dict, q: np.ndarray, qd: np.ndarray, g: np.ndarray):
    """Total kinetic and potential energy of every body, rotors as separate bodies."""
    T_all = frame_poses(primary, q)  # (nf, 4, 4)
    T, U = 0.0, 0.0
    # primary bodies: one per moving link, mass properties of the URDF (fixed children merged)
    for b, name in enumerate(primary.body_names):
        k = primary.frame_names.index(name)
        J = rd.jacobian(primary, q, name)
        vo, w = J[:3] @ qd, J[3:] @ qd
        R, p = T_all[k][:3, :3], T_all[k][:3, 3]
        c = R @ primary.com[b]
        v = vo + np.cross(w, c)
        T += 0.5 * primary.mass[b] * v @ v + 0.5 * w @ (R @ primary.inertia_com[b] @ R.T) @ w
        U -= primary.mass[b] * g @ (p + c)
    for props in doc["secondary_links"].values():
        k = primary.frame_names.index(props["carrier"])
        Tc = T_all[k]
        R, p = Tc[:3, :3], Tc[:3, 3]
        if k == 0:
            vo, w = np.zeros(3), np.zeros(3)
        else:
            J = rd.jacobian(primary, q, props["carrier"])
            vo, w = J[:3] @ qd, J[3:] @ qd
        e = np.array(props["axis"])
        beta_d = np.array(props["coefficients"]) @ qd
        w_r = w + R @ e * beta_d  # eq. (11): spin relative to the carrier
        c = R @ np.array(props["com"])
        v = vo + np.cross(w, c)
        ee = np.outer(e, e)
        I = props["inertia"] * ee + props["transverse_inertia"] * (np.eye(3) - ee)
        m = props["mass"]
        T += 0.5 * m * v @ v + 0.5 * w_r @ (R @ I @ R.T) @ w_r
        U -= m * g @ (p + c)
    return T, U


def lagrange_torques(primary, doc, q, qd, qdd, g, h=1e-6):
    """tau = d/dt dL/dqd - dL/dq by finite differences of the energies (L = T - U)."""
    n = q.size
    eye = np.eye(n)

    def kin(qq, vv):
        return _energies(primary, doc, qq, vv, g)[0]

    def pot(qq):
        return _energies(primary, doc, qq, np.zeros(n), g)[1]

    def mass(qq):  # T is quadratic in qd: exact polarisation
        M = np.empty((n, n))
        for i in range(n):
            for j in range(n):
                M[i, j] = (kin(qq, eye[i] + eye[j]) - kin(qq, eye[i] - eye[j])) / 2.0
        return M

    M = mass(q)
    Mdot = (mass(q + h * qd) - mass(q - h * qd)) / (2 * h)
    dT = np.array([(kin(q + h * eye[k], qd) - kin(q - h * eye[k], qd)) / (2 * h) for k in range(n)])
    dU = np.array([(pot(q + h * eye[k]) - pot(q - h * eye[k])) / (2 * h) for k in range(n)])
    return M @ qdd + Mdot @ qd - dT + dU, M


@pytest.mark.parametrize(
    "seed, mixed", [(300, False), (301, False), (900, True)], ids=["revolute0", "revolute1", "prismatic_mimic"]
)
def test_random_gear_trains_match_brute_force_lagrangian(seed, mixed):
    rng = np.random.default_rng(seed)
    n = 6 if mixed else 5
    text = random_tree_urdf(rng, n, n_fixed=2, prismatic=mixed, continuous=True, mimic=mixed)
    primary = rd.load_urdf(text)
    assert primary.has_mimic == mixed
    doc = random_drivetrain(primary, rng, inputs=not mixed)
    geared = rd.load_urdf(text, drivetrain=doc)
    g = np.array([0.3, -1.0, -9.81])
    for _ in range(2):
        q, qd, qdd = rng.uniform(-1, 1, primary.nq), rng.normal(0, 2, primary.nq), rng.normal(0, 3, primary.nq)
        tau_ref, M_ref = lagrange_torques(primary, doc, q, qd, qdd, g)
        tau = rd.rnea(geared, q, qd, qdd, gravity=g, friction=False)
        M = rd.crba(geared, q)
        assert np.max(np.abs(tau - tau_ref)) <= 1e-7 * np.max(np.abs(tau_ref))
        assert np.max(np.abs(M - M_ref)) <= 1e-9 * np.max(np.abs(M_ref))
        # the spin terms are not negligible here: the test could fail
        tau_virtual = rd.rnea(geared.replace(drivetrain=None), q, qd, qdd, gravity=g, friction=False)
        assert np.max(np.abs(tau - tau_virtual)) > 1e-3 * np.max(np.abs(tau_ref))
        # the other algorithms see the same dynamics
        np.testing.assert_allclose(rd.aba(geared, q, qd, tau, gravity=g, friction=False), qdd, rtol=1e-9, atol=1e-9)
        h = 1e-6
        dT = (rd.kinetic_energy(geared, q, qd + h * qdd) - rd.kinetic_energy(geared, q, qd - h * qdd)) / (2 * h)
        assert dT == pytest.approx(qd @ M_ref @ qdd, rel=1e-7)
