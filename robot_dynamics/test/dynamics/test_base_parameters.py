"""Base inertial parameters: full column rank, same rank as the full regressor, same torques."""

import numpy as np
import pytest
import sympy

import robot_dynamics as rd
from robot_dynamics.dynamics.base_parameters import base_parameters, grouping_rules, random_states
from robot_dynamics.dynamics.regressor import regressor, standard_parameter_names, standard_parameters
from robot_dynamics.testing import random_tree_urdf


def _models():
    rng = np.random.default_rng(11)
    yield "rx90", rd.load_robot("rx90")
    yield "puma560", rd.load_robot("puma560")
    yield "iiwa14", rd.load_robot("iiwa14")
    yield "planar2", rd.load_robot("planar2")
    yield "tree", rd.load_urdf(random_tree_urdf(rng, 7))
    yield "tree_mimic", rd.load_urdf(random_tree_urdf(rng, 6, mimic=True))


@pytest.mark.parametrize("label,model", list(_models()), ids=lambda x: x if isinstance(x, str) else "")
def test_base_parameters_rank_and_torques(label, model):
    rng = np.random.default_rng(7)
    model = model.replace(
        viscous=rng.uniform(0.1, 1, model.nq), coulomb=rng.uniform(0.1, 1, model.nq),
        rotor_inertia=rng.uniform(0.01, 0.1, model.nq),
    )
    bp = base_parameters(model)
    q, qd, qdd = random_states(model, 60, np.random.default_rng(99))  # states not used to build it
    W = regressor(model, q, qd, qdd).reshape(-1, len(bp.standard_names))
    Wb = bp.reduced_regressor(W)
    s_full = np.linalg.svd(W, compute_uv=False)
    s_base = np.linalg.svd(Wb, compute_uv=False)
    rank_full = int(np.sum(s_full > 1e-9 * s_full[0]))
    assert rank_full == bp.rank == Wb.shape[1]  # same rank as the full regressor
    assert s_base[-1] > 1e-9 * s_base[0]  # full column rank
    pi = standard_parameters(model)
    np.testing.assert_allclose(Wb @ bp.base_values(pi), W @ pi, rtol=1e-10, atol=1e-9)
    np.testing.assert_allclose(W @ bp.embedded(pi), W @ pi, rtol=1e-10, atol=1e-9)
    assert len(bp.expressions()) == bp.rank


def test_planar2_by_hand():
    """Planar 2R in a vertical plane, joints about y, link 2 at d2 = 0.5 m along x.

    By hand (Lagrange): the torques depend on the inertia about the axis of link 1 grouped
    with the rotor and link 2's mass at d2 (YYR1 = YY1 + Ia1 + d2^2 M2), the two in-plane first
    moments of link 1 (MXR1 = MX1 + d2 M2, MZ1), YY2, MX2, MZ2, Ia2 and the four friction
    parameters: 11 base parameters.
    """
    model = rd.load_robot("planar2")
    bp = base_parameters(model)
    assert set(bp.names) == {
        "YYR1", "MXR1", "MZ1", "YY2", "MX2", "MZ2", "Ia2", "FV1", "FC1", "FV2", "FC2"
    }, bp.expressions()
    d2 = float(model.r_tree[1][0])
    exprs = dict(e.split(" = ") for e in bp.expressions())
    assert exprs["YYR1"] == f"YY1 + {d2 * d2:g}*M2 + Ia1"
    assert exprs["MXR1"] == f"MX1 + {d2:g}*M2"


def test_khalil_rules_rx90():
    """Khalil's symbolic grouping rules on the RX-90 (modified DH): XXRj = XXj - YYj and the
    regrouped values give the torques of the full model."""
    model = rd.load_robot("rx90")
    exprs, grouped = grouping_rules(model)
    names = standard_parameter_names(model)
    XX2, YY2 = sympy.Symbol("XX2"), sympy.Symbol("YY2")
    assert sympy.expand(exprs["XX2"]).coeff(YY2) == -1 and sympy.expand(exprs["XX2"]).coeff(XX2) == 1
    for j in range(2, 7):
        assert {f"YY{j}", f"MZ{j}", f"M{j}"} <= set(grouped)
    pi = standard_parameters(model)
    sub = {sympy.Symbol(n): v for n, v in zip(names, pi)}
    pr = pi.copy()
    for n in grouped:
        pr[names.index(n)] = 0.0
    for n, e in exprs.items():
        pr[names.index(n)] = float(sympy.sympify(e).subs(sub))
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.normal(size=(3, 5, model.nq))
    Y = regressor(model, q, qd, qdd)
    np.testing.assert_allclose(Y @ pr, Y @ pi, rtol=1e-10, atol=1e-9)
    # the numerical method eliminates at least what the rules group
    bp = base_parameters(model)
    dep = {bp.standard_names[i] for i in bp.dependent}
    assert set(grouped) <= dep


def test_rules_random_tree_with_prismatic():
    rng = np.random.default_rng(5)
    model = rd.load_urdf(random_tree_urdf(rng, 6, prismatic=True))
    exprs, grouped = grouping_rules(model)
    names = standard_parameter_names(model)
    pi = standard_parameters(model)
    sub = {sympy.Symbol(n): v for n, v in zip(names, pi)}
    pr = pi.copy()
    for n in grouped:
        pr[names.index(n)] = 0.0
    for n, e in exprs.items():
        pr[names.index(n)] = float(sympy.sympify(e).subs(sub))
    q, qd, qdd = rng.normal(size=(3, 4, model.nq))
    Y = regressor(model, q, qd, qdd)
    np.testing.assert_allclose(Y @ pr, Y @ pi, rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("case", ["th8-general", "th8-simplified", "stanford-general", "rx90-general", "iiwa14", "puma560"])
def test_base_parameters_reproduce_the_torques_and_the_rank(case):
    """n_base equals the regressor's rank on independent states, and the embedded base
    parameters give the same torques (the TH8, whose link 1 has only zero columns, once lost
    its MZ3 + MZ4 group: QR after an exactly zero column mis-measures the next ones)."""
    from robot_dynamics.codegen.khalil import table_7_5_robot
    from robot_dynamics.dynamics.base_parameters import random_states
    from robot_dynamics.dynamics.regressor import regressor, standard_parameters

    name, _, kind = case.partition("-")
    model = table_7_5_robot(name, kind) if kind else rd.load_robot(name)
    bp = rd.base_parameters(model)
    q, qd, qdd = random_states(model, 200, np.random.default_rng(11))
    W = regressor(model, q, qd, qdd).reshape(-1, len(bp.standard_names))
    assert bp.n_base == np.linalg.matrix_rank(W)
    pi = standard_parameters(model)
    np.testing.assert_allclose(W @ bp.embedded(pi), W @ pi, atol=1e-9 * max(1.0, float(np.abs(W @ pi).max())))
