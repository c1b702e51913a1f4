"""The engine's argument tables (module_batch.c): every batch and the compiled loop check what they
are given against one table per call, and name the argument that is wrong."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.engine import engine

G = np.array([0.0, 0.0, -9.81])


@pytest.fixture(scope="module")
def puma():
    return rd.load_robot("puma560")


def _rnea_args(model, N=4, nfx=0):
    z = np.zeros((N, model.nq))
    return [model.engine_model, z, z.copy(), z.copy(), G, np.zeros((N, nfx, 10)), False, 0.0, np.zeros((N, model.nq)),
            np.zeros(N, dtype=np.int64)]


def test_a_batch_computes_from_its_table(puma):
    args = _rnea_args(puma)
    engine().rnea_batch(*args)
    assert np.array_equal(args[8], np.tile(rd.rnea(puma, np.zeros(6), np.zeros(6), np.zeros(6)), (4, 1)))
    assert not args[9].any()


@pytest.mark.parametrize(
    "index, value, error, message",
    [
        (2, np.zeros((3, 6)), ValueError, "QD: dimension 0 is 3, expected 4"),
        (1, np.zeros((4, 5)), ValueError, "Q: dimension 1 is 5, expected 6"),
        (1, np.zeros((6, 4)).T, TypeError, "Q: expected a C-contiguous float64 array"),
        (4, np.zeros(3, dtype=np.float32), TypeError, "g: expected a C-contiguous float64 array"),
        (9, np.zeros(4), TypeError, "status: expected a C-contiguous int64 array, writeable"),
        (3, [0.0] * 6, TypeError, "QDD: expected a numpy array"),
    ],
)
def test_a_wrong_argument_is_named(puma, index, value, error, message):
    args = _rnea_args(puma)
    args[index] = value
    with pytest.raises(error, match=message):
        engine().rnea_batch(*args)


def test_read_only_outputs_and_bad_wrenches_and_frames_are_refused(puma):
    args = _rnea_args(puma)
    args[8].flags.writeable = False
    with pytest.raises(TypeError, match="OUT: expected a C-contiguous float64 array, writeable"):
        engine().rnea_batch(*args)
    args = _rnea_args(puma, nfx=1)
    args[5][2, 0, 0] = puma.nq + 5  # a wrench on a body the model does not have
    with pytest.raises(ValueError, match="FX: a wrench row names no body"):
        engine().rnea_batch(*args)
    Q = np.zeros((2, 6))
    with pytest.raises(ValueError, match="frame index 99 out of range"):
        engine().jacobian_batch(puma.engine_model, Q, 99, np.zeros((2, 6, 6)))
    with pytest.raises(ValueError, match="frame index -1 out of range"):
        engine().frame_poses_batch(puma.engine_model, Q, np.array([0, -1]), np.zeros((2, 2, 4, 4)))
    with pytest.raises(TypeError, match="expected at most 10 arguments, got 11"):
        engine().rnea_batch(*_rnea_args(puma), None)
    with pytest.raises(TypeError, match="status: required"):
        engine().rnea_batch(*_rnea_args(puma)[:9])


def test_the_compiled_loop_takes_named_fields_and_names_a_missing_or_unknown_one(puma):
    with pytest.raises(TypeError, match="plant: required"):
        engine().simulate(ctrl=puma.engine_model)
    with pytest.raises(TypeError, match="an unknown or repeated keyword argument"):
        engine().simulate(**_loop_call(puma), speed=2.0)
    call = _loop_call(puma)
    call["kp"] = np.zeros(5)
    with pytest.raises(ValueError, match="kp: dimension 0 is 5, expected 6"):
        engine().simulate(**call)
    call = _loop_call(puma)
    call["k1"] = 11  # past the log's 10 ticks
    with pytest.raises(ValueError, match="ticks out of range"):
        engine().simulate(**call)
    call = _loop_call(puma)
    call["law"] = 7
    with pytest.raises(ValueError, match="an unknown law"):
        engine().simulate(**call)


def test_the_compiled_loop_holds_a_robot_at_rest_under_gravity_compensation(puma):
    call = _loop_call(puma)
    call["desired_friction"] = True  # friction fed forward at the desired velocity, zero: no Coulomb sign of round-off
    code, done = engine().simulate(**call)
    assert (code, done) == (engine().OK, 10)
    # the reference is the rest state: computed torque holds it, the log shows gravity's torques
    tau = rd.rnea(puma, np.zeros(6), np.zeros(6), np.zeros(6))
    np.testing.assert_allclose(call["TAU"], np.tile(tau, (10, 1)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(call["Q"], 0.0, atol=1e-12)
    np.testing.assert_allclose(call["x"], 0.0, atol=1e-12)


def _loop_call(model, K=10):
    n = model.nq
    ticks = lambda: np.zeros((K, n))  # noqa: E731
    return dict(
        ctrl=model.engine_model, plant=model.engine_model, law=engine().LAW_COMPUTED_TORQUE, substeps=1, last=K - 1, position=False, predictive=False,
        desired_friction=False, plant_friction=False, h=1e-3, smooth=0.0, kp=np.full(n, 100.0), kd=np.full(n, 20.0),
        limit=np.full(n, np.inf), actuator_limit=None, ctrl_A_inv=None, plant_A=None, g_plant=G, pos_std=np.zeros(n),
        vel_std=np.zeros(n), QR=ticks(), QDR=ticks(), QDDR=ticks(), ZQ=None, ZQD=None, DIST=ticks(), Q=ticks(),
        QD=ticks(), QDD=ticks(), TAU=ticks(), EFF=ticks(), STATUS=np.zeros(K, dtype=np.int64),
        CLIP=np.zeros(K, dtype=np.int64), x=np.zeros(2 * n), k0=0, k1=K,
    )
