"""Elastic joints (Khalil 7.3.8): inverse dynamics for a link trajectory, simulation, energy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import robot_dynamics as rd
from robot_dynamics.drivetrain import elastic_aba, elastic_energy, elastic_inverse_dynamics
from robot_dynamics.model import robot_files

ELASTIC = {
    "elastic": {
        "shoulder": {"stiffness": 400.0, "motor_inertia": 0.08, "motor_viscous": 0.5, "motor_coulomb": 0.0},
        "elbow": {"stiffness": 250.0, "motor_inertia": 0.05, "motor_viscous": 0.3, "motor_coulomb": 0.0},
    }
}


@pytest.fixture(scope="module")
def model():
    urdf, _ = robot_files("planar2")
    return rd.load_urdf(urdf, drivetrain=ELASTIC)


def desired(t):
    """A smooth link motion and its first four derivatives, (5, 2)."""
    w = np.array([3.0, 4.0])
    a = np.array([0.6, 0.8])
    ph = np.array([0.2, -0.5])
    s, c = np.sin(w * t + ph), np.cos(w * t + ph)
    return np.array([a * s + 0.3, a * w * c, -a * w**2 * s, -a * w**3 * c, a * w**4 * s])


def test_inverse_dynamics_matches_the_spring_equation(model):
    q, qd, qdd, qddd, qdddd = desired(0.4)
    res = elastic_inverse_dynamics(model, q, qd, qdd, qddd, qdddd)
    k = model.drivetrain.elastic.stiffness
    # [7.35a]: the spring k (qM - q) carries exactly the rigid inverse dynamics
    np.testing.assert_allclose(k * (res.qm - q), rd.rnea(model, q, qd, qdd), rtol=1e-12)
    # qMd and qMdd against central differences of qM along the true trajectory
    h = 1e-4
    qm_t = [elastic_inverse_dynamics(model, *desired(0.4 + s)).qm for s in (-h, 0.0, h)]
    np.testing.assert_allclose(res.qmd, (qm_t[2] - qm_t[0]) / (2 * h), rtol=1e-6)
    np.testing.assert_allclose(res.qmdd, (qm_t[2] - 2 * qm_t[1] + qm_t[0]) / h**2, rtol=1e-4)
    # batch shape
    batch = elastic_inverse_dynamics(model, *np.stack([desired(t) for t in (0.1, 0.2, 0.3)], 1))
    assert batch.motor_torque.shape == (3, 2)


def test_motor_torques_from_the_inverse_make_the_simulation_follow_the_links(model):
    def rhs(t, y):
        gamma = elastic_inverse_dynamics(model, *desired(t)).motor_torque
        qdd, qmdd = elastic_aba(model, y[0:2], y[2:4], y[4:6], y[6:8], gamma)
        return np.concatenate([y[2:4], qdd, y[6:8], qmdd])

    d0 = desired(0.0)
    r0 = elastic_inverse_dynamics(model, *d0)
    y0 = np.concatenate([d0[0], d0[1], r0.qm, r0.qmd])
    T = 0.5
    sol = solve_ivp(rhs, (0.0, T), y0, rtol=1e-7, atol=1e-8, method="DOP853")
    err = np.max(np.abs(sol.y[0:2, -1] - desired(T)[0]))
    assert err < 1e-6
    # and the rigid model's torques would not do it: the links lag behind the motors
    assert np.max(np.abs(r0.qm - d0[0])) > 1e-2


def test_unforced_frictionless_motion_conserves_energy(model):
    def rhs(t, y):
        qdd, qmdd = elastic_aba(model, y[0:2], y[2:4], y[4:6], y[6:8], np.zeros(2), friction=False)
        return np.concatenate([y[2:4], qdd, y[6:8], qmdd])

    y0 = np.array([0.3, -0.4, 0.5, 1.0, 0.5, -0.2, -1.0, 2.0])
    sol = solve_ivp(rhs, (0.0, 0.5), y0, rtol=1e-9, atol=1e-9, method="DOP853")
    E = elastic_energy(model, sol.y[0:2].T, sol.y[2:4].T, sol.y[4:6].T, sol.y[6:8].T)
    assert np.ptp(E) < 1e-7 * np.max(np.abs(E))
    assert np.ptp(sol.y[4]) > 0.1  # the motors really move against the springs


def test_a_model_without_elasticity_says_what_to_add():
    with pytest.raises(rd.ModelError, match="no elastic joints: add an 'elastic:' section"):
        elastic_aba(rd.load_robot("planar2"), np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2))
