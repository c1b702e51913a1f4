"""Generated customised Newton-Euler code equals the core's rnea; cache; fallback; counts."""

import importlib.util
import re

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.codegen import (
    fastest_rnea,
    generate,
    inverse_dynamics_function,
    khalil_comparison,
    model_key,
    operation_counts,
)
from robot_dynamics.codegen.emit import emit_module
from robot_dynamics.codegen.khalil import general_robot, table_7_5_robot
from robot_dynamics.codegen.newton_euler import build_program
from robot_dynamics.codegen.tape import Ref, Tape
from robot_dynamics.dynamics.base_parameters import base_parameters
from robot_dynamics.dynamics.regressor import standard_parameters
from robot_dynamics.testing import random_tree_urdf

HAS_NUMBA = importlib.util.find_spec("numba") is not None


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("codegen_cache")


@pytest.fixture(autouse=True)
def _cache_env(cache, monkeypatch):
    monkeypatch.setenv("ROBOT_DYNAMICS_CACHE", str(cache))


def _joint_terms(model, rng):
    return model.replace(
        viscous=rng.uniform(0.1, 1, model.nq),
        coulomb=rng.uniform(0.1, 1, model.nq),
        rotor_inertia=rng.uniform(0.01, 0.2, model.nq),
    )


def _models():
    rng = np.random.default_rng(21)
    for name in rd.list_robots():
        model = rd.load_robot(name)
        if model.drivetrain is not None and model.drivetrain.coupled:
            continue  # not generated: falls back to the core (test_coupled_gear_train_...)
        yield name, _joint_terms(model, rng)
    yield "tree", _joint_terms(rd.load_urdf(random_tree_urdf(rng, 8)), rng)
    yield "tree_mimic", _joint_terms(rd.load_urdf(random_tree_urdf(rng, 7, mimic=True)), rng)


def _rel(a, b):
    return np.abs(a - b).max() / max(np.abs(b).max(), 1.0)


@pytest.mark.parametrize("label,model", list(_models()), ids=lambda x: x if isinstance(x, str) else "")
@pytest.mark.parametrize("base", [True, False])
def test_generated_numpy_equals_rnea(label, model, base):
    """Batch (N, nq) and single (1, nq) evaluations of the emitted numpy code."""
    pi = standard_parameters(model)
    if base:
        pi = base_parameters(model).embedded(pi)
    prog = build_program(model, pi)
    ns: dict = {}
    exec(emit_module(prog.tape, prog.outputs, model.nq, header="test", numba=False), ns)
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.normal(size=(3, 64, model.nq)) * np.array([2.0, 3.0, 5.0])[:, None, None]
    ref = rd.rnea(model, q, qd, qdd)
    assert _rel(ns["rnea_numpy"](q, qd, qdd), ref) < 1e-10
    assert _rel(ns["rnea_numpy"](q[:1], qd[:1], qdd[:1])[0], ref[0]) < 1e-10


def test_fallback_paths_without_numba(monkeypatch):
    model = rd.load_robot("puma560")
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.normal(size=(3, 2, 4, model.nq))
    fn = inverse_dynamics_function(model, compiled=False)
    assert fn.path == "numpy"
    np.testing.assert_allclose(fn(q, qd, qdd), rd.rnea(model, q, qd, qdd), rtol=1e-10, atol=1e-10)
    monkeypatch.setenv("ROBOT_DYNAMICS_NO_CODEGEN", "1")
    core = inverse_dynamics_function(model, compiled=False)
    assert core.path == "core"
    np.testing.assert_allclose(core(q[0, 0], qd[0, 0], qdd[0, 0]), rd.rnea(model, q[0, 0], qd[0, 0], qdd[0, 0]))


def test_fastest_rnea_dispatch():
    model = rd.load_robot("rx90")
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.normal(size=(3, model.nq))
    fast = fastest_rnea(model, q, qd, qdd, compiled=False)
    np.testing.assert_allclose(fast, rd.rnea(model, q, qd, qdd), rtol=1e-10, atol=1e-10)
    # requests the generated code does not cover go to the core
    g = np.array([0.0, -9.81, 0.0])
    np.testing.assert_allclose(fastest_rnea(model, q, qd, qdd, gravity=g), rd.rnea(model, q, qd, qdd, gravity=g))
    f = {model.end_effector: np.array([1.0, 2, 3, 0.1, 0.2, 0.3])}
    np.testing.assert_allclose(fastest_rnea(model, q, qd, qdd, f_ext=f), rd.rnea(model, q, qd, qdd, f_ext=f))


