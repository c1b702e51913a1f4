"""The compiled kernels at their boundary: lazy numba, the disk cache, one-state dispatch, checks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics import kernels
from robot_dynamics.testing import random_tree_urdf


RUN = r"""
import sys
import numpy as np
import robot_dynamics as rd
assert "numba" not in sys.modules, "import robot_dynamics imported numba"
m = rd.load_robot("planar2")
q = np.array([0.3, -0.4])
print(rd.rnea(m, q, q, q).tolist(), rd.rnea(m, q, q, q).tolist())
"""


def _cache_files(root: Path) -> dict[str, float]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.suffix in (".nbi", ".nbc")}


def test_import_is_lazy_and_compiled_code_is_cached_on_disk(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    first = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True, check=True)
    files = _cache_files(tmp_path)
    assert any(name.endswith(".nbi") for name in files) and any(name.endswith(".nbc") for name in files)
    second = subprocess.run([sys.executable, "-c", RUN], env=env, capture_output=True, text=True, check=True)
    assert first.stdout == second.stdout
    assert _cache_files(tmp_path) == files, "a warm cache was compiled again instead of loaded"


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
    model = rd.load_urdf(urdf)
    z = np.zeros(2)
    with pytest.raises(rd.SingularityError, match="'j2' moves no inertia"):
        rd.aba(model, z, z, z)
    with pytest.raises(rd.SingularityError, match="'j2' moves no inertia.*sample 0 of the batch"):
        rd.aba(model.replace(rotor_inertia=np.array([0.0, 0.0])), np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((2, 2)))
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


def test_every_batch_kernel_keeps_one_specialisation_whatever_arrays_the_caller_passes():
    """Read-only (np.broadcast_to's, or a caller's), broadcast, list and 1-D inputs all reach the
    kernels as writeable C float64 arrays: a second specialisation would compile for seconds on
    its first use (found by bench/fuzz.py as a 29 s aba call)."""
    compiled = kernels.compiled()
    for robot in ("puma560", "three_dof_geared"):
        m = rd.load_robot(robot)
        for rows in (2, kernels.SERIAL_BELOW + 16):  # in the calling thread, and on the pool
            Q = np.random.default_rng(0).uniform(-1, 1, (rows, m.nq))
            Qr = Q.copy()
            Qr.flags.writeable = False
            _call_everything(m, [(Q, Q, Q), (Q, Q[:1], Q), (Q[:1], Q, Qr), (Qr, Qr, Q), (Q[0], Q, Q), (Q.tolist(), Q, Q)])
    several = {name: [str(s) for s in f.signatures] for name in dir(compiled)
               if name.endswith(("_parallel", "_rows")) and hasattr(getattr(compiled, name), "signatures")
               and len(getattr(compiled, name).signatures) > 1
               for f in [getattr(compiled, name)]}
    assert not several, several


def _call_everything(m, cases):
    for a, b, c in cases:
        rd.rnea(m, a, b, c), rd.aba(m, a, b, c), rd.crba(m, a), rd.coriolis_matrix(m, a, b)
        rd.rnea(m, a, b, c, gravity=(0.0, 0.0, -9.8)), rd.aba(m, a, b, c, gravity=np.array([0.0, 0.0, -9.8]))
        rd.frame_pose(m, a), rd.jacobian(m, a)
        if np.shape(a) == np.shape(b):
            rd.jacobian_dot_qdot(m, a, b), rd.mechanical_energy(m, a, b)


def test_openmp_threads_sleep_between_batches_unless_the_user_says_otherwise():
    """Spinning pool threads would take the core from one-state calls (simulate, the nodes)."""
    code = "import os, robot_dynamics; print(os.environ['OMP_WAIT_POLICY'])"
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip() == "PASSIVE"
    env["OMP_WAIT_POLICY"] = "ACTIVE"
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip() == "ACTIVE"


def test_small_batches_run_in_the_calling_thread_and_equal_the_parallel_ones():
    model = rd.load_robot("iiwa14")
    n = kernels.SERIAL_BELOW
    assert kernels.chunks(n - 1) == 1 and kernels.chunks(n) > 1
    rng = np.random.default_rng(5)
    Q, QD, QDD = rng.uniform(-1, 1, (3, n, model.nq))
    tau = rd.rnea(model, Q, QD, QDD)  # parallel chunks
    np.testing.assert_array_equal(rd.rnea(model, Q[:-1], QD[:-1], QDD[:-1]), tau[:-1])  # one chunk, same numbers
    np.testing.assert_array_equal(rd.aba(model, Q[:-1], QD[:-1], tau[:-1]), rd.aba(model, Q, QD, tau)[:-1])
    np.testing.assert_array_equal(rd.crba(model, Q[:-1]), rd.crba(model, Q)[:-1])
    np.testing.assert_array_equal(rd.jacobian(model, Q[:-1]), rd.jacobian(model, Q)[:-1])
    np.testing.assert_array_equal(rd.mechanical_energy(model, Q[:-1], QD[:-1]), rd.mechanical_energy(model, Q, QD)[:-1])


def test_a_refused_one_state_call_is_a_plain_type_error():
    """A list, a batch or integers leave the locked one-state kernel at once (the public call
    then takes the general path) instead of numba typing every argument to explain itself."""
    model = rd.load_robot("puma560")
    rd.rnea(model, np.zeros(6), np.zeros(6), np.zeros(6))
    fn = kernels.one_state("rnea_one")
    km = kernels.kernel_model(model)
    for bad in ([0.0] * 6, np.zeros((1, 6)), np.zeros(6, dtype=int)):
        with pytest.raises(TypeError, match="not float64 C-contiguous vectors"):
            fn(km.buffer, bad, np.zeros(6), np.zeros(6), np.empty(6), km.work)
    assert len(fn.signatures) == 1
