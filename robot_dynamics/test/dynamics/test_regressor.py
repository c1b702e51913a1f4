"""The regressor Y(q, qd, qdd): tau = Y pi equals rnea (and Pinocchio's regressor where it applies)."""

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.dynamics.regressor import (
    n_standard_parameters,
    regressor,
    standard_parameter_names,
    standard_parameters,
)
from robot_dynamics.errors import InputError
from robot_dynamics.testing import random_tree_urdf


def _with_joint_terms(model, rng):
    return model.replace(
        viscous=rng.uniform(0.1, 1.0, model.nq),
        coulomb=rng.uniform(0.1, 1.0, model.nq),
        rotor_inertia=rng.uniform(0.01, 0.5, model.nq),
    )


@pytest.mark.parametrize("name", ["planar2", "puma560", "rx90", "iiwa14"])
def test_regressor_reproduces_rnea_bundled(name):
    rng = np.random.default_rng(3)
    model = _with_joint_terms(rd.load_robot(name), rng)
    q, qd, qdd = rng.normal(size=(3, 7, model.nq))
    Y = regressor(model, q, qd, qdd)
    assert Y.shape == (7, model.nq, n_standard_parameters(model))
    tau = rd.rnea(model, q, qd, qdd)
    np.testing.assert_allclose(Y @ standard_parameters(model), tau, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("seed,mimic", [(0, False), (1, True), (2, False)])
def test_regressor_random_trees(seed, mimic):
    rng = np.random.default_rng(seed)
    model = _with_joint_terms(rd.load_urdf(random_tree_urdf(rng, 7, mimic=mimic)), rng)
    q, qd, qdd = rng.normal(size=(3, 4, model.nq))
    g = rng.normal(size=3)
    Y = regressor(model, q, qd, qdd, gravity=g)
    np.testing.assert_allclose(
        Y @ standard_parameters(model), rd.rnea(model, q, qd, qdd, gravity=g), rtol=1e-10, atol=1e-10
    )


def test_regressor_batch_shapes_and_names():
    model = rd.load_robot("puma560")
    rng = np.random.default_rng(4)
    q = rng.normal(size=(2, 3, model.nq))
    Y = regressor(model, q, np.zeros(model.nq), np.zeros(model.nq))
    assert Y.shape == (2, 3, model.nq, n_standard_parameters(model))
    Y1 = regressor(model, q[1, 2], np.zeros(model.nq), np.zeros(model.nq))
    np.testing.assert_allclose(Y[1, 2], Y1, atol=1e-14)
    names = standard_parameter_names(model)
    assert names[:10] == ["XX1", "XY1", "XZ1", "YY1", "YZ1", "ZZ1", "MX1", "MY1", "MZ1", "M1"]
    assert names[-3:] == [f"Ia{model.nq}", f"FV{model.nq}", f"FC{model.nq}"]
    # friction off: those columns are zero, and rnea(friction=False) is reproduced
    Yf = regressor(model, q, q, q, friction=False)
    np.testing.assert_allclose(
        Yf @ standard_parameters(model), rd.rnea(model, q, q, q, friction=False), atol=1e-10
    )
    with pytest.raises(InputError):
        regressor(model, np.zeros(3), np.zeros(3), np.zeros(3))


def test_regressor_matches_pinocchio_inertial_columns():
    """Pinocchio's joint-torque regressor uses [m, MS, I_o(xx,xy,yy,xz,yz,zz)] per body."""
    pin = pytest.importorskip("pinocchio")
    model = rd.load_robot("puma560")
    pm = pin.buildModelFromXML(model.description)
    data = pm.createData()
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.normal(size=(3, model.nq))
    Y = regressor(model, q, qd, qdd)
    Yp = pin.computeJointTorqueRegressor(pm, data, q, qd, qdd)
    # Our order XX XY XZ YY YZ ZZ MX MY MZ M; Pinocchio's m MX MY MZ XX XY YY XZ YZ ZZ.
    perm = [4, 5, 7, 6, 8, 9, 1, 2, 3, 0]
    for b in range(model.nb):
        jid = pm.getJointId(model.body_joint_names[b])
        np.testing.assert_allclose(
            Y[:, 10 * b : 10 * b + 10], Yp[:, 10 * (jid - 1) : 10 * jid][:, perm], rtol=1e-9, atol=1e-9
        )
