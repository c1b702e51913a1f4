"""The observer's thresholds from a recording of collision-free motion: above every residual of it
with the margin asked, no alarm over it, and a push of a tenth of an effort limit still detected."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.control import ComputedTorque
from robot_dynamics.errors import InputError
from robot_dynamics.observers import MomentumObserver, tune_thresholds
from robot_dynamics.simulation import simulate
from robot_dynamics.trajectory import plan

MODEL = rd.load_robot("iiwa14")
#: The observer's model: link masses and inertias 10 % off the simulated arm's.
EST = MODEL.replace(mass=MODEL.mass * 1.1, inertia_com=MODEL.inertia_com * 1.1)
START = np.full(MODEL.nq, 0.2)
MOVE = plan("quintic", START, START + np.resize([0.5, -0.4, 0.3, 0.8, -0.6, 1.0], MODEL.nq), duration=1.0)


def recorded_run(seed: int, disturbance=None, duration: float = 1.2) -> SimpleNamespace:
    """The iiwa14 along MOVE under computed torque on EST, 1 kHz, velocity noise 1e-3 rad/s and
    position noise 1e-5 rad: t, q, qd, tau as a recording holds them."""
    res = simulate(MODEL, ComputedTorque(EST), MOVE, duration=duration, q0=START, progress=False, disturbance=disturbance)
    rng = np.random.default_rng(seed)
    return SimpleNamespace(t=res.t, q=res.q + rng.normal(0, 1e-5, res.q.shape),
                           qd=res.qd + rng.normal(0, 1e-3, res.qd.shape), tau=res.tau, joint_names=MODEL.joint_names)


@pytest.fixture(scope="module")
def free() -> SimpleNamespace:
    return recorded_run(0)


def _observe(obs: MomentumObserver, rec: SimpleNamespace) -> list:
    return [obs.update(rec.t[k], rec.q[k], rec.qd[k], rec.tau[k]) for k in range(rec.t.size)]


@pytest.mark.parametrize("relative", [0.05, "fit"])
def test_thresholds_keep_the_margin_over_every_residual_and_a_push_is_still_detected(free, relative) -> None:
    tuning = tune_thresholds(EST, free, margin=1.5, relative=relative)
    # the residuals are the observer's own over the recording, at its sample times
    outs = _observe(MomentumObserver(EST, relative=tuning.relative, threshold=tuning.threshold), free)
    r = np.array([o.external_torque for o in outs])
    np.testing.assert_allclose(tuning.residual, r, rtol=0, atol=1e-12)
    np.testing.assert_allclose(tuning.peak, np.abs(r).max(axis=0), rtol=0, atol=0)
    assert np.all(tuning.peak > 1e-3)  # the model's error and the noise leave residuals on every joint
    np.testing.assert_allclose(tuning.thresholds(), np.array([o.threshold for o in outs]), rtol=1e-12, atol=1e-12)
    assert np.all(tuning.thresholds() >= 1.5 * np.abs(r) - 1e-12)
    np.testing.assert_allclose(tuning.worst_margin, 1.5, rtol=1e-9)  # the tightest sample keeps exactly the margin
    assert tuning.false_alarms() == 0 and not any(o.collision for o in outs)
    assert tuning.velocity == "recorded" and tuning.peak_time[1] == free.t[np.argmax(np.abs(r[:, 1]))]
    for j in range(MODEL.nq):
        step = np.zeros(MODEL.nq)
        step[j] = 0.1 * MODEL.effort_limit[j]
        pushed = recorded_run(10 + j, lambda t, step=step: step if t >= 0.5 else np.zeros(MODEL.nq), duration=0.6)
        outs = _observe(tuning.observer(EST), pushed)
        assert not any(o.collision for o in outs if o.t < 0.5), MODEL.joint_names[j]
        first = next(o for o in outs if o.collision)
        assert first.t - 0.5 <= 0.005 and first.joint_index >= j, (MODEL.joint_names[j], first.t)


def test_the_fitted_relative_part_gives_the_smallest_mean_threshold(free) -> None:
    fit = tune_thresholds(EST, free, relative="fit")
    assert np.all(fit.relative >= 0) and np.any(fit.relative > 0)
    for fixed_relative in (0.0, 0.02, 0.05, 0.1):
        other = tune_thresholds(EST, free, relative=fixed_relative)
        assert np.all(fit.thresholds().mean(axis=0) <= other.thresholds().mean(axis=0) + 1e-12), fixed_relative
    no_relative = tune_thresholds(EST, free, relative=0.0)
    np.testing.assert_allclose(no_relative.threshold, 1.5 * no_relative.peak, rtol=1e-12)


def test_floor_margin_and_a_recording_without_velocities(free) -> None:
    floor = np.full(MODEL.nq, 0.5)
    tuning = tune_thresholds(EST, free, margin=2.0, relative=0.0, floor=floor)
    np.testing.assert_allclose(tuning.threshold, np.maximum(0.5, 2.0 * tuning.peak), rtol=1e-12)
    assert np.all(tuning.worst_margin >= 2.0 - 1e-9) and np.any(tuning.worst_margin > 2.5)  # the floor's spare margin
    no_qd = SimpleNamespace(t=free.t, q=free.q, qd=None, tau=free.tau)
    diff = tune_thresholds(EST, no_qd)
    assert diff.velocity == "differentiated"
    assert diff.false_alarms() == 0 and np.all(np.isfinite(diff.threshold))
    # central differences of positions noisy to 1e-5 rad at 1 kHz: about 7e-3 rad/s of velocity noise
    assert np.all(diff.peak > tune_thresholds(EST, free).peak)


def test_segments_restart_the_observer(free) -> None:
    """Two recordings back to back, the second's clock starting again: each segment starts the
    observer anew and the peaks are those of one."""
    twice = SimpleNamespace(t=np.concatenate([free.t, free.t]), q=np.vstack([free.q, free.q]),
                            qd=np.vstack([free.qd, free.qd]), tau=np.vstack([free.tau, free.tau]),
                            segment=np.repeat([0, 1], free.t.size))
    one, two = tune_thresholds(EST, free), tune_thresholds(EST, twice)
    np.testing.assert_allclose(two.peak, one.peak, rtol=0, atol=0)
    np.testing.assert_array_equal(two.residual[free.t.size:], one.residual)


def test_the_table_and_the_parameters(free) -> None:
    tuning = tune_thresholds(EST, free, gain=50.0)
    lines = tuning.table().splitlines()
    assert lines[0].split() == ["joint", "peak", "|r|", "at", "t", "[s]", "relative", "threshold", "margin"]
    row = lines[2 + 3].split()
    assert row[0] == "iiwa_joint_4" and float(row[1]) == pytest.approx(tuning.peak[3], rel=1e-3)
    assert float(row[4]) == pytest.approx(tuning.threshold[3], rel=1e-3) and row[5] == "1.5"
    params = tuning.parameters()
    assert params["joints"] == list(MODEL.joint_names) and params["gain"] == [50.0] * MODEL.nq
    assert params["thresholds"] == tuning.threshold.tolist() and params["relative"] == [0.05] * MODEL.nq


def test_bad_inputs_are_named(free) -> None:
    with pytest.raises(InputError, match="margin: expected a safety factor >= 1, got 0.5"):
        tune_thresholds(EST, free, margin=0.5)
    with pytest.raises(InputError, match="relative: expected a number, 7 numbers or 'fit', got 'best'"):
        tune_thresholds(EST, free, relative="best")
    with pytest.raises(InputError, match="floor: .*>= 0"):
        tune_thresholds(EST, free, floor=-1.0)
    with pytest.raises(InputError, match="differ from the model's"):
        tune_thresholds(rd.load_robot("puma560"), free)
    bad = SimpleNamespace(t=free.t, q=free.q, qd=free.qd, tau=free.tau.copy())
    bad.tau[5, 2] = np.nan
    with pytest.raises(InputError, match="recording: tau has NaN"):
        tune_thresholds(EST, bad)
    with pytest.raises(InputError, match=r"recording: q expected shape \(1201, 7\)"):
        tune_thresholds(EST, SimpleNamespace(t=free.t, q=free.q[:, :6], qd=None, tau=free.tau))
    with pytest.raises(InputError, match="not strictly increasing"):
        tune_thresholds(EST, SimpleNamespace(t=free.t[::-1], q=free.q, qd=None, tau=free.tau))
    with pytest.raises(InputError, match=r"recording: segment expected shape \(1201,\)"):
        tune_thresholds(EST, SimpleNamespace(t=free.t, q=free.q, qd=None, tau=free.tau, segment=np.zeros(3)))
    with pytest.raises(InputError, match="recording: expected t"):
        tune_thresholds(EST, object())
