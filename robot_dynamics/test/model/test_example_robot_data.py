"""Every robot description of example-robot-data (the URDFs of real robots that Pinocchio's
community maintains: arms, quadrupeds, humanoids, hands, drones) loads, or is refused with the
package's own error naming why; where Pinocchio loads the same file with the same coordinates,
rnea, crba and aba agree with it.
"""

from __future__ import annotations

import sysconfig
import warnings
from pathlib import Path

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.errors import ModelError, SingularityError


def _robots_folder() -> Path:
    """example-robot-data's robots/: the PyPI wheel (cmeel prefix) or the ROS package's share."""
    candidates = [Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"]
    try:
        from ament_index_python.packages import get_package_share_directory

        candidates.append(Path(get_package_share_directory("example-robot-data")) / "robots")
    except Exception:  # noqa: BLE001 - not a ROS environment, or the package is not installed
        pass
    for c in candidates:
        if c.is_dir():
            return c
    raise AssertionError("example-robot-data is a test dependency: pip install example-robot-data")


ROBOTS = _robots_folder()
FILES = sorted(ROBOTS.glob("**/*.urdf"))

#: Descriptions that are wrong as published, and the words our error uses to say why.
REFUSED = {
    "alex_description/urdf/alex_psyonic_hands.urdf": "mimics 'index_q1', which is not a movable joint",
    "romeo_description/urdf/romeo_laas_small.urdf": "negative principal moment",
    "ur_description/urdf/ur3.urdf": "no links",  # an empty <robot> left by a xacro conversion
}


def test_the_zoo_is_there():
    assert len(FILES) >= 60


@pytest.mark.parametrize("path", FILES, ids=[str(f.relative_to(ROBOTS)) for f in FILES])
def test_real_description_loads_and_matches_pinocchio(path):
    name = str(path.relative_to(ROBOTS))
    if name in REFUSED:
        with pytest.raises(ModelError, match=REFUSED[name]) as info:
            rd.load_urdf(path)
        assert "\n" not in str(info.value)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = rd.load_urdf(path)
    if model.nq == 0:
        return
    from peer import require_pinocchio

    pin = require_pinocchio()
    try:
        pm = pin.buildModelFromUrdf(str(path))
    except Exception:  # noqa: BLE001 - Pinocchio refuses some files we load (its own limits)
        return
    names = [pm.names[i] for i in range(1, pm.njoints)]
    if pm.nq != model.nq or pm.nv != model.nq or sorted(names) != sorted(model.joint_names):
        return  # continuous joints (nq 2 per joint) or mimic joints: other coordinates
    idx = [names.index(j) for j in model.joint_names]
    rng = np.random.default_rng(0)
    data = pm.createData()
    for _ in range(2):
        q = rng.uniform(-1.0, 1.0, model.nq)
        qd = rng.normal(size=model.nq)
        qdd = rng.normal(size=model.nq)
        qp, vp, ap = (np.zeros(pm.nq) for _ in range(3))
        qp[idx], vp[idx], ap[idx] = q, qd, qdd
        tau = rd.rnea(model, q, qd, qdd, friction=False)
        scale = max(1.0, float(np.abs(tau).max()))
        np.testing.assert_allclose(tau, pin.rnea(pm, data, qp, vp, ap)[idx], atol=1e-8 * scale)
        M = rd.crba(model, q)
        Mp = pin.crba(pm, data, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T  # Pinocchio fills the upper triangle
        np.testing.assert_allclose(M, Mp[np.ix_(idx, idx)], atol=1e-8 * max(1.0, float(np.abs(M).max())))
        try:
            acc = rd.aba(model, q, qd, tau, friction=False)
        except SingularityError:
            continue  # a massless subtree: refused by name (test_kernels)
        tp = np.zeros(pm.nv)
        tp[idx] = tau
        np.testing.assert_allclose(acc, pin.aba(pm, data, qp, vp, tp)[idx], rtol=1e-8, atol=1e-8 * max(1.0, float(np.abs(qdd).max())))
        np.testing.assert_allclose(acc, qdd, rtol=1e-8, atol=1e-8 * max(1.0, float(np.abs(qdd).max())))
        # the analytical derivatives (rd.rnea_derivatives / computeRNEADerivatives, and of aba)
        ix = np.ix_(idx, idx)
        ours = rd.rnea_derivatives(model, q, qd, qdd, friction=False)[:2] + rd.aba_derivatives(model, q, qd, tau, friction=False)[:2]
        theirs = pin.computeRNEADerivatives(pm, data, qp, vp, ap)[:2] + pin.computeABADerivatives(pm, data, qp, vp, tp)[:2]
        for a, b in zip(ours, theirs):
            b = np.asarray(b)[ix]
            np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-9 * max(1.0, float(np.abs(b).max())))


#: What the model checks find in the published descriptions; the other 56 that load pass them.
ISSUES = {
    "double_pendulum_description/urdf/double_pendulum.urdf": {"no_effort_limit": 2},
    "double_pendulum_description/urdf/double_pendulum_continuous.urdf": {"no_effort_limit": 2},
    "double_pendulum_description/urdf/double_pendulum_simple.urdf": {"no_effort_limit": 2},
    "human_description/robots/human.urdf": {"massless_link": 19},  # the links between a ball joint's three
    "icub_description/robots/icub.urdf": {"inertia_not_positive_definite": 10},
    "icub_description/robots/icub_reduced.urdf": {"inertia_not_positive_definite": 7},
    "iris_description/robots/iris.urdf": {"no_effort_limit": 4},
    "romeo_description/urdf/romeo.urdf": {"massless_link": 24, "no_effort_limit": 2},
    "romeo_description/urdf/romeo_small.urdf": {"triangle_inequality": 2},
    "tiago_description/robots/tiago_dual.urdf": {"no_effort_limit": 8},
}


def test_the_model_checks_on_every_published_description():
    from collections import Counter

    found, loaded = {}, 0
    for path in FILES:
        name = str(path.relative_to(ROBOTS))
        if name in REFUSED:
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", rd.ModelWarning)
            rd.load_urdf(path)
        loaded += 1
        kinds = Counter(w.message.issue.kind for w in caught if issubclass(w.category, rd.ModelWarning))
        if kinds:
            found[name] = dict(kinds)
    assert loaded == 66 and found == ISSUES


def test_cad_round_off_is_accepted_and_strict_refuses_it():
    icub = ROBOTS / "icub_description/robots/icub.urdf"
    tiago = ROBOTS / "tiago_description/robots/tiago.urdf"
    with pytest.warns(rd.ModelWarning) as record:
        assert rd.load_urdf(icub).nq == 32  # head: a principal moment of -2.4e-35 kg m^2
    issues = [w.message.issue for w in record]
    # zero tensors (five links of 0.1-0.754 kg), their round-off, and the head's -2.4e-35: all named
    assert {i.kind for i in issues} == {"inertia_not_positive_definite"} and len(issues) == 10
    assert "principal moments -2.407e-35, " in {i.name: i.message for i in issues}["head"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", rd.ModelWarning)
        assert rd.load_urdf(tiago).nq == 48  # a 1 mg antenna lumped on the base, which moves nothing: -3.5e-8
    with pytest.raises(ModelError, match=r"Link 'head'.*strict"):
        rd.load_urdf(icub, strict=True)
    with pytest.raises(ModelError, match="base_antenna_left_link"):
        rd.load_urdf(tiago, strict=True)


def test_round_off_on_a_moving_link_warns_and_real_indefiniteness_is_refused():
    text = """<robot name="r"><link name="base"/>
      <link name="arm"><inertial><mass value="2"/><inertia ixx="{ixx}" ixy="{ixy}" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
      <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
        <limit lower="-1" upper="1" effort="10" velocity="1"/></joint></robot>"""
    with pytest.warns(rd.ModelWarning, match=r"link 'arm': inertia .* not positive definite: principal moments -1e-09, ") as record:
        rd.load_urdf(text.format(ixx=0.1, ixy=0.1 + 1e-9))
    assert [w.message.issue.kind for w in record] == ["inertia_not_positive_definite"]
    with pytest.raises(ModelError, match=r"Link 'arm'.*negative principal moment -0\.0"):
        rd.load_urdf(text.format(ixx=0.1, ixy=0.15))


def test_the_end_effector_is_the_tip_of_the_longest_chain_and_the_cli_takes_a_frame(tmp_path, capsys):
    import json

    from robot_dynamics.cli import main
    from robot_dynamics.errors import InputError

    ur10 = ROBOTS / "ur_description/urdf/ur10_robot.urdf"
    model = rd.load_urdf(ur10)
    assert model.frame_names[-1] == "base"  # the last declared link sits on the fixed base
    assert model.end_effector == "tool0"
    with pytest.raises(InputError, match="fixed base"):
        model.moving_frame("base")
    for robot, tip in (("puma560", "tool0"), ("iiwa14", "iiwa_link_ee"), ("rx90", "tool0")):
        assert rd.load_robot(robot).end_effector == tip
    out = str(tmp_path)
    assert main(["simulate", "--urdf", str(ur10), "--controller", "task-pid", "--no-plot", "--no-bag",
                 "--json", "--out", out]) == 0
    data = json.loads(capsys.readouterr().out)
    assert np.isfinite(data["metrics"]["task_rms_error"])
    assert main(["simulate", "--urdf", str(ur10), "--controller", "task-pid", "--frame", "base", "--out", out]) == 2
    assert "no joint moves it" in capsys.readouterr().err
    assert main(["trajectory", "--urdf", str(ur10), "--cartesian", "0.05,0,0", "--frame", "tool0",
                 "--start", "0.4,-1.0,1.2,-0.8,1.2,0.3", "--json", "--out", out]) == 0
    capsys.readouterr()
    # the default robot's default task-space start is not singular; a singular one suggests one
    assert main(["trajectory", "--cartesian", "0.05,0,0", "--json", "--out", out]) == 0
    capsys.readouterr()
    assert main(["trajectory", "--cartesian", "0.05,0,0", "--start", "0,0,0,0,0,0", "--out", out]) == 2
    err = capsys.readouterr().err.strip()
    assert "singular" in err and "--start 0.4," in err and len(err.splitlines()) == 1


def test_zero_effort_limits_are_named_in_one_short_line(capsys, tmp_path):
    """romeo's hands have <limit effort="0">: simulate says which joints, not 33 numbers."""
    from robot_dynamics.cli import main

    romeo = ROBOTS / "romeo_description/urdf/romeo.urdf"
    assert main(["simulate", "--urdf", str(romeo), "--no-plot", "--no-bag", "--out", str(tmp_path)]) == 2
    *warned, err = capsys.readouterr().err.strip().splitlines()
    assert len(err) < 300 and err.startswith("robot-dynamics simulate: error: ") and "['LHand', 'RHand']" in err
    # before it, the model checks: five of romeo's 26 issues (24 massless fingers, the hands' zero
    # effort limits), then a line that counts the rest and says where they are listed
    assert len(warned) == 6 and all(w.startswith("robot-dynamics simulate: warning: robot 'romeo': ") for w in warned[:5])
    assert "and 21 more issues of the model checks (`robot-dynamics info`" in warned[-1]
