"""Operation counts of the Stewart Coriolis/centripetal matrices beside Lopes (2009) Table 1,
and the platform's matrix from the paper's definition by symbolic differentiation."""

from __future__ import annotations

import numpy as np
import sympy as sp

from robot_dynamics.closedchain import stewart as st
from robot_dynamics.closedchain import stewart_opcount as oc


def test_counting_rules():
    a, b, c, d = sp.symbols("a b c d")
    assert oc._count_expr(a * b + c) == (1, 1, 0, 0)
    assert oc._count_expr((a + b) / (c * d)) == (1, 1, 1, 0)
    assert oc._count_expr(-a * b) == (0, 1, 0, 0)
    assert oc._count_expr(a**3) == (0, 2, 0, 0)
    assert oc._count_expr(1 / sp.sqrt(a)) == (0, 0, 1, 1)
    # cse shares the common product
    assert oc.count_operations([a * b + c, a * b + d]) == (2, 1, 0, 0)


def test_platform_coriolis_matrix_equals_symbolic_derivative_of_the_paper():
    params = st.load_stewart_parameters()
    mats, syms = oc.coriolis_expressions(("platform",))
    rng = np.random.default_rng(1)
    x = np.array([0.1, -0.2, 2.3, 0.3, -0.2, 0.25])
    xd = rng.normal(size=6)
    sub = dict(zip(syms["x"], x))
    sub.update(zip(syms["xd"], xd))
    sub.update({syms["masses"][0]: params.m_P})
    sub.update(zip(syms["I_P"], params.I_P))
    V_sym = np.array(mats["platform"].xreplace(sub).evalf(), dtype=float)
    T = st._block_T(st._euler_jacobian(x[None]))
    Td = np.zeros((1, 6, 6))
    Td[:, 3:, 3:] = st._euler_jacobian_dot(x[None], xd[None])
    V_num = st._platform_terms(params, x[None], xd[None], T, Td).V[0]
    np.testing.assert_allclose(V_num, V_sym, atol=1e-12)


def test_operation_counts_beside_table1():
    counts = oc.operation_counts()
    legs = [counts[k] for k in oc.KINDS[1:]]
    total = counts["total"]
    assert total.add == counts["platform"].add + 6 * sum(c.add for c in legs)
    assert total.mul == counts["platform"].mul + 6 * sum(c.mul for c in legs)
    paper = oc.PAPER_TABLE1["total"]
    # the paper's own totals are the sum of its rows
    rows = [oc.PAPER_TABLE1[k] for k in oc.KINDS]
    assert paper[0] == rows[0][0] + 6 * sum(r[0] for r in rows[1:])
    # same order as the generalized-momentum column, far below Lagrange (101,483 / 177,095)
    assert 0.5 < total.add / paper[0] < 2.0 and 0.5 < total.mul / paper[1] < 2.0
    assert total.add < 101_483 / 5 and total.mul < 177_095 / 5
    # sharing the leg kinematics saves operations
    assert counts["shared program"].add <= total.add and counts["shared program"].mul < total.mul
    text = oc.format_counts(counts)
    assert "rotating piston" in text and "8708" in text
