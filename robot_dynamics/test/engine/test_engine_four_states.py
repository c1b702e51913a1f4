"""Batches four states a call (engine.h's rd_rnea4, rd_aba4): the same doubles as one-state calls.

The engine compiles its recursions twice from one source (recursions.h), for one state and for
four states in the lanes of a vector; each lane performs the one-state operations in the same
order. These tests hold the batch to a loop of one-state calls with ``array_equal``: bit for bit,
on every bundled robot, random trees with prismatic and massless links, friction on and off,
batch sizes that leave one to three states for the one-state path, and one and two threads.
"""

from __future__ import annotations

import functools

import sys

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.engine import engine
from robot_dynamics.testing import random_tree_urdf

ROBOTS = ["puma560", "iiwa14", "rx90", "planar2", "three_dof_geared"]


def _models():
    for name in ROBOTS:
        yield name, rd.load_robot(name)
    for seed in (3, 8):
        yield f"random tree {seed}", rd.load_urdf(random_tree_urdf(np.random.default_rng(seed), 9))


MODELS = list(_models())


@pytest.mark.parametrize("name, model", MODELS, ids=[n for n, _ in MODELS])
@pytest.mark.parametrize("friction", [False, True])
def test_batches_equal_one_state_calls_bit_for_bit(name, model, friction, threads):
    rng = np.random.default_rng(len(name))
    for N in (4, 7, 203):  # 203 > SERIAL_BELOW: chunks over the threads, each ending on a remainder
        Q, QD, X = rng.uniform(-1.5, 1.5, (3, N, model.nq))
        tau = rd.rnea(model, Q, QD, X, friction=friction)
        qdd = rd.aba(model, Q, QD, X, friction=friction)
        one_tau = np.array([rd.rnea(model, Q[n], QD[n], X[n], friction=friction) for n in range(N)])
        one_qdd = np.array([rd.aba(model, Q[n], QD[n], X[n], friction=friction) for n in range(N)])
        assert np.array_equal(tau, one_tau), f"{name}: rnea batch of {N} differs from one-state calls"
        assert np.array_equal(qdd, one_qdd), f"{name}: aba batch of {N} differs from one-state calls"
        # and the physics: aba undoes rnea
        np.testing.assert_allclose(rd.aba(model, Q, QD, tau, friction=friction), X, rtol=1e-8, atol=1e-8)


def test_the_engine_takes_four_states_a_call_where_the_compiler_has_vectors():
    # the tests above would pass with the one-state path alone: the build must have the four-state
    # one (GCC and Clang, the compilers of pip and colcon on Linux)
    assert engine().LANES == 4 if sys.platform.startswith("linux") else engine().LANES in (1, 4)


def test_a_bad_state_in_a_lane_is_named_by_its_sample():
    model = rd.load_robot("puma560")
    Q = np.zeros((9, 6))
    QD = np.zeros((9, 6))
    QD[6] = 1e200  # the result overflows in lane 2 of the second four-state call
    for f in (rd.rnea, rd.aba):
        with pytest.raises(rd.InputError, match=r"not finite \(sample 6 of the batch\)"):
            f(model, Q, QD, Q)


def test_the_joint_transforms_sine_and_cosine_are_within_one_and_a_half_ulp():
    # one revolute joint about z at the origin: the frame's rotation is [[c, -s, 0], [s, c, 0], [0, 0, 1]]
    # exactly (Rodrigues' products by 0 and 1), so the pose shows the engine's sin and cos themselves
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 120
    urdf = """<robot name="r"><link name="base"/>
      <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
        <limit effort="10" velocity="1"/></joint></robot>"""
    model = rd.load_urdf(urdf)
    rng = np.random.default_rng(4)
    q = np.concatenate([rng.uniform(-1, 1, 300), rng.uniform(-100, 100, 300), rng.uniform(-2e4, 2e4, 300),
                        np.pi / 2 * np.arange(-40, 41), [0.0, 1e-300, -1e-8]])
    T = rd.frame_pose(model, q[:, None], "a")
    for got, exact in ((T[:, 0, 0], mpmath.cos), (T[:, 1, 0], mpmath.sin)):
        err = [float(abs(exact(mpmath.mpf(float(x))) - v) / np.spacing(abs(v))) if v != 0 else 0.0 for x, v in zip(q, got)]
        assert max(err) <= 1.5, f"{exact.__name__}: {max(err):.2f} ulp at q = {q[int(np.argmax(err))]!r}"
    assert np.all(np.abs(T[:, 0, 0] ** 2 + T[:, 1, 0] ** 2 - 1) <= 4.5e-16)


@pytest.mark.parametrize("name, model", MODELS, ids=[n for n, _ in MODELS])
def test_clean_rows_go_straight_to_the_engine_and_equal_the_general_path(name, model, threads):
    """(N, nq) float64 rows at the model's gravity go from rnea/aba straight into the engine's batch
    (no validation in Python); the general path (any shape, gravity, wrenches) gives the same doubles,
    and a non-finite value anywhere still raises the general path's error naming its input."""
    from robot_dynamics import engine as boundary

    rng = np.random.default_rng(len(name) + 1)
    Q, QD, X = rng.uniform(-1.5, 1.5, (3, 203, model.nq))
    pair = (model.engine_model, model.engine_model.create_data())  # the engine's model and data
    for fast, general, xname in ((rd.rnea, boundary.rnea, "qdd"), (rd.aba, boundary.aba, "tau")):
        one = functools.partial(getattr(engine(), fast.__name__), *pair)
        out = one(Q, QD, X, True)
        assert out is not NotImplemented and out.shape == Q.shape
        assert np.array_equal(out, general(model, Q, QD, X, None, None, True))
        assert one(Q, QD[:5], X, True) is NotImplemented  # rows of different counts
        assert one(Q[:, ::-1], QD, X, True) is NotImplemented  # not C-contiguous
        for k, what in enumerate(("q", "qd", xname)):
            for bad in (np.nan, np.inf):
                args = [Q.copy(), QD.copy(), X.copy()]
                args[k][117, model.nq - 1] = bad
                assert one(*args, True) is NotImplemented
                with pytest.raises(rd.InputError, match=rf"^{what}: contains NaN or infinite values"):
                    fast(model, *args)
