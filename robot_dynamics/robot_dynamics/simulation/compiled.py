"""The compiled loop of a :class:`~robot_dynamics.simulation.Simulation`: many ticks per call.

Taken when the engine can run the tick itself: a joint-space
:class:`~robot_dynamics.control.ComputedTorque` controller (either scheme, predictive or not, its
friction at the measured or the desired velocity) or a
:class:`~robot_dynamics.control.PDGravity` on the current gravity torque, with joint and actuator
limits, a rigid plant
integrated by RK4, a joint reference, a constant (or no) disturbance and no wrench. It sequences the engine
stages that the Python controllers and plant call (:mod:`robot_dynamics.engine.stages`: the
control law, saturation, the plant's RK4 step; ``src/engine/simulate.c``), so both
ticks give the same numbers; a tick it cannot take as the Python tick would (a FAULT, a failing
integration) is left to the Python tick, which words what happened. Both advance the
simulation's :class:`~robot_dynamics.simulation.tick_state.TickState`; the controller is told
of the ticks taken here through its public ``record_tick``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..control.computed_torque import ComputedTorque
from ..control.pd_gravity import PDGravity
from ..engine import engine
from .options import SimulationOptions
from .plant import Plant
from .tick_state import TickState

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


def compiled_loop(state: TickState, controller: Any, plant: Plant, options: SimulationOptions, *, task: bool,
                  python_tick: Callable[[int], None]) -> CompiledLoop | None:
    """The compiled loop of a simulation's ticks, or None when its controller, plant or options need
    the Python tick.

    Args:
        state: the simulation's ticks (its log allocated for the horizon, its noise drawn).
        controller: the simulation's controller; plant: its :class:`Plant`; options: its options.
        task: whether the reference is task-space.
        python_tick: ``python_tick(k)`` takes tick k in Python (a tick the compiled loop leaves).
    """
    if _law(controller) is None:
        return None
    if plant.elastic or options.integration.integrator != "rk4" or task:
        return None
    if callable(options.noise.disturbance) or options.noise.wrench is not None or plant.model.nq > MAX_JOINTS:
        return None
    return CompiledLoop(state, controller, plant, options, python_tick)


class CompiledLoop:
    """The engine's arguments for one simulation, built once (at :meth:`Simulation.reset`)."""

    def __init__(self, state: TickState, controller: Any, plant: Plant, options: SimulationOptions,
                 python_tick: Callable[[int], None]):
        c, opt, log = controller, options, state.log
        n = plant.model.nq
        self.state, self.controller, self.python_tick = state, controller, python_tick
        self.names = list(plant.model.joint_names)
        K = log.t.size
        self.clip = np.zeros(K, dtype=np.int64)
        limit = None if c.actuator_limit is None else np.ascontiguousarray(c.actuator_limit, float)
        # the engine's rd_sim and rd_sim_log, field by field (engine.h)
        position, predictive, desired = (
            (c.scheme == "position", c.predictive, c.friction_velocity == "desired") if isinstance(c, ComputedTorque)
            else (False, False, False))
        self.call = dict(
            ctrl=c.model.engine_model, plant=plant.model.engine_model, law=_law(c),
            substeps=opt.integration.substeps, last=K - 1, position=position,
            predictive=predictive, desired_friction=desired, plant_friction=plant.friction,
            h=opt.integration.period / opt.integration.substeps,
            smooth=plant.smooth,
            kp=np.ascontiguousarray(c.kp, float), kd=np.ascontiguousarray(c.kd, float),
            limit=np.ascontiguousarray(c.effort_limit, float), actuator_limit=limit,
            ctrl_A_inv=_matrix(c.model.drivetrain, "A_inv"), plant_A=_matrix(plant.model.drivetrain, "A"),
            g_plant=plant.g, pos_std=state.pos_std, vel_std=state.vel_std,
            QR=log.q_ref, QDR=log.qd_ref, QDDR=log.qdd_ref, ZQ=state.zq, ZQD=state.zqd, DIST=log.disturbance,
            Q=log.q, QD=log.qd, QDD=log.qdd, TAU=log.tau, EFF=log.effort, STATUS=log.status, CLIP=self.clip,
        )
        self._texts: dict[int, str] = {0: ""}
        self.n = n

    def run(self, end: int) -> None:
        """Ticks from ``state.tick`` to ``end`` (or to what stops it; that tick then runs in Python)."""
        st = self.state
        k0 = st.tick
        x = np.ascontiguousarray(st.x, dtype=float).copy()
        _, done = engine().simulate(**self.call, x=x, k0=k0, k1=end)
        st.x = x
        st.tick = st.log.ticks = done
        if done > k0:
            self._after(k0, done)
        if done < end:  # the engine stopped before tick `done`: the Python tick words why
            self.python_tick(done)

    def _text(self, clip: int) -> str:
        """The controller's message for a tick whose saturated joints are the bits of ``clip``."""
        text = self._texts.get(clip)
        if text is None:
            names = [self.names[j] for j in range(self.n) if clip >> j & 1]
            text = self._texts[clip] = f"effort saturated on {names}"
        return text

    def _after(self, k0: int, k1: int) -> None:
        """The messages of ticks [k0, k1) and the controller's state after its last tick."""
        st = self.state
        clips = self.clip[k0:k1]
        changes = np.concatenate([[0], np.flatnonzero(clips[1:] != clips[:-1]) + 1])
        for i in changes.tolist():
            st.note(float(st.log.t[k0 + i]), self._text(int(clips[i])))
        k = k1 - 1
        q_meas, _ = st.measure(k, st.log.q[k], st.log.qd[k])
        self.controller.record_tick(float(st.log.t[k]), q_meas, self._text(int(self.clip[k])))
