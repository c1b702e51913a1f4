"""The engine at its boundary: nothing compiled at run time, the one-state fast path, checks, threads."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics import engine as boundary
from robot_dynamics.testing import random_tree_urdf


RUN = r"""
import json, sys
import numpy as np
import robot_dynamics as rd
m = rd.load_robot("puma560")
q = np.array([0.3, -0.4, 0.2, 0.1, -0.5, 0.6])
tau = rd.rnea(m, q, q, q)
print(json.dumps([tau.tolist(), rd.aba(m, q, q, tau).tolist(), rd.crba(m, q).tolist(), rd.rnea(m, np.stack([q, q]), q, q).tolist()]))
assert "numba" not in sys.modules, "a first dynamics call imported numba"
"""


def test_first_answers_in_a_fresh_process_compile_nothing():
    """The engine is compiled at install: a fresh process imports no JIT compiler and writes no cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA")}
    out = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True, check=True).stdout
    tau, qdd, M, batch = (np.array(x) for x in json.loads(out))
    q = np.array([0.3, -0.4, 0.2, 0.1, -0.5, 0.6])
    model = rd.load_robot("puma560")
    np.testing.assert_allclose(tau, rd.rnea(model, q, q, q), rtol=1e-14)
    np.testing.assert_allclose(qdd, q, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(M, rd.crba(model, q), rtol=1e-14)
    np.testing.assert_allclose(batch, [tau, tau], rtol=1e-14)


def test_the_engine_answers_not_implemented_for_anything_but_one_clean_state():
    """The one-state entry points take float64 C-contiguous vectors of length nq; everything else
    (a list, a batch, integers, a strided view, a NaN) goes back to the general path."""
    model = rd.load_robot("puma560")
    e = boundary.engine()
    em = model.engine_model
    data = em.create_data()
    z = np.zeros(6)
    np.testing.assert_array_equal(e.rnea(em, data, z, z, z, True), rd.rnea(model, z, z, z))
    for bad in ([0.0] * 6, np.zeros((1, 6)), np.zeros(6, dtype=int), np.zeros(7), np.zeros(12)[::2],
                np.array([np.nan, 0, 0, 0, 0, 0]), np.zeros(6, dtype=np.float32)):
        assert e.rnea(em, data, bad, z, z, True) is NotImplemented
        assert e.aba(em, data, z, bad, z, True) is NotImplemented
        assert e.crba(em, data, bad) is NotImplemented
    huge = np.array([1e200, 0, 0, 0, 0, 0])
    assert e.rnea(em, data, z, huge, z, True) is NotImplemented  # not finite: the general path words it


def test_the_engine_takes_its_model_and_a_data_of_that_model_explicitly():
    """The one-state functions take (engine Model, Data, ...): a RobotModel, another object or a
    Data of other sizes is a TypeError, not a workspace written out of its bounds."""
    e = boundary.engine()
    puma, planar = rd.load_robot("puma560"), rd.load_robot("planar2")
    em, z = puma.engine_model, np.zeros(6)
    with pytest.raises(TypeError, match="engine Model"):
        e.rnea(puma, em.create_data(), z, z, z, True)
    with pytest.raises(TypeError, match="engine Data"):
        e.rnea(em, planar.engine_model.create_data(), z, z, z, True)
    with pytest.raises(TypeError, match="engine Data"):
        e.crba(em, object(), z)
    data = e.Data(em)
    assert (data.nb, data.nq) == (6, 6) and type(data) is type(em.create_data())
    np.testing.assert_array_equal(e.crba(em, data, z), rd.crba(puma, z))


def test_the_engine_model_is_a_declared_member_reached_by_one_accessor():
    """RobotModel.engine_model: declared on the class, built once per model and kept, not pickled,
    a new one for a replaced model."""
    import functools
    import pickle

    model = rd.load_robot("puma560")
    assert isinstance(type(model).__dict__["engine_model"], functools.cached_property)
    em = model.engine_model
    assert em is model.engine_model and type(em).__name__ == "Model" and em.nq == 6
    again = pickle.loads(pickle.dumps(model))
    assert "engine_model" not in again.__dict__
    assert again.engine_model is not em and again.engine_model.nq == 6
    assert model.replace(name="other").engine_model is not em


def test_each_thread_has_its_own_data():
    """The data the public functions use is the calling thread's: one per thread, the same for
    every call of a thread on models of the same sizes, and their results equal."""
    import threading

    e = boundary.engine()
    model = rd.load_robot("puma560")
    em = model.engine_model
    assert e.thread_data(em) is e.thread_data(em)
    rng = np.random.default_rng(3)
    states = rng.uniform(-1, 1, size=(64, 3, 6))
    expected = [rd.rnea(model, *s) for s in states]
    seen, results = [], {}

    def work(k):
        seen.append(e.thread_data(em))  # kept alive here: their ids stay distinct
        results[k] = [rd.rnea(model, *s) for s in states]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(d) for d in seen}) == 4 and all(d is not e.thread_data(em) for d in seen)
    for k in range(4):
        np.testing.assert_array_equal(results[k], expected)
    assert e.thread_data(rd.load_robot("planar2").engine_model).nq == 2  # other sizes: a data of those


