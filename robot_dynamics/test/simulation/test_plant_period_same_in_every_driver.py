"""One plant step for the three simulated arms: the simulation (its Python tick and its compiled
loop), the simulator node's SimulatedPlant and ros2_control's SimulatedSystem all advance with the
engine's period of a simulated arm (rd_plant_advance, :meth:`Plant.period`), so the same commands
give the same states, bit for bit: the brakes without a command (NaN on every joint), a NaN joint
at zero effort, a late period cut into steps of at most max_step (SimulatedSystem) or refused (the
node), the RK4 substeps.

The states of one command sequence at three points are written here in hex (GOLDEN) and in
robot_dynamics_control/test/test_simulated_system.cpp, which runs SimulatedSystem through the same
sequence (the PUMA 560 of urdf/puma560.urdf without a drive train, two RK4 steps per period,
max_step 0.005 s).
"""

from __future__ import annotations

import types
import warnings
from pathlib import Path

import numpy as np
import pytest

import robot_dynamics as rd
from robot_dynamics.control import PDGravity
from robot_dynamics.control.base import ControllerBase, Status
from robot_dynamics.ros.motion import MAX_SUBSTEP, SimulatedPlant
from robot_dynamics.simulation import Integration, Plant, PlantOptions, Simulation, SimulationOptions

URDF = Path(__file__).resolve().parents[2] / "urdf" / "puma560.urdf"
NAN = float("nan")
Q0 = np.array([0.1, -0.4, 0.3, 0.2, -0.5, 0.6])
C1 = np.array([10.0, -40.0, 5.0, 0.3, -0.2, 0.1])
C2 = np.array([-6.0, 30.0, -8.0, 0.2, 0.1, -0.3])
NONE = np.full(6, NAN)  # ros2_control's "no command"
PART = np.array([NAN, 5.0, NAN, NAN, NAN, NAN])  # a command on joint 2 only
SUBSTEPS, MAX_STEP, MAX_SUBSTEPS = 2, 0.005, 1000  # SimulatedSystem's: substeps 2, its default max_step

#: Cycles of SimulatedSystem: read() advances the plant by the period under the command of the
#: previous write(), then write() takes the command. Starts braked (no command since activation).
CYCLES = ([(0.002, NONE), (0.002, C1)] + [(0.002, C1)] * 5 + [(0.002, NONE)] + [(0.002, C2)] * 3
          + [(0.002, PART), (0.023, PART), (0.002, C1), (0.002, C1)])
#: After cycle 6: five periods of C1 from rest at Q0 (what the simulation can do too); after cycle
#: 10: the brakes again, then C2 (the simulator node too); after cycle 14: a NaN joint at zero
#: effort and a late period of 0.023 s cut into 5 steps of 0.0046 s (SimulatedSystem only).
GOLDEN = {
    6: ["0x1.9b0a17596c948p-4", "-0x1.9bfa4489dc4cdp-2", "0x1.35a83dc73e10fp-2", "0x1.a5a19710e28dfp-3",
        "-0x1.08130e879fbfbp-1", "0x1.706d8bcb8199dp-1", "0x1.205f521846647p-4", "-0x1.db885d4c186a9p-2",
        "0x1.ead83a33cd1d0p-2", "0x1.2cf8ef4572243p+0", "-0x1.934bcfd9cc6d1p+1", "0x1.7ebd56ca97c9cp+4"],
    10: ["0x1.9b9012a157bd3p-4", "-0x1.9d048befd864dp-2", "0x1.36814ebc4395ep-2", "0x1.af95956c343f2p-3",
        "-0x1.0acdaab846b04p-1", "0x1.6ba55187a1248p-1", "-0x1.be155eb22ea25p-7", "0x1.8259db3916021p-9",
        "-0x1.cec1982a34a16p-4", "0x1.2300d732461a8p+0", "0x1.98cc8be0e1a5fp-1", "-0x1.efc7977308d08p+4"],
    14: ["0x1.9ade91799bf26p-4", "-0x1.a380c1e672eb8p-2", "0x1.353a0ef560b9cp-2", "0x1.09e9ff7a8c6d4p-2",
        "-0x1.f2a9e50d53299p-2", "-0x1.3c971aa427132p-1", "0x1.641c57726bb64p-6", "-0x1.0e0425e897cc8p-1",
        "0x1.559d63d1336a6p-3", "0x1.ed3a7b89239d6p+0", "0x1.325c163507e7ep-1", "-0x1.4e1ccf9ae9e99p+5"],
}


def _puma() -> rd.RobotModel:
    with warnings.catch_warnings():  # the published link 3 inertia: a known issue of the bare URDF
        warnings.simplefilter("ignore")
        return rd.load_urdf(URDF)


def _golden(k: int) -> np.ndarray:
    return np.array([float.fromhex(v) for v in GOLDEN[k]])


def _held(model: rd.RobotModel, command: np.ndarray) -> np.ndarray:
    """SimulatedSystem's write(): clipped to the effort limits, NaN kept (no command on that joint)."""
    return np.where(np.isnan(command), command, np.clip(command, -model.effort_limit, model.effort_limit))


