"""Shared fixtures: bundled robots, random trees, random states."""

from __future__ import annotations

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.testing import random_tree_urdf

BUNDLED = rd.list_robots()


def random_state(model: rd.RobotModel, rng: np.random.Generator, shape: tuple[int, ...] = ()):
    """Random (q, qd, qdd) within the joint limits (unlimited joints: [-pi, pi])."""
    lo = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    hi = np.where(np.isfinite(model.upper), model.upper, np.pi)
    q = rng.uniform(lo, hi, size=shape + (model.nq,))
    qd = rng.normal(0.0, 1.5, size=shape + (model.nq,))
    qdd = rng.normal(0.0, 3.0, size=shape + (model.nq,))
    return q, qd, qdd


def frictionless(model: rd.RobotModel) -> rd.RobotModel:
    """The same robot without friction (peer libraries do not model it in rnea)."""
    return model.replace(viscous=np.zeros(model.nq), coulomb=np.zeros(model.nq))


@pytest.fixture(params=BUNDLED)
def bundled(request) -> rd.RobotModel:
    return rd.load_robot(request.param)


@pytest.fixture(params=range(4), ids=lambda s: f"tree{s}")
def random_tree(request) -> rd.RobotModel:
    rng = np.random.default_rng(1000 + request.param)
    return rd.load_urdf(random_tree_urdf(rng, 12, n_fixed=3))


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


@pytest.fixture(params=[1, 2], ids=["1 thread", "2 threads"])
def threads(request):
    """The engine's batches on one thread, then on two (restored afterwards)."""
    before = rd.get_num_threads()
    rd.set_num_threads(request.param)
    yield request.param
    rd.set_num_threads(before)
