"""Controllers and the dynamics node compute per tick with the core (the engine)."""

from __future__ import annotations

from pathlib import Path

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


def test_dynamics_node_logic_calls_the_public_rnea():
    """No detour through codegen: the node's answers are rd.rnea's, on rigid and geared robots."""
    from types import SimpleNamespace

    for name in ("rx90", "three_dof_geared"):
        model = rd.load_robot(name)
        svc = DynamicsServices(model)
        q = np.linspace(-0.5, 0.7, model.nq)
        msg = SimpleNamespace(name=list(model.joint_names)[::-1], position=list(q[::-1]), velocity=[], effort=[])
        ok, tau_g, status = svc.gravity_compensation(msg)
        assert ok and status == "ok"
        np.testing.assert_array_equal(tau_g, rd.rnea(model, q, np.zeros(model.nq), np.zeros(model.nq)))
        np.testing.assert_allclose(tau_g, rd.gravity_torques(model, q), rtol=1e-12, atol=1e-12)
    src = (Path(rd.__file__).parent / "ros" / "logic.py").read_text(encoding="utf-8")
    assert "codegen" not in src