def test_the_extension_uses_the_public_c_api_only():
    """No private CPython call (``_Py...``) in the extension's sources, and nothing of the package
    sets the engine model on a RobotModel from outside (``object.__setattr__``)."""
    from pathlib import Path

    engine_src = Path(__file__).resolve().parents[2] / "src" / "engine"
    for name in ("module.c", "module_batch.c", "module_path.c", "module_observer.c", "module_task.c", "module.h"):
        assert "_Py" not in (engine_src / name).read_text(encoding="utf-8"), name
    package = Path(boundary.__file__).resolve().parents[1]
    for path in package.rglob("*.py"):
        assert not re.search(r"__setattr__\([^)]*engine", path.read_text(encoding="utf-8")), path


def test_a_stale_engine_build_is_refused_at_import(monkeypatch):
    import types

    fake = types.ModuleType("_robot_dynamics_engine")
    fake.LAYOUT = boundary.LAYOUT + 1
    monkeypatch.setitem(sys.modules, "_robot_dynamics_engine", fake)
    monkeypatch.setattr(boundary, "_ENGINE", None)
    with pytest.raises(ImportError, match="another version"):
        boundary.engine()


def test_one_state_dispatch_takes_any_array_like_and_gives_the_batch_numbers():
    model = rd.load_robot("puma560")
    rng = np.random.default_rng(3)
    Q, QD, QDD = rng.uniform(-1, 1, (3, 4, 6))
    batch = rd.rnea(model, Q, QD, QDD)
    for k in range(4):
        q, qd, qdd = Q[k], QD[k], QDD[k]
        np.testing.assert_allclose(rd.rnea(model, q, qd, qdd), batch[k], rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(rd.rnea(model, list(q), tuple(qd), qdd), batch[k], rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(rd.rnea(model, q.astype(np.float32).astype(np.float64), qd, qdd), rd.rnea(model, q.astype(np.float32), qd, qdd))
    strided = np.repeat(Q[0], 2)[::2]  # a non-contiguous view
    np.testing.assert_allclose(rd.rnea(model, strided, QD[0], QDD[0]), batch[0], rtol=1e-13, atol=1e-12)
    assert rd.rnea(model, np.zeros(6, dtype=int), np.zeros(6), np.zeros(6)).dtype == np.float64
    np.testing.assert_allclose(rd.crba(model, list(Q[1])), rd.crba(model, Q)[1], rtol=1e-13, atol=1e-13)
    tau = rd.rnea(model, Q, QD, QDD)
    np.testing.assert_allclose(rd.aba(model, Q[2], QD[2], tau[2]), QDD[2], rtol=1e-9, atol=1e-9)


def test_the_public_one_state_functions_go_straight_to_the_engine_only_for_the_fast_shape():
    """engine_first: (model, q, qd, x) with gravity/f_ext None and any friction goes to the engine;
    every other call runs the general function, which answers the same or words the error."""
    model = rd.load_robot("puma560")
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.uniform(-1, 1, (3, 6))
    general: list[str] = []

    def general_rnea(model, q, qd, qdd, gravity=None, f_ext=None, *, friction=True):
        general.append("general")
        return rd.rnea.__wrapped__(model, q, qd, qdd, gravity, f_ext, friction=friction)

    first = boundary.engine_first("rnea")(general_rnea)
    expected = {fr: rd.rnea.__wrapped__(model, q, qd, qdd, friction=fr) for fr in (True, False)}
    fast = [((model, q, qd, qdd), {}, True), ((model, q, qd, qdd, None), {}, True),
            ((model, q, qd, qdd, None, None), {"friction": False}, False),
            ((model, q, qd, qdd), {"gravity": None, "f_ext": None, "friction": 0}, False),
            ((model, q, qd, qdd, None), {"f_ext": None}, True),
            ((model, q, qd, qdd), {"".join(["fric", "tion"]): False}, False)]  # a keyword not interned
    for args, kwargs, fr in fast:
        general.clear()
        np.testing.assert_array_equal(first(*args, **kwargs), expected[fr])
        assert general == [], (args, kwargs)
    slow = [((model, list(q), qd, qdd), {}, True), ((model, q, qd, qdd, None, {}), {}, True),
            ((model, q, qd, qdd), {"f_ext": {}}, True)]
    for args, kwargs, fr in slow:
        general.clear()
        np.testing.assert_allclose(first(*args, **kwargs), expected[fr], rtol=1e-14, atol=1e-12)
        assert general == ["general"], (args, kwargs)
    general.clear()
    np.testing.assert_allclose(first(model, q, qd, qdd, [0, 0, -9.81]), expected[True], rtol=1e-14, atol=1e-12)
    np.testing.assert_allclose(first(model, q, qd, qdd, gravity=[0, 0, 0]), rd.rnea(model, q, qd, qdd) - rd.gravity_torques(model, q), rtol=1e-12, atol=1e-12)
    assert general == ["general", "general"]
    for args, kwargs, match in [((model, q, qd, qdd, None, None, True), {}, "positional"),
                                ((model, q, qd, qdd, None), {"gravity": None}, "multiple values"),
                                ((model, q, qd, qdd, None, None), {"f_ext": None}, "multiple values"),
                                ((model, q, qd, qdd), {"frction": True}, "unexpected keyword"),
                                ((model, q, qd), {}, "missing")]:
        with pytest.raises(TypeError, match=match):
            first(*args, **kwargs)
    with pytest.raises(ZeroDivisionError):  # the engine's own error when friction cannot be read
        first(model, q, qd, qdd, friction=type("Bad", (), {"__bool__": lambda self: 1 / 0})())
    H = rd.crba(model, q)
    np.testing.assert_array_equal(rd.crba(model, q), rd.crba.__wrapped__(model, q))
    with pytest.raises(TypeError, match="unexpected keyword"):
        rd.crba(model, q, friction=False)
    np.testing.assert_allclose(rd.crba(model, q=q), H, rtol=1e-14)


def test_the_public_one_state_functions_are_functions_to_tools():
    """Their name, documentation, signature, pickling and binding are the general function's."""
    import inspect
    import pickle

    for fn in (rd.rnea, rd.aba, rd.crba, rd.rnea_derivatives, rd.aba_derivatives):
        general = fn.__wrapped__
        assert inspect.isfunction(general) and not inspect.isfunction(fn)
        assert inspect.isroutine(fn) and callable(fn)
        assert (fn.__name__, fn.__qualname__, fn.__module__, fn.__doc__) == (general.__name__, general.__qualname__, general.__module__, general.__doc__)
        assert fn.__doc__.strip() and fn.__defaults__ == general.__defaults__
        assert inspect.signature(fn) == inspect.signature(general)
        assert pickle.loads(pickle.dumps(fn)) is fn
        assert repr(fn) == repr(general)
    sig = inspect.signature(rd.rnea)
    assert list(sig.parameters) == ["model", "q", "qd", "qdd", "gravity", "f_ext", "friction"]
    assert sig.parameters["friction"].kind is inspect.Parameter.KEYWORD_ONLY

    class Arm:
        torques = rd.rnea

    arm, model, z = Arm(), rd.load_robot("puma560"), np.zeros(6)
    assert arm.torques.__self__ is arm and arm.torques.__func__ is rd.rnea  # bound as a function is
    np.testing.assert_array_equal(Arm.torques(model, z, z, z), rd.rnea(model, z, z, z))
    with pytest.raises(TypeError, match="engine one-state function"):
        boundary.engine().EngineFirst(len, rd.rnea.__wrapped__, 4, True)
    with pytest.raises(TypeError, match="engine one-state function"):
        boundary.engine().EngineFirst(boundary.engine().rnea, rd.rnea.__wrapped__, 4, True, extra=1)


@pytest.mark.parametrize("fn", ["rnea", "aba"])
def test_non_finite_inputs_and_results_are_refused_with_the_reason(fn):
    model = rd.load_robot("puma560")
    z = np.zeros(6)
    f = getattr(rd, fn)
    with pytest.raises(rd.InputError, match="NaN or infinite"):
        f(model, np.array([np.nan, 0, 0, 0, 0, 0]), z, z)
    huge = np.array([1e200, 0, 0, 0, 0, 0])
    with pytest.raises(rd.InputError, match="not finite"):
        f(model, z, huge, z)  # v x Iv overflows
    with pytest.raises(rd.InputError, match="not finite"):
        f(model, np.zeros((3, 6)), np.stack([z, huge, z]), np.zeros((3, 6)))
    with pytest.raises(rd.InputError, match=r"expected shape \(\.\.\., 6\)"):
        f(model, np.zeros(5), np.zeros(5), np.zeros(5))


def test_huge_finite_angles_agree_with_pinocchio():
    pin = pytest.importorskip("pinocchio")
    model = rd.load_robot("puma560")
    model = model.replace(viscous=np.zeros(6), coulomb=np.zeros(6), rotor_inertia=np.zeros(6))
    pm = pin.buildModelFromXML(model.description)
    pd = pm.createData()
    q = np.array([1e30, -1e18, 3e15, 0.2, 1e22, -7e10])
    z = np.zeros(6)
    tau = rd.rnea(model, q, z, z)
    assert np.all(np.isfinite(tau))
    np.testing.assert_allclose(tau, pin.rnea(pm, pd, q, z, z), rtol=1e-9, atol=1e-9)


def test_massless_subtree_is_a_singularity_naming_the_joint():
    urdf = """<robot name="r">
      <link name="base"/>
      <link name="a"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="tip"/>
      <joint name="j1" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="j2" type="revolute"><parent link="a"/><child link="tip"/><origin xyz="0.5 0 0"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
    </robot>"""
    with pytest.warns(rd.ModelWarning, match=r"link 'tip' \(moved by joint 'j2'\) has no mass; nor has anything it carries"):
        model = rd.load_urdf(urdf)  # the loader says it at once, before any call
    z = np.zeros(2)
    with pytest.raises(rd.SingularityError, match="'j2' moves no inertia"):
        rd.aba(model, z, z, z)
    for n in (2, 6):  # six: a four-state call first (engine.h's rd_aba4), then two one-state calls
        with pytest.raises(rd.SingularityError, match="'j2' moves no inertia.*sample 0 of the batch"):
            rd.aba(model.replace(rotor_inertia=np.array([0.0, 0.0])), np.zeros((n, 2)), np.zeros((n, 2)), np.zeros((n, 2)))
    # a rotor inertia on the joint makes it well posed
    armed = model.replace(rotor_inertia=np.array([0.0, 1e-3]))
    qdd = rd.aba(armed, z, z, np.array([0.0, 2e-3]))
    np.testing.assert_allclose(qdd, [0.0, 2.0], atol=1e-12)


def test_parallel_batches_equal_one_state_calls_on_a_mimic_tree():
    model = rd.load_urdf(random_tree_urdf(np.random.default_rng(11), 8, n_fixed=2, mimic=True))
    rng = np.random.default_rng(5)
    Q, QD, QDD = rng.uniform(-1, 1, (3, 50, model.nq))
    tau = rd.rnea(model, Q, QD, QDD)
    M = rd.crba(model, Q)
    qdd = rd.aba(model, Q, QD, tau)
    for k in (0, 17, 49):
        np.testing.assert_allclose(rd.rnea(model, Q[k], QD[k], QDD[k]), tau[k], rtol=1e-13, atol=1e-12)
        np.testing.assert_allclose(rd.crba(model, Q[k]), M[k], rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(qdd, QDD, rtol=1e-8, atol=1e-8)


def test_every_batch_takes_any_arrays_the_caller_passes():
    """Read-only (np.broadcast_to's, or a caller's), broadcast, list and 1-D inputs all give the
    numbers of plain writeable arrays, serial and parallel (found by bench/fuzz.py)."""
    for robot in ("puma560", "three_dof_geared"):
        m = rd.load_robot(robot)
        for rows in (2, boundary.engine().SERIAL_BELOW + 16):  # in the calling thread, and on the pool
            Q = np.random.default_rng(0).uniform(-1, 1, (rows, m.nq))
            Qr = Q.copy()
            Qr.flags.writeable = False
            ref = _call_everything(m, [(Q, Q, Q)])[0]
            for got in _call_everything(m, [(Q, Q[:1], Q), (Q[:1], Q, Qr), (Qr, Qr, Q), (Q[0], Q, Q), (Q.tolist(), Q, Q)]):
                for a, b in zip(got, ref):
                    assert np.all(np.isfinite(a)) and a.shape[-1] == b.shape[-1]
            for a, b in zip(_call_everything(m, [(Qr, Qr, Qr)])[0], ref):
                np.testing.assert_array_equal(a, b)


def _call_everything(m, cases):
    results = []
    for a, b, c in cases:
        out = [rd.rnea(m, a, b, c), rd.aba(m, a, b, c), rd.crba(m, a), rd.coriolis_matrix(m, a, b),
               rd.rnea(m, a, b, c, gravity=(0.0, 0.0, -9.8)), rd.aba(m, a, b, c, gravity=np.array([0.0, 0.0, -9.8])),
               rd.frame_pose(m, a), rd.jacobian(m, a)]
        if np.shape(a) == np.shape(b):
            out += [rd.jacobian_dot_qdot(m, a, b), rd.mechanical_energy(m, a, b)]
        results.append(out)
    return results


def test_openmp_threads_sleep_between_batches_unless_the_user_says_otherwise():
    """Spinning pool threads would take the core from one-state calls (simulate, the nodes);
    a short spin first keeps back-to-back batches from waking sleeping threads."""
    code = "import os, robot_dynamics; print(os.environ['OMP_WAIT_POLICY'], os.environ['GOMP_SPINCOUNT'])"
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    run = lambda: subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert run().stdout.split() == ["PASSIVE", "3000"]
    env["OMP_WAIT_POLICY"], env["GOMP_SPINCOUNT"] = "ACTIVE", "0"
    assert run().stdout.split() == ["ACTIVE", "0"]


def test_small_batches_run_in_the_calling_thread_and_equal_the_parallel_ones():
    model = rd.load_robot("iiwa14")
    n = boundary.engine().SERIAL_BELOW
    threads = boundary.get_num_threads()
    boundary.set_num_threads(2)  # the pool even on a one-core machine
    try:
        rng = np.random.default_rng(5)
        Q, QD, QDD = rng.uniform(-1, 1, (3, n, model.nq))
        tau = rd.rnea(model, Q, QD, QDD)  # parallel chunks
        np.testing.assert_array_equal(rd.rnea(model, Q[:-1], QD[:-1], QDD[:-1]), tau[:-1])  # one chunk, same numbers
        np.testing.assert_array_equal(rd.aba(model, Q[:-1], QD[:-1], tau[:-1]), rd.aba(model, Q, QD, tau)[:-1])
        np.testing.assert_array_equal(rd.crba(model, Q[:-1]), rd.crba(model, Q)[:-1])
        np.testing.assert_array_equal(rd.jacobian(model, Q[:-1]), rd.jacobian(model, Q)[:-1])
        np.testing.assert_array_equal(rd.mechanical_energy(model, Q[:-1], QD[:-1]), rd.mechanical_energy(model, Q, QD)[:-1])
        boundary.set_num_threads(1)
        np.testing.assert_array_equal(rd.rnea(model, Q, QD, QDD), tau)
        np.testing.assert_array_equal(rd.frame_poses(model, Q), rd.frame_poses(model, Q[::-1])[::-1])
    finally:
        boundary.set_num_threads(threads)


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", True, None])
def test_thread_counts_are_checked(bad):
    with pytest.raises(rd.InputError, match="threads"):
        rd.set_num_threads(bad)


def test_a_used_model_pickles_without_its_engine_copy_and_still_computes():
    import pickle

    model = rd.load_robot("puma560")
    q = np.full(6, 0.2)
    tau = rd.rnea(model, q, q, q)
    assert "engine_model" in model.__dict__
    again = pickle.loads(pickle.dumps(model))
    assert "engine_model" not in again.__dict__
    np.testing.assert_array_equal(rd.rnea(again, q, q, q), tau)


def test_a_mimic_multiplier_of_zero_packs_and_keeps_the_algorithms_consistent():
    model = rd.load_urdf(random_tree_urdf(np.random.default_rng(11), 8, n_fixed=2, mimic=True))
    mimic = [i for i in range(model.nb) if model.body_joint_names[i] not in model.joint_names]
    assert mimic, "the random tree has a mimic joint"
    G = np.array(model.mimic_matrix)
    G[mimic[0]] = 0.0  # that body stays at its offset, driven by no joint
    frozen = model.replace(mimic_matrix=G)
    rng = np.random.default_rng(2)
    q, qd, qdd = rng.uniform(-1, 1, (3, model.nq))
    tau = rd.rnea(frozen, q, qd, qdd)
    assert np.all(np.isfinite(tau)) and not np.allclose(tau, rd.rnea(model, q, qd, qdd))
    # crba agrees with rnea column by column, and aba undoes rnea
    z = np.zeros(model.nq)
    bias = rd.rnea(frozen, q, z, z, friction=False)
    cols = [rd.rnea(frozen, q, z, e, friction=False) - bias for e in np.eye(model.nq)]
    np.testing.assert_allclose(rd.crba(frozen, q), np.array(cols).T, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rd.aba(frozen, q, qd, tau), qdd, rtol=1e-8, atol=1e-8)


def test_the_thread_data_remembers_the_model_it_served_by_identity_only():
    """A public one-state call reuses the engine Model of the thread's previous call only for the
    very same RobotModel: two models of the same sizes alternate, each gets its own answers, and a
    model built again from another's fields is looked up afresh."""
    a = rd.load_robot("puma560")
    b = a.replace(viscous=a.viscous + 1.0, mass=a.mass * 1.5)
    q = np.linspace(-0.5, 0.6, a.nq)
    first = {name: rd.rnea(m, q, q, q) for name, m in (("a", a), ("b", b))}
    assert not np.allclose(first["a"], first["b"])
    for _ in range(3):
        for name, m in (("a", a), ("b", b), ("a", a), ("a", a)):
            np.testing.assert_array_equal(rd.rnea(m, q, q, q), first[name])
            np.testing.assert_allclose(rd.aba(m, q, q, first[name]), q, rtol=0, atol=1e-12)
    c = b.replace()  # equal fields, another object
    np.testing.assert_array_equal(rd.rnea(c, q, q, q), first["b"])
