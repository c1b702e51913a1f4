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


def test_table1_rows_add_up_to_its_totals_except_the_lagrange_divisions():
    """Table 1's totals are platform + 6 x (four leg bodies); the Lagrange division total is
    printed 80 where its rows give 180."""
    for method, table in oc.PAPER_TABLE1_ALL.items():
        rows = [table[k] for k in oc.KINDS]
        sums = tuple(rows[0][i] + 6 * sum(r[i] for r in rows[1:]) for i in range(3))
        if method == "Lagrange":
            assert sums[:2] == table["total"][:2]
            assert (sums[2], table["total"][2]) == (180, 80)  # the printed slip
        else:
            assert sums == table["total"]


# Our implementation's counts per row (additions, multiplications, divisions, square roots),
# beside Table 1's generalized-momentum column (Maple's counts of the paper's matrices, whose
# simplification rules the paper does not give, so the two are not the same program counted).
OURS = {
    "platform": (72, 154, 0, 0),
    "translating cylinder": (321, 631, 16, 1),
    "rotating cylinder": (374, 614, 23, 2),
    "translating piston": (324, 604, 16, 1),
    "rotating piston": (374, 614, 23, 2),
    "total": (8430, 14932, 468, 36),
    "shared program": (8235, 12874, 138, 12),
}


def test_operation_counts_beside_table1():
    counts = oc.operation_counts()
    assert {k: tuple(c) for k, c in counts.items()} == OURS  # exact, row by row
    legs = [counts[k] for k in oc.KINDS[1:]]
    total = counts["total"]
    assert total.add == counts["platform"].add + 6 * sum(c.add for c in legs)
    assert total.mul == counts["platform"].mul + 6 * sum(c.mul for c in legs)
    # far below the Lagrange column (101,483 / 177,095), as the paper concludes
    assert total.add < 101_483 / 10 and total.mul < 177_095 / 10
    text = oc.format_counts(counts)
    assert "rotating piston" in text and "8708" in text