def test_cache_key_changes_with_model():
    model = rd.load_robot("puma560")
    heavier = model.replace(mass=model.mass * 1.01)
    assert model_key(model) == model_key(rd.load_robot("puma560"))
    assert model_key(model) != model_key(heavier)
    assert model_key(model) != model_key(model.replace(gravity=np.array([0.0, 0.0, -9.8])))
    # a changed model gets its own module, which computes the changed model's torques
    a = generate(model, compiled=False)
    b = generate(heavier, compiled=False)
    assert a.path != b.path and not b.from_cache
    q = np.random.default_rng(6).normal(size=(3, model.nq))
    np.testing.assert_allclose(b.numpy_batch(q, q, q), rd.rnea(heavier, q, q, q), rtol=1e-10, atol=1e-10)
    assert generate(heavier, compiled=False).from_cache


def test_tape_folds_constants_and_shares_subexpressions():
    t = Tape()
    x, y = t.input("q0"), t.input("q1")
    assert t.mul(x, 0.0) == 0.0 and t.mul(x, 1.0) == x and t.mul(x, -1.0) == -x
    assert t.add(x, 0.0) == x and t.sub(x, x) == 0.0
    a = t.mul(x, y)
    assert t.mul(y, x) == a  # commutative, recorded once
    b = t.sub(t.neg(x), y)  # -x - y = -(x + y): one addition, sign carried
    assert isinstance(b, Ref) and b.sign == -1
    counts = t.count([a, b])
    assert (counts.multiplications, counts.additions) == (1, 1)


@pytest.mark.slow
def test_khalil_counts_reported():
    """Our exact counts beside Khalil's Table 7.5 (92n-127 / 81n-117) and Table 7.6 (RX-90).

    Counted on the generated program (each emitted multiplication and addition once, no
    friction, no end-effector wrench; see codegen/khalil.py for what Khalil's include).
    """
    rows = {r["case"]: (r["multiplications"], r["additions"], r["khalil_multiplications"], r["khalil_additions"])
            for r in khalil_comparison()}
    assert rows == {
        "general 6R, base parameters (92n-127, 81n-117)": (400, 335, 425, 369),
        "general 6R, base parameters, no rotor inertia": (395, 330, 425, 369),
        "RX-90 general inertia, standard parameters": (291, 277, 294, 283),
        "RX-90 general inertia, base parameters": (250, 232, 253, 238),
        "RX-90 simplified inertia, standard parameters": (194, 144, 202, 153),
        "RX-90 simplified inertia, base parameters": (153, 109, 160, 113),
        # Table 7.5's other robots from config/stanford_dh.yaml and config/th8_dh.yaml
        "Stanford 2RP(3R) general inertia, base parameters": (232, 215, 240, 227),
        "Stanford 2RP(3R) simplified inertia, base parameters": (130, 92, 142, 99),
        "TH8 R(2P)(3R) general inertia, base parameters": (169, 153, 175, 162),
        "TH8 R(2P)(3R) simplified inertia, base parameters": (95, 66, 104, 72),
        # the recursive direct dynamic model (7.6.2), beside the book's [Khalil 97] counts;
        # test_khalil_direct.py checks its accelerations against rd.aba
        "RX-90 general inertia, base parameters, direct dynamics": (732, 553, 889, 653),
        "RX-90 simplified inertia, base parameters, direct dynamics": (454, 308, 637, 423),
    }
    # a general n-R robot, n = 3..7: exactly 86n - 116 multiplications and 74n - 109 additions
    # with rotor inertias, beside Khalil's 92n - 127 and 81n - 117
    for n in range(3, 8):
        c, _ = operation_counts(general_robot(n), friction=False)
        assert (c.multiplications, c.additions) == (86 * n - 116, 74 * n - 109), n
    th8, _ = operation_counts(table_7_5_robot("th8", "simplified"), base=False, friction=False)
    assert (th8.multiplications, th8.additions) == (130, 98)
    # base parameters cut operations compared with the standard ones (Table 7.6's point)
    std, _ = operation_counts(general_robot(6), base=False, friction=False)
    base, _ = operation_counts(general_robot(6), base=True, friction=False)
    assert base.multiplications < std.multiplications and base.additions < std.additions