def test_the_engine_period_gives_the_stored_states():
    model = _puma()
    plant = Plant(model, PlantOptions())
    x, u = np.concatenate([Q0, np.zeros(6)]), None
    for k, (dt, command) in enumerate(CYCLES):
        r = plant.period(x, u, dt, SUBSTEPS, MAX_STEP, MAX_SUBSTEPS)
        assert r.code == 0 and not r.lagging
        if u is None or np.isnan(u).all():  # the brakes: where it was, at rest, no effort
            assert r.braked and r.steps == 0
            np.testing.assert_array_equal(r.x, np.concatenate([x[:6], np.zeros(6)]))
            np.testing.assert_array_equal(r.applied, np.zeros(6))
        else:
            assert not r.braked
            np.testing.assert_array_equal(r.applied, np.nan_to_num(u, nan=0.0))
            assert (r.steps, r.h) == ((5, 0.023 / 5) if dt == 0.023 else (SUBSTEPS, dt / SUBSTEPS))
        x, u = r.x, _held(model, command)
        if k in GOLDEN:
            np.testing.assert_array_equal(x, _golden(k), err_msg=f"cycle {k}")
    # a NaN joint is a zero effort on it, bit for bit
    zero = plant.period(x, np.nan_to_num(PART, nan=0.0), 0.002, SUBSTEPS, MAX_STEP, MAX_SUBSTEPS)
    np.testing.assert_array_equal(plant.period(x, PART, 0.002, SUBSTEPS, MAX_STEP, MAX_SUBSTEPS).x, zero.x)
    # a stall longer than max_substeps steps of max_step: those steps, the simulated time falls behind
    r = plant.period(x, C1, 0.05, SUBSTEPS, MAX_STEP, 4)
    assert r.code == 0 and r.lagging and (r.steps, r.h) == (4, MAX_STEP)
    np.testing.assert_array_equal(r.x, plant.period(x, C1, 4 * MAX_STEP, 4).x)
    # max_substeps 0: a step over max_step refuses the period, as an invalid one; the state is kept
    for dt, substeps in ((0.023, 2), (NAN, 2), (-0.002, 2), (0.0, 2), (0.002, 0)):
        r = plant.period(x, C1, dt, substeps, MAX_STEP, 0)
        assert r.refused and r.steps == 0, (dt, substeps)
        np.testing.assert_array_equal(r.x, x)


def test_the_simulator_node_gives_the_same_states():
    """SimulatedPlant with ros2_control's JointState commands (TopicBasedSystem): the brakes before
    the first command and on NaN efforts after one, then the commands; its late periods are refused."""
    model = _puma()
    node = SimulatedPlant(model, Q0, command_type="joint_state")
    now = 0.0
    for k, (dt, command) in enumerate(CYCLES[:11]):
        now += dt
        ok, status = node.step(dt, now, SUBSTEPS)
        assert ok, status
        assert ("brakes on" in status) == (k in (0, 1, 8)), (k, status)
        msg = types.SimpleNamespace(name=list(model.joint_names), effort=list(command), position=[], velocity=[])
        assert node.on_command(msg, now)[0]
        if k in GOLDEN:
            np.testing.assert_array_equal(np.concatenate([node.q, node.qd]), _golden(k), err_msg=f"cycle {k}")
    # where SimulatedSystem cuts a late period into steps of max_step, the node refuses it
    q = node.q.copy()
    ok, status = node.step(0.05, now, SUBSTEPS)
    assert not ok and "refused" in status and 0.05 / SUBSTEPS > MAX_SUBSTEP
    np.testing.assert_array_equal(node.q, q)
    # a NaN on one joint is refused by the node's message check (SimulatedSystem: zero effort there)
    msg = types.SimpleNamespace(name=list(model.joint_names), effort=list(PART), position=[], velocity=[])
    ok, status = node.on_command(msg, now)
    assert not ok and "NaN" in status


class _Scripted(ControllerBase):
    """A controller that commands the same joint torques at every tick."""

    name = "scripted"

    def __init__(self, model: rd.RobotModel, tau: np.ndarray):
        super().__init__(model)
        self.tau = tau

    def _law(self, t, dt, q, qd, reference):
        return self.tau.copy(), Status.OK, ""


def test_the_simulation_gives_the_same_states():
    """Five periods of C1 from rest at Q0: the simulation's Python tick gives the stored state."""
    model = _puma()
    options = SimulationOptions(integration=Integration(rate=500.0, substeps=SUBSTEPS))
    sim = Simulation(model, _Scripted(model, C1), Q0, 5 * 0.002, options)
    sim.reset(Q0)
    assert sim._compiled is None  # a law the engine does not run: the Python tick
    sim.run()
    assert sim.tick == 6 and not sim.diverged
    np.testing.assert_array_equal(sim.state, _golden(6))


@pytest.mark.parametrize("compiled", [False, True])
def test_every_tick_of_the_simulation_is_the_engine_period(compiled):
    """Each tick of a run (PD + gravity, friction, two substeps), compiled or not: the state of the
    next tick is Plant.period of the tick's state under its joint torques, bit for bit."""
    model = rd.load_robot("puma560")
    options = SimulationOptions(integration=Integration(rate=400.0, substeps=SUBSTEPS, compiled=compiled))
    sim = Simulation(model, PDGravity(model, kp=80.0, kd=12.0), Q0 + 0.3, 0.1, options)
    sim.reset(Q0)
    assert (sim._compiled is not None) == compiled
    log = sim.run()
    plant = Plant(model, PlantOptions())
    for k in range(log.t.size - 1):
        x = np.concatenate([log.q[k], log.qd[k]])
        r = plant.period(x, log.tau[k] + log.disturbance[k], options.integration.period, SUBSTEPS)
        assert r.code == 0
        np.testing.assert_array_equal(r.x, np.concatenate([log.q[k + 1], log.qd[k + 1]]), err_msg=f"tick {k}")
