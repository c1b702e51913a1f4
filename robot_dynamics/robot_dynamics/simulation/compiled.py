"""The compiled loop of a :class:`~robot_dynamics.simulation.Simulation`: many ticks per call.

Taken when the engine can run the tick itself: a joint-space
:class:`~robot_dynamics.control.ComputedTorque` controller (either scheme, predictive or not, its
friction at the measured or the desired velocity) or a
:class:`~robot_dynamics.control.PDGravity` on the current gravity torque, with joint and actuator
limits, a rigid plant
integrated by RK4, a joint reference, a constant (or no) disturbance. It sequences the engine
stages that the Python controllers and plant call (:mod:`robot_dynamics.engine.stages`: the
control law, saturation, the plant's RK4 step; ``src/engine/simulate.c``), so both ticks give
the same numbers; a tick it cannot take as the Python tick would (a FAULT, a failing
integration) is left to the Python tick, which words what happened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..control.computed_torque import ComputedTorque
from ..control.pd_gravity import PDGravity
from ..engine import engine

if TYPE_CHECKING:
    from .core import Simulation

__all__ = ["CompiledLoop", "compiled_loop", "BLOCK"]

#: Ticks per engine call: the progress bar and Ctrl-C are served between blocks.
BLOCK = 2000
#: Joints the compiled loop takes (its saturation flags are the bits of an int64).
MAX_JOINTS = 62


def _matrix(drivetrain: Any, name: str) -> np.ndarray | None:
    if drivetrain is None:
        return None
    return np.ascontiguousarray(getattr(drivetrain, name), dtype=float).ravel()


def _law(controller: Any) -> int | None:
    """The engine's law for ``controller``, or None when the engine does not run it."""
    if type(controller) is ComputedTorque and controller.friction_velocity in ("measured", "desired"):
        return int(engine().LAW_COMPUTED_TORQUE)
    if type(controller) is PDGravity and controller.gravity == "current":
        return int(engine().LAW_PD_GRAVITY)
    return None


def compiled_loop(sim: Simulation) -> CompiledLoop | None:
    """The compiled loop of ``sim``, or None when its controller, plant or options need the Python tick."""
    opt = sim.options
    if _law(sim.controller) is None:
        return None
    if sim.plant.elastic or opt.integration.integrator != "rk4" or sim.reference.task:
        return None
    if callable(opt.noise.disturbance) or sim.model.nq > MAX_JOINTS:
        return None
    return CompiledLoop(sim)


class CompiledLoop:
    """The engine's arguments for one simulation, built once (at :meth:`Simulation.reset`)."""

    def __init__(self, sim: Simulation):
        c, opt, log = sim.controller, sim.options, sim.log
        n = sim.model.nq
        self.sim = sim
        self.names = list(sim.model.joint_names)
        self.clip = np.zeros(sim.K, dtype=np.int64)
        limit = None if c.actuator_limit is None else np.ascontiguousarray(c.actuator_limit, float)
        # the engine's rd_sim and rd_sim_log, field by field (engine.h)
        position, predictive, desired = (
            (c.scheme == "position", c.predictive, c.friction_velocity == "desired") if isinstance(c, ComputedTorque)
            else (False, False, False))
        self.call = dict(
            ctrl=c.model.engine_model, plant=sim.model.engine_model, law=_law(c),
            substeps=opt.integration.substeps, last=sim.K - 1, position=position,
            predictive=predictive, desired_friction=desired, plant_friction=sim.plant.friction,
            h=opt.integration.period / opt.integration.substeps,
            smooth=sim.plant.smooth,
            kp=np.ascontiguousarray(c.kp, float), kd=np.ascontiguousarray(c.kd, float),
            limit=np.ascontiguousarray(c.effort_limit, float), actuator_limit=limit,
            ctrl_A_inv=_matrix(c.model.drivetrain, "A_inv"), plant_A=_matrix(sim.model.drivetrain, "A"),
            g_plant=sim.plant.g, pos_std=sim._pos_std, vel_std=sim._vel_std,
            QR=log.q_ref, QDR=log.qd_ref, QDDR=log.qdd_ref, ZQ=sim._zq, ZQD=sim._zqd, DIST=log.disturbance,
            Q=log.q, QD=log.qd, QDD=log.qdd, TAU=log.tau, EFF=log.effort, STATUS=log.status, CLIP=self.clip,
        )
        self._texts: dict[int, str] = {0: ""}
        self.n = n

    def run(self, end: int) -> None:
        """Ticks from ``sim.tick`` to ``end`` (or to what stops it; that tick then runs in Python)."""
        sim = self.sim
        k0 = sim.tick
        x = np.ascontiguousarray(sim._x, dtype=float).copy()
        _, done = engine().simulate(**self.call, x=x, k0=k0, k1=end)
        sim._x = x
        sim.tick = sim.log.ticks = done
        if done > k0:
            self._after(k0, done)
        if done < end:  # the engine stopped before tick `done`: the Python tick words why
            sim._tick(done)

    def _text(self, clip: int) -> str:
        """The controller's message for a tick whose saturated joints are the bits of ``clip``."""
        text = self._texts.get(clip)
        if text is None:
            names = [self.names[j] for j in range(self.n) if clip >> j & 1]
            text = self._texts[clip] = f"effort saturated on {names}"
        return text

    def _after(self, k0: int, k1: int) -> None:
        """The messages of ticks [k0, k1) and the controller's state after its last tick."""
        sim, c = self.sim, self.sim.controller
        clips = self.clip[k0:k1]
        changes = np.concatenate([[0], np.flatnonzero(clips[1:] != clips[:-1]) + 1])
        for i in changes.tolist():
            sim._note(float(sim.log.t[k0 + i]), self._text(int(clips[i])))
        k = k1 - 1
        q_meas, _ = sim._measure_at(k, sim.log.q[k], sim.log.qd[k])
        c._t_prev = float(sim.log.t[k])
        c._last_valid_q = np.array(q_meas, dtype=float)
        c._last_message = self._text(int(self.clip[k]))