@pytest.mark.skipif(not HAS_NUMBA, reason="numba (optional extra 'fast') not installed")
def test_compiled_paths_and_cache(cache, capsys):
    model = _joint_terms(rd.load_robot("planar2"), np.random.default_rng(4))
    gm = generate(model, progress=lambda msg: None)
    assert gm.compiled and not gm.from_cache and gm.path.parent.parent == cache
    # the one compilation at run time says so, and how long it took
    err = capsys.readouterr().err
    assert "numba compiles the generated model of 'planar2'" in err and re.search(r"compiled in \d+\.\d s", err)
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.normal(size=(3, 200, model.nq)) * 3
    ref = rd.rnea(model, q, qd, qdd)
    assert _rel(gm.batch(q, qd, qdd), ref) < 1e-10
    for i in range(5):
        assert _rel(gm.single(q[i], qd[i], qdd[i]), ref[i]) < 1e-10
        out = np.empty(model.nq)
        gm.into(q[i], qd[i], qdd[i], out)
        assert _rel(out, ref[i]) < 1e-10
    # angles far from zero exercise the sine/cosine range reduction
    qf = q + 200.0
    assert _rel(gm.batch(qf, qd, qdd), rd.rnea(model, qf, qd, qdd)) < 1e-10
    again = generate(model)
    assert again.from_cache  # loaded from the cache (its time is the bench's, bench_codegen.py)
    assert "numba compiles" not in capsys.readouterr().err  # loaded, not compiled
    fn = inverse_dynamics_function(model)
    assert fn.path == "compiled"
    np.testing.assert_allclose(fn(q, qd, qdd), ref, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fn(q[0], qd[0], qdd[0]), ref[0], rtol=1e-10, atol=1e-10)
    # gravity compensation and a column of A(q) (Khalil [7.64]) as the module docstring says
    np.testing.assert_allclose(fn(q[0], 0.0, 0.0), rd.gravity_torques(model, q[0]), rtol=1e-10, atol=1e-10)
    e1 = np.eye(model.nq)[1]
    col = fn(q[0], 0.0, e1) - fn(q[0], 0.0, 0.0)
    np.testing.assert_allclose(col, rd.crba(model, q[0])[:, 1], rtol=1e-10, atol=1e-10)
    from robot_dynamics.errors import InputError

    with pytest.raises(InputError):
        fn(np.zeros(model.nq + 1), 0.0, 0.0)


def _cli(argv, capsys):
    from robot_dynamics.cli import main

    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.slow
def test_cli_codegen_counts_and_cache(capsys, cache):
    import json

    code, out, err = _cli(["codegen", "--robot", "rx90", "--no-compile", "--no-cache", "--json", "--khalil"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["robot"] == "rx90" and data["cache_dir"] == str(cache)
    assert data["multiplications"] < data["standard_parameters_counts"][0]
    assert "[2/4]" in err  # progress on stderr
    cases = {r["case"] for r in data["khalil"]}
    assert "general 6R, base parameters (92n-127, 81n-117)" in cases
    code, out, _ = _cli(["codegen", "--robot", "rx90", "--no-compile", "--expressions", "--rules"], capsys)
    assert code == 0 and "loaded from the cache" in out and "ZZR1 = ZZ1 + YY2 + YY3" in out
    rule = [ln for ln in out.splitlines() if ln.strip().startswith("XXR2 = ")]
    assert len(rule) == 2 and all("XX2 - YY2" in ln for ln in rule)  # QR and Khalil's rule agree
    code, _, err = _cli(["codegen", "--robot", "nosuchrobot"], capsys)
    assert code != 0 and "nosuchrobot" in err


@pytest.mark.skipif(not HAS_NUMBA, reason="numba (optional extra 'fast') not installed")
def test_cli_bench_runs(capsys):
    import json

    code, out, _ = _cli(["bench", "--robot", "planar2", "--batch", "200", "--rounds", "1", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    paths = {r["path"] for r in data["rows"]}
    assert "generated, compiled (numba)" in paths
    for r in data["rows"]:
        assert r["us"] > 0 and r["agreement"] < 1e-10, r
    code, _, err = _cli(["bench", "--batch", "0"], capsys)
    assert code != 0 and "--batch" in err


def test_coupled_gear_train_falls_back_to_core():
    from robot_dynamics.dynamics.regressor import regressor
    from robot_dynamics.errors import ModelError

    geared = [n for n in rd.list_robots() if (m := rd.load_robot(n)).drivetrain is not None and m.drivetrain.coupled]
    if not geared:
        pytest.skip("no bundled robot with a coupled gear train")
    model = rd.load_robot(geared[0])
    rng = np.random.default_rng(8)
    q, qd, qdd = rng.normal(size=(3, 4, model.nq))
    fn = inverse_dynamics_function(model, compiled=False)
    assert fn.path == "core"
    np.testing.assert_allclose(fn(q, qd, qdd), rd.rnea(model, q, qd, qdd))
    with pytest.raises(ModelError, match="coupled gear train"):
        regressor(model, q, qd, qdd)


def test_without_numba_uses_generated_numpy(monkeypatch):
    """When numba is not installed (optional extra 'fast'), the default is the numpy path."""
    import robot_dynamics.codegen.fast as fast
    import robot_dynamics.codegen.generated as generated

    monkeypatch.setattr(generated, "numba_available", lambda: False)
    model = rd.load_robot("puma560").replace(name="puma560_no_numba")
    fn = fast.inverse_dynamics_function(model)
    assert fn.path == "numpy" and fn.generated is not None and not fn.generated.compiled
    rng = np.random.default_rng(9)
    q, qd, qdd = rng.normal(size=(3, model.nq))
    np.testing.assert_allclose(fn(q, qd, qdd), rd.rnea(model, q, qd, qdd), rtol=1e-10, atol=1e-10)
    from robot_dynamics.errors import InputError

    with pytest.raises(InputError, match="numba"):
        generate(model, compiled=True)
