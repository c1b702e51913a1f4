"""Symbolic M_s and C_s of a gear train (Chen & Wang eq. 44) against the paper and the numeric model."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from test_drivetrain_lagrange import random_drivetrain

import robot_dynamics as rd
from robot_dynamics.cli import main
from robot_dynamics.drivetrain import virtual_chain_model
from robot_dynamics.drivetrain.symbolic import symbolic_coupling
from robot_dynamics.testing import random_tree_urdf


def test_three_dof_example_is_eq_44_exactly():
    """The printed M_s and C_s of eq. (44), with the example's ratios g14, g25, g76, g37."""
    model = rd.load_robot("three_dof_geared")
    sc = symbolic_coupling(model)
    I4, I5, I6, I7 = (sc.inertia[f"gear{k}"][0] for k in (4, 5, 6, 7))
    g14, g25, g76, g37 = -6, -4, -3, -4
    s2, c2 = sp.sin(sc.q[1]), sp.cos(sc.q[1])
    qd1, qd2, qd3 = sc.qd
    Ms = sp.Matrix([
        [I4 * g14**2 + I5, I5 * g25, I7 * g37 * s2],
        [I5 * g25, I5 * g25**2 + I6, I6 * g76 * g37],
        [I7 * g37 * s2, I6 * g76 * g37, I6 * g76**2 * g37**2 + I7 * g37**2],
    ])
    Cs = sp.Matrix([I7 * g37 * c2 * qd2 * qd3, -I7 * g37 * c2 * qd1 * qd3, I7 * g37 * c2 * qd1 * qd2])
    assert sp.simplify(sc.M_s - Ms) == sp.zeros(3, 3)
    assert sp.simplify(sc.C_s - Cs) == sp.zeros(3, 1)


@pytest.mark.parametrize("seed", [300, 301])
def test_random_gear_trains_equal_the_numeric_model(seed):
    """lambdified M_s, C_s = crba and rnea of the geared model minus its virtual chain."""
    rng = np.random.default_rng(seed)
    text = random_tree_urdf(rng, 3, n_fixed=1, continuous=True)
    primary = rd.load_urdf(text)
    geared = rd.load_urdf(text, drivetrain=random_drivetrain(primary, rng, n=4))
    virtual = virtual_chain_model(geared)
    sc = symbolic_coupling(geared)
    values = [v for _, v in sc.inertia.values()]
    symbols = [s for s, _ in sc.inertia.values()]
    M_f = sp.lambdify([sc.q, symbols], sc.M_s, "numpy")
    C_f = sp.lambdify([sc.q, sc.qd, symbols], sc.C_s, "numpy")
    n = primary.nq
    q, qd = rng.uniform(-2, 2, (5, n)), rng.normal(0, 2, (5, n))
    zero = np.zeros(3)
    Ms = rd.crba(geared, q) - rd.crba(virtual, q)
    Cs = rd.rnea(geared, q, qd, np.zeros_like(q), gravity=zero, friction=False) - rd.rnea(
        virtual, q, qd, np.zeros_like(q), gravity=zero, friction=False)
    for k in range(5):
        M_sym = np.array(M_f(q[k], values), float)
        C_sym = np.array(C_f(q[k], qd[k], values), float).ravel()
        np.testing.assert_allclose(M_sym, Ms[k], atol=1e-12 * np.abs(Ms[k]).max())
        np.testing.assert_allclose(C_sym, Cs[k], atol=1e-11 * max(np.abs(Cs[k]).max(), 1.0))
    assert np.abs(Cs).max() > 1e-2  # the velocity terms are there to be compared


def test_cli_symbolic(capsys):
    assert main(["drivetrain", "--symbolic"]) == 0
    out = capsys.readouterr().out
    assert "M_s[1,3] = -4*I_gear7*sin(q1)" not in out  # q2 is the angle of eq. (44)
    assert "M_s[1,3] = -4*I_gear7*sin(q2)" in out
    assert "C_s[2] = 4*I_gear7*qd1*qd3*cos(q2)" in out
    assert "G = G_v + G_s" in out


def test_cli_symbolic_refuses_a_robot_without_gears(capsys):
    assert main(["drivetrain", "--symbolic", "--robot", "puma560"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "gear" in err
