"""Controllers and the dynamics node compute per tick with the core's compiled kernels."""

from __future__ import annotations

import numpy as np

import robot_dynamics as rd
from robot_dynamics.codegen import fastest_rnea, tick_inverse_dynamics
from robot_dynamics.control import ComputedTorque, PDGravity, Reference
from robot_dynamics.ros.logic import DynamicsServices


def test_tick_path_is_the_core_for_rigid_and_geared_robots():
    for name in ("planar2", "three_dof_geared"):
        model = rd.load_robot(name)
        fn = tick_inverse_dynamics(model)
        assert fn.path == "core"
        rng = np.random.default_rng(1)
        q, qd, qdd = rng.uniform(-1, 1, (3, model.nq))
        np.testing.assert_allclose(fn(q, qd, qdd), rd.rnea(model, q, qd, qdd), rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(
            fastest_rnea(model, q, qd, qdd, gravity=[0.0, 0.0, -3.7], friction=False),
            rd.rnea(model, q, qd, qdd, gravity=[0.0, 0.0, -3.7], friction=False),
            rtol=1e-14,
            atol=1e-14,
        )


def test_controllers_give_the_core_numbers_on_rigid_and_geared_models():
    for name in ("puma560", "three_dof_geared"):
        model = rd.load_robot(name)
        ct = ComputedTorque(model, omega=20.0)
        pd = PDGravity(model, kp=np.full(model.nq, 100.0), kd=np.full(model.nq, 20.0))
        rng = np.random.default_rng(0)
        q, qd, qdd = rng.uniform(-1, 1, (3, model.nq))
        ref = Reference(q + 0.01, qd, qdd)
        out = ct.update(0.0, q, qd, ref)
        e = ref.q - q
        w = ref.qdd + ct.kd * (ref.qd - qd) + ct.kp * e  # Khalil [9.24]
        expected = np.clip(rd.rnea(model, q, qd, w), -model.effort_limit, model.effort_limit)
        np.testing.assert_allclose(out.tau, expected, rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(pd._gravity(q), rd.gravity_torques(model, q), rtol=1e-10, atol=1e-10)


def test_dynamics_node_logic_uses_the_core():
    model = rd.load_robot("rx90")
    svc = DynamicsServices(model)
    assert svc._inverse_dynamics.path == "core"
