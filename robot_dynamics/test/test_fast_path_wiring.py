"""The controllers and the dynamics node take the fastest available inverse dynamics."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.codegen import tick_inverse_dynamics
from robot_dynamics.control import ComputedTorque, PDGravity, Reference
from robot_dynamics.ros.logic import DynamicsServices

HAVE_NUMBA = importlib.util.find_spec("numba") is not None


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ROBOT_DYNAMICS_CACHE", str(tmp_path))
    return tmp_path


def test_tick_path_is_compiled_with_numba_and_the_core_without(cache, monkeypatch):
    model = rd.load_robot("planar2")
    fn = tick_inverse_dynamics(model)
    assert fn.path == ("compiled" if HAVE_NUMBA else "core")
    q, qd, qdd = np.array([0.3, -0.7]), np.array([1.0, 2.0]), np.array([-0.5, 0.4])
    np.testing.assert_allclose(fn(q, qd, qdd), rd.rnea(model, q, qd, qdd), rtol=1e-12, atol=1e-12)
    monkeypatch.setenv("ROBOT_DYNAMICS_NO_CODEGEN", "1")
    assert tick_inverse_dynamics(model).path == "core"


def test_controllers_use_it_and_give_the_core_numbers(cache):
    model = rd.load_robot("puma560")
    ct = ComputedTorque(model, omega=20.0)
    pd = PDGravity(model, kp=np.full(6, 100.0), kd=np.full(6, 20.0))
    for c in (ct, pd):
        assert c.inverse_dynamics.path == ("compiled" if HAVE_NUMBA else "core")
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-1, 1, (3, 6))
    ref = Reference(q + 0.01, qd, qdd)
    out = ct.update(0.0, q, qd, ref)
    e = ref.q - q
    w = ref.qdd + ct.kd * (ref.qd - qd) + ct.kp * e  # Khalil [9.24]
    expected = np.clip(rd.rnea(model, q, qd, w), -model.effort_limit, model.effort_limit)
    np.testing.assert_allclose(out.tau, expected, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(pd._gravity(q), rd.gravity_torques(model, q), rtol=1e-10, atol=1e-10)


def test_dynamics_node_logic_uses_it(cache):
    model = rd.load_robot("rx90")
    svc = DynamicsServices(model)
    assert svc._inverse_dynamics.path == ("compiled" if HAVE_NUMBA else "core")
