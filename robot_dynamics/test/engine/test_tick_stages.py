"""The engine's tick stages (engine.stages), which the Python controllers and plant call and the
compiled loop sequences, checked against a second derivation of each: the control laws written
with the public rnea, saturation with numpy's clip, the plant step with the package's RK4 over the
public aba."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics._rk4 import rk4_step
from robot_dynamics.control import ComputedTorque, PDGravity, Reference
from robot_dynamics.dynamics._common import joint_friction
from robot_dynamics.errors import InputError
from robot_dynamics.engine import stages
from robot_dynamics.testing import random_tree_urdf


@pytest.fixture(scope="module")
def puma():
    return rd.load_robot("puma560")


def _state(model, seed):
    rng = np.random.default_rng(seed)
    n = model.nq
    return [rng.uniform(-1.0, 1.0, n) for _ in range(5)]


@pytest.mark.parametrize("position", [False, True])
@pytest.mark.parametrize("predictive", [False, True])
@pytest.mark.parametrize("desired_friction", [False, True])
def test_computed_torque_is_khalil_9_22_by_the_public_rnea(puma, position, predictive, desired_friction):
    q, qd, qr, qdr, qddr = _state(puma, 3)
    kp, kd = np.linspace(100.0, 400.0, 6), np.linspace(20.0, 40.0, 6)
    w = kp * (qr - q) - kd * qd if position else qddr + kd * (qdr - qd) + kp * (qr - q)  # [9.29] / [9.24]
    qs, qds = (qr, qdr) if predictive else (q, qd)  # [9.31]
    if desired_friction:
        expected = rd.rnea(puma, qs, qds, w, friction=False) + joint_friction(puma, qdr)
    else:
        expected = rd.rnea(puma, qs, qds, w)
    tau = stages.computed_torque(puma, kp, kd, position=position, predictive=predictive,
                                 desired_friction=desired_friction, q=q, qd=qd, qr=qr, qdr=qdr, qddr=qddr)
    np.testing.assert_allclose(tau, expected, rtol=1e-12, atol=1e-12)
    assert np.abs(tau).max() > 1.0


def test_the_controllers_call_the_stages(puma):
    q, qd, qr, qdr, qddr = _state(puma, 4)
    ct = ComputedTorque(puma, omega=30.0, friction_velocity="desired")
    out = ct.update(0.0, q, qd, Reference(qr, qdr, qddr))
    tau = stages.computed_torque(puma, ct.kp, ct.kd, position=False, predictive=False, desired_friction=True,
                                 q=q, qd=qd, qr=qr, qdr=qdr, qddr=qddr)
    np.testing.assert_array_equal(out.tau, np.clip(tau, -ct.effort_limit, ct.effort_limit))
    pd = PDGravity(puma, kp=200.0, kd=30.0)
    out = pd.update(0.0, q, qd, Reference(qr, qdr, qddr))
    Q = rd.rnea(puma, q, np.zeros(6), np.zeros(6))  # Khalil [9.12]'s Q(q)
    expected = np.clip(200.0 * (qr - q) + 30.0 * (qdr - qd) + Q, -pd.effort_limit, pd.effort_limit)
    np.testing.assert_allclose(out.tau, expected, rtol=1e-12, atol=1e-12)


def test_saturate_clips_joints_then_actuators_through_the_structure_matrix():
    m = rd.load_robot("three_dof_geared")
    A, A_inv = np.asarray(m.drivetrain.A), np.asarray(m.drivetrain.A_inv)
    limit, act = np.array([5.0, 1.0, 2.0]), np.array([0.3, 10.0, 0.2])
    tau = np.array([3.0, -4.0, 1.5])
    tau_sat, xi, flags, actuator = stages.saturate(m, limit, A_inv, act, tau)
    t = np.clip(tau, -limit, limit)
    x = t @ A_inv.T
    np.testing.assert_array_equal(tau_sat, t)
    np.testing.assert_allclose(xi, np.clip(x, -act, act), rtol=1e-15)
    np.testing.assert_array_equal(flags, ((t != tau) | (np.clip(x, -act, act) != x)).astype(float))
    assert actuator == bool(np.any(np.abs(x) > act)) and flags[1] == 1.0
    # the controller then gives the joint torques of the clipped actuators, A xi
    out = ComputedTorque(m, omega=40.0, effort_limit=limit, actuator_limit=act)._saturate(np.zeros(3), tau, 0, "")
    np.testing.assert_allclose(out.tau, xi @ A.T, rtol=1e-14)
    tau_sat, xi, flags, actuator = stages.saturate(m, np.full(3, 100.0), None, None, tau)
    np.testing.assert_array_equal(xi, tau)
    assert not actuator and not flags.any()


@pytest.mark.parametrize("smooth", [0.0, 0.02])
@pytest.mark.parametrize("substeps", [1, 3])
def test_plant_step_is_rk4_over_the_public_aba(puma, smooth, substeps):
    q, qd, u, _, _ = _state(puma, 5)
    u = 20.0 * u
    g = np.array([0.5, 0.0, -9.7])

    def f(x):
        qv, qdv = x[:6], x[6:]
        if smooth:  # Khalil [7.26] with tanh(qd / v_s) for the sign
            qdd = rd.aba(puma, qv, qdv, u - joint_friction(puma, qdv, smoothing=smooth), gravity=g, friction=False)
        else:
            qdd = rd.aba(puma, qv, qdv, u, gravity=g)
        return np.concatenate([qdv, qdd])

    x = np.concatenate([q, qd])
    expected = x
    for _ in range(substeps):
        expected = rk4_step(f, expected, 1e-3 / substeps)
    np.testing.assert_allclose(stages.plant_accel(puma, g, True, smooth, q, qd, u), f(x)[6:], rtol=1e-12, atol=1e-12)
    got = stages.plant_step(puma, g, True, smooth, 1e-3 / substeps, substeps, x, None, u)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    assert np.abs(got - x).max() > 1e-4
    with_k1 = stages.plant_step(puma, g, True, smooth, 1e-3 / substeps, substeps, x, f(x), u)
    np.testing.assert_array_equal(with_k1, got)


def test_stage_errors_are_the_algorithms_and_the_state_is_kept(puma):
    q, qd, u, _, _ = _state(puma, 6)
    g = np.array(puma.gravity)
    x = np.concatenate([q, qd])
    bad = x.copy()
    bad[2] = np.nan
    with pytest.raises(InputError, match="aba: expected finite joint vectors of 6 values"):
        stages.plant_step(puma, g, True, 0.0, 1e-3, 1, bad, None, u)
    with pytest.raises(FloatingPointError, match="non-finite plant state"):
        stages.plant_step(puma, g, False, 0.0, 1e-3, 1, np.full(12, 1e149), None, u)
    with pytest.raises(InputError, match="rnea: expected finite"):
        stages.computed_torque(puma, np.ones(6), np.ones(6), position=False, predictive=False, desired_friction=False,
                               q=q, qd=qd, qr=np.full(6, np.inf), qdr=qd, qddr=qd)


def test_the_stages_take_more_joints_than_the_compiled_loop():
    m = rd.load_urdf(random_tree_urdf(np.random.default_rng(1), 70))
    assert m.nq == 70
    q, qd, qr, qdr, qddr = _state(m, 7)
    kp, kd = np.full(70, 50.0), np.full(70, 10.0)
    tau = stages.computed_torque(m, kp, kd, position=False, predictive=False, desired_friction=False,
                                 q=q, qd=qd, qr=qr, qdr=qdr, qddr=qddr)
    np.testing.assert_allclose(tau, rd.rnea(m, q, qd, qddr + kd * (qdr - qd) + kp * (qr - q)), rtol=1e-12, atol=1e-9)
    x = np.concatenate([q, qd])
    got = stages.plant_step(m, np.array(m.gravity), True, 0.0, 1e-4, 1, x, None, tau)

    def f(xs):
        return np.concatenate([xs[70:], rd.aba(m, xs[:70], xs[70:], tau)])

    np.testing.assert_allclose(got, rk4_step(f, x, 1e-4), rtol=1e-10, atol=1e-10)
