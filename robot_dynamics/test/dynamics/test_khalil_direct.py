"""Khalil's recursive direct dynamic model (7.6.2) recorded on the customised tape.

Independent check: the recorded program, evaluated, gives the core's articulated-body
accelerations ``rd.aba`` (Featherstone's algorithm, another derivation and another
implementation) at random states, with the base or the standard inertial parameters. The
operation counts are asserted exactly and printed beside the book's 889/653 and 637/423.
"""

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.codegen.direct import build_direct_program, direct_operation_counts, direct_program
from robot_dynamics.codegen.khalil import KHALIL_COUNTS, general_robot, rx90_variant, table_7_5_robot
from robot_dynamics.codegen.tape import Tape
from robot_dynamics.dynamics.regressor import standard_parameters
from robot_dynamics.errors import InputError


def _states(model, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.pi, np.pi, (n, model.nq))
    qd = rng.normal(0.0, 2.0, (n, model.nq))
    tau = rng.normal(0.0, 50.0, (n, model.nq))
    return q, qd, tau


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))


@pytest.mark.parametrize("kind", ["general", "simplified"])
@pytest.mark.parametrize("base", [True, False])
def test_rx90_direct_program_equals_aba(kind, base):
    model = rx90_variant(kind)
    program, n_par = direct_program(model, base=base, friction=False)
    assert n_par == (40 if base else 78)
    q, qd, tau = _states(model, 50, 1)
    ref = rd.aba(model, q, qd, tau, friction=False)
    assert _rel(program(q, qd, tau), ref) < 1e-10  # the batch, evaluated as arrays
    for i in range(3):  # one state at a time, as scalars
        assert _rel(program(q[i], qd[i], tau[i]), ref[i]) < 1e-10


@pytest.mark.parametrize(
    "name", ["rx90", "puma560", "iiwa14", "stanford", "general6R"]
)
def test_direct_program_with_friction_prismatic_and_oblique_axes_equals_aba(name):
    """Friction ([7.82]), a prismatic joint (Stanford) and joints whose axes are not
    coordinate axes of the parent frame (the URDF robots) against rd.aba."""
    if name == "stanford":
        model = table_7_5_robot("stanford", "general")
    elif name == "general6R":
        model = general_robot(6)
    else:
        model = rd.load_robot(name)
    rng = np.random.default_rng(2)
    model = model.replace(viscous=rng.uniform(0.5, 5.0, model.nq), coulomb=rng.uniform(0.5, 5.0, model.nq))
    program = build_direct_program(model, standard_parameters(model), friction=True)
    q, qd, tau = _states(model, 30, 3)
    assert _rel(program(q, qd, tau), rd.aba(model, q, qd, tau, friction=True)) < 1e-10


def test_direct_program_follows_gravity_and_rotor_inertia():
    """At rest with zero torque the arm falls as rd.aba says (gravity through dV_0 = -g);
    doubling Ia changes qdd as rd.aba does (H_j = a^T J* a + Ia, [7.71])."""
    model = rx90_variant("general")
    q, _, _ = _states(model, 5, 4)
    z = np.zeros_like(q)
    prog, _ = direct_program(model, base=True)
    assert np.max(np.abs(prog(q, z, z))) > 1.0
    assert _rel(prog(q, z, z), rd.aba(model, q, z, z, friction=False)) < 1e-10
    heavy = model.replace(rotor_inertia=2.0 * model.rotor_inertia)
    prog2, _ = direct_program(heavy, base=True)
    ref2 = rd.aba(heavy, q, z, z, friction=False)
    assert _rel(prog2(q, z, z), ref2) < 1e-10 and _rel(ref2, rd.aba(model, q, z, z, friction=False)) > 1e-3


def test_rx90_direct_counts_beside_khalil():
    """Our exact counts (no friction, base parameters, a division counted as a
    multiplication) beside the book's, notes after [7.79]: 889/653 and 637/423."""
    ours = {}
    for kind in ("general", "simplified"):
        c, n_par = direct_operation_counts(rx90_variant(kind), base=True, friction=False)
        km, ka = KHALIL_COUNTS[f"RX-90 {kind} inertia, base parameters, direct dynamics"]
        print(f"RX-90 {kind:10s} direct dynamics: ours {c.multiplications} mult {c.additions} add, "
              f"Khalil {km} mult {ka} add (ratio {c.multiplications / km:.2f}, {c.additions / ka:.2f})")
        ours[kind] = (c.multiplications, c.additions, c.functions, km, ka)
    assert ours == {
        "general": (732, 553, 10, 889, 653),
        "simplified": (454, 308, 10, 637, 423),
    }
    # the base parameters cut the direct model's operations too (7.5.3)
    std, _ = direct_operation_counts(rx90_variant("general"), base=False, friction=False)
    assert (std.multiplications, std.additions) == (745, 588)
    # friction ([7.82]): Fv qd and Fc sign(qd) are 2n multiplications, 2n additions and n
    # sign functions (Khalil's "n multiplications" for the inverse model leaves Fc sign uncounted)
    rng = np.random.default_rng(6)
    rough = rx90_variant("general").replace(viscous=rng.uniform(1, 5, 6), coulomb=rng.uniform(1, 5, 6))
    fr, _ = direct_operation_counts(rough, base=True, friction=True)
    nofr, _ = direct_operation_counts(rough, base=True, friction=False)
    assert (fr.multiplications - nofr.multiplications, fr.additions - nofr.additions) == (12, 12)
    assert fr.functions - nofr.functions == 6


def test_tape_division_is_one_multiplication_and_evaluates():
    t = Tape()
    x, y = t.input("x"), t.input("y")
    d = t.div(1.0, x)
    assert t.div(x, 4.0) == t.mul(x, 0.25)  # a constant divisor folds into a product
    assert t.div(0.0, x) == 0.0
    e = t.mul(t.div(-2.0, x), y)
    c = t.count([d, e])
    assert (c.multiplications, c.additions) == (3, 0)  # 1/x, -2/x, (-2/x) y
    vx, vy = np.array([2.0, -4.0]), np.array([3.0, 5.0])
    got = t.evaluate({"x": vx, "y": vy}, [d, e, t.sub(y, x)])
    np.testing.assert_array_equal(got[0], 1.0 / vx)
    np.testing.assert_array_equal(got[1], -2.0 / vx * vy)
    np.testing.assert_array_equal(got[2], vy - vx)
    with pytest.raises(ZeroDivisionError):
        t.div(x, 0.0)


def test_direct_program_rejects_bad_parameters():
    model = rd.load_robot("rx90")
    with pytest.raises(InputError, match="expected shape"):
        build_direct_program(model, np.zeros(5))
