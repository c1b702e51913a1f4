"""The closed loop as an object with a step: ``controller -> zero-order hold -> plant``.

One tick (:meth:`Simulation.step`) measures the plant (with noise), runs the controller,
holds its effort and integrates the plant over one controller period. The reference is
sampled at every tick of the horizon when the simulation is built, and the log is allocated
for the horizon: a run stopped early (divergence, the caller) keeps every completed tick.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..control.base import ControllerBase, Reference, actuator_to_joint
from ..errors import InputError
from ..kinematics import jacobian
from ..model.robot_model import RobotModel
from .compiled import BLOCK, compiled_loop
from .options import MAX_TICKS, ExternalWrench, SimulationOptions
from .plant import Plant
from .reference import reference_function, sample_reference
from .result import RunContext, SimulationLog, SimulationResult, make_result
from .tick_state import TickState

__all__ = ["Simulation", "DEFAULT_SETTLE"]

Array = NDArray[np.float64]

#: Time simulated after the end of a trajectory when no duration is given [s].
DEFAULT_SETTLE = 0.5


def _noise_vector(value: ArrayLike, n: int, what: str) -> Array:
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,) or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise InputError(f"{what}: expected a standard deviation >= 0, scalar or ({n},), got {value!r}")
    return arr


def _disturbance_function(disturbance: Any, n: int) -> Callable[[float], Array]:
    """The disturbance as ``f(t) -> (nq,)``: None (zero), a constant (nq,) or a function of t."""
    if disturbance is None:
        zero = np.zeros(n)
        return lambda t: zero
    if callable(disturbance):
        return lambda t: np.asarray(disturbance(t), dtype=float).reshape(n)
    d_const = np.asarray(disturbance, dtype=float)
    if d_const.shape != (n,) or not np.all(np.isfinite(d_const)):
        raise InputError(f"disturbance: expected {n} finite torques or a function of t, got {disturbance!r}")
    return lambda t: d_const


def _wrench_function(wrench: ExternalWrench | None, plant: RobotModel) -> Callable[[float, Array], Array] | None:
    """The joint torques ``J(q)^T F(t)`` of an external wrench as ``f(t, q) -> (nq,)``, or None."""
    if wrench is None:
        return None
    frame = wrench.frame
    plant.frame_index(frame)  # UnknownNameError, naming the plant's frames
    source = wrench.wrench

    def torques(t: float, q: Array) -> Array:
        F = np.asarray(source(t) if callable(source) else source, dtype=float).reshape(6)
        return jacobian(plant, q, frame).T @ F

    return torques


def _check_models(plant: Any, controller: Any) -> None:
    if not isinstance(plant, RobotModel):
        raise InputError(f"plant: expected a RobotModel, got {type(plant).__name__}")
    if not (hasattr(controller, "update") and hasattr(controller, "reset") and hasattr(controller, "model")):
        raise InputError(f"controller: expected a controller (update, reset, model), got {type(controller).__name__}")
    if controller.model.nq != plant.nq or tuple(controller.model.joint_names) != tuple(plant.joint_names):
        raise InputError(
            f"controller joints {list(controller.model.joint_names)} do not match the plant's {list(plant.joint_names)}"
        )


class Simulation:
    """A closed-loop simulation of a robot under a controller, advanced tick by tick.

    The controller is ticked at ``options.integration.rate``; its effort (actuator commands,
    mapped to joint torques by the plant's own drive train) is held over each period while the
    plant ``qdd = aba(plant, q, qd, tau + d)`` is integrated (:class:`Plant`). Ticks are at
    t_k = k / rate, k = 0 .. K - 1 with K = round(duration * rate) + 1; the last tick logs the
    state and the controller's output and does not integrate.

    Args:
        plant: the simulated robot (friction, rotor inertia, elastic joints: see :class:`PlantOptions`).
        controller: a controller built on its own model of the robot (may differ from ``plant``),
            with ``update(t, q, qd, reference)`` and ``reset()``.
        reference: a trajectory (``sample(t)``), a task-space motion, a callable of t, a
            :class:`~robot_dynamics.control.Reference`, a :class:`~robot_dynamics.control.TaskReference`
            or a goal (nq,); see :func:`reference_function`.
        duration: the horizon [s] (> 0); default the trajectory's duration + ``settle``.
        options: :class:`SimulationOptions` (integration, noise, plant, logging).
        settle: time after the trajectory when ``duration`` is not given [s].

    Attributes:
        K: ticks of the horizon. tick: index of the next tick (ticks done so far).
        log: :class:`SimulationLog`, the arrays of every tick (rows [0, tick) written).
        diverged: True once the plant's integration failed (the simulation is then done).
        tick_state: the :class:`~robot_dynamics.simulation.tick_state.TickState` that holds
            these, the plant state and the noise draws: what the Python tick and the compiled
            loop both advance.

    Raises:
        InputError: bad options, references or models (the ticks themselves never raise).
    """

    def __init__(self, plant: RobotModel, controller: ControllerBase, reference: Any, duration: float | None = None,
                 options: SimulationOptions | None = None, *, settle: float = DEFAULT_SETTLE):
        _check_models(plant, controller)
        self.options = options = SimulationOptions() if options is None else options
        if not isinstance(options, SimulationOptions):
            raise InputError(f"options: expected a SimulationOptions, got {type(options).__name__}")
        self.model, self.controller, n = plant, controller, plant.nq
        ref_f, ref_duration, ref_batch = reference_function(reference, n)
        duration = self._horizon(duration, ref_duration, settle)
        noise = options.noise
        pos_std = _noise_vector(noise.position, n, "position_noise")
        vel_std = _noise_vector(noise.velocity, n, "velocity_noise")
        self._dist_f = _disturbance_function(noise.disturbance, n)
        self._constant_disturbance = not callable(noise.disturbance)
        self._wrench_f = _wrench_function(noise.wrench, plant)
        self.duration = duration
        self.K = int(round(duration * options.integration.rate)) + 1
        t = np.arange(self.K) * options.integration.period
        self.reference = sample_reference(ref_f, ref_batch, t, n)
        self.plant = Plant(plant, options.plant)
        log = SimulationLog.empty(t, n, self.reference.q, self.reference.qd, self.reference.qdd)
        self.tick_state = TickState(log, pos_std, vel_std)
        self._log_shared = False  # True once a result holds views of the log's rows
        self._compiled: Any = None
        if not self.reference.task:
            self.reset()

    def _horizon(self, duration: float | None, ref_duration: float | None, settle: float) -> float:
        if duration is None:
            if ref_duration is None:
                raise InputError("duration: required when the reference has no duration")
            duration = ref_duration + settle
        try:
            ok = math.isfinite(duration) and duration > 0
        except TypeError:
            ok = False
        if not ok:
            raise InputError(f"duration: expected a positive number of seconds, got {duration!r}")
        ticks = duration * self.options.integration.rate
        limit = self.options.logging.max_ticks
        if not ticks <= limit:
            raise InputError(
                f"duration * control_rate: {ticks:.3g} ticks, more than {limit:,} (Logging.max_ticks, at most "
                f"{MAX_TICKS:,}); shorten the duration or lower the rate"
            )
        return float(duration)

    # -- state ---------------------------------------------------------------------------------
    def reset(self, q0: ArrayLike | None = None, qd0: ArrayLike | None = None, qm0: ArrayLike | None = None,
              qmd0: ArrayLike | None = None) -> None:
        """Back to t = 0: the initial state, an empty log, the controller and the noise reset.

        Args:
            q0, qd0: initial joint positions and velocities (nq,) [rad or m, /s]; default the
                reference at t = 0, at rest (q0 is required with a task-space reference).
            qm0, qmd0: initial rotor state of an elastic plant (nq,); default the springs'
                static deflection at q0, at rest.
        """
        n = self.model.nq
        if q0 is None:
            if self.reference.task:
                raise InputError("q0: required with a task-space reference")
            q = self.reference.q[0].copy()
        else:
            q = np.asarray(q0, dtype=float).reshape(-1).copy()
        qd = np.zeros(n) if qd0 is None else np.asarray(qd0, dtype=float).reshape(-1).copy()
        for what, v in (("q0", q), ("qd0", qd)):
            if v.shape != (n,) or not np.all(np.isfinite(v)):
                raise InputError(f"{what}: expected {n} finite values ordered as {list(self.model.joint_names)}")
        st = self.tick_state
        st.x = self.plant.initial_state(q, qd, qm0, qmd0)
        if self._log_shared:  # a result holds the old log's rows: write the new run elsewhere
            log = st.log
            st.log = SimulationLog.empty(log.t, n, log.q_ref, log.qd_ref, log.qdd_ref)
            self._log_shared = False
        st.draw_noise(self.options.noise.seed, self.K, n)
        st.log.messages.clear()
        st.log.ticks = st.tick = 0
        st.diverged = False
        if self.plant.elastic:
            st.log.qm[0] = st.x[2 * n : 3 * n]
        st.last_message = ""
        self.controller.reset()
        if not callable(self.options.noise.disturbance):  # constant: every row, for the compiled loop too
            st.log.disturbance[:] = self._dist_f(0.0)
        self._compiled = None
        if self.options.integration.compiled:
            self._compiled = compiled_loop(st, self.controller, self.plant, self.options, task=self.reference.task,
                                           python_tick=self._tick)

    @property
    def log(self) -> SimulationLog:
        """:class:`SimulationLog`, the arrays of every tick (rows [0, tick) written)."""
        return self.tick_state.log

    @property
    def tick(self) -> int:
        """Index of the next tick (ticks done so far)."""
        return self.tick_state.tick

    @property
    def diverged(self) -> bool:
        """True once the plant's integration failed (the simulation is then done)."""
        return self.tick_state.diverged

    @property
    def state(self) -> Array:
        """The plant state x at the next tick: (q, qd), or (q, qd, qm, qmd) for elastic joints."""
        return self._started().copy()

    @property
    def t(self) -> float:
        """Time of the next tick [s]."""
        return self.tick * self.options.integration.period

    @property
    def q(self) -> Array:
        """Joint positions at the next tick (nq,)."""
        return self._started()[: self.model.nq].copy()

    @property
    def qd(self) -> Array:
        """Joint velocities at the next tick (nq,)."""
        n = self.model.nq
        return self._started()[n : 2 * n].copy()

    @property
    def done(self) -> bool:
        """True when the horizon is reached or the plant diverged."""
        return self.diverged or self.tick >= self.K

    def _started(self) -> Array:
        x = self.tick_state.x
        if x is None:
            raise InputError("Simulation: call reset(q0) first (a task-space reference gives no initial joint state)")
        return x

    # -- ticks ---------------------------------------------------------------------------------
    def step(self) -> bool:
        """One controller tick: measure, control, hold, integrate; its row is logged.

        Returns:
            True when the tick was taken; False when the simulation is done (horizon reached,
            or the plant diverged: then ``diverged`` is True and a message says why). Never raises
            for what happens inside the loop.
        """
        self._started()
        if self.done:
            return False
        self._tick(self.tick)
        return True

    def run(self, duration: float | None = None, *, stop: Callable[[Simulation], bool] | None = None) -> SimulationResult:
        """Tick for ``duration`` more seconds (default: to the end of the horizon) and return the result.

        Args:
            duration: simulated time to advance [s] (>= 0), rounded to whole ticks and bounded by the horizon.
            stop: ``stop(simulation) -> bool`` called after every tick; True ends the run there
                (the ticks taken stay in the log).

        Returns:
            :func:`result` of every tick since :meth:`reset`.
        """
        self._started()
        end = self.K
        if duration is not None:
            try:
                ok = math.isfinite(duration) and duration >= 0
            except TypeError:
                ok = False
            if not ok:
                raise InputError(f"duration: expected a number of seconds >= 0, got {duration!r}")
            end = min(self.K, self.tick + int(round(duration * self.options.integration.rate)))
        bar = self._progress_bar(end - self.tick)
        try:
            while self.tick < end and not self.diverged:
                k0 = self.tick
                if stop is None and self._compiled is not None:
                    self._compiled.run(min(end, self.tick + BLOCK))
                else:
                    self._tick(self.tick)
                if bar is not None:
                    bar.update(self.tick - k0)
                if stop is not None and stop(self):
                    break
        finally:
            if bar is not None:
                bar.close()
        return self.result()

    def result(self) -> SimulationResult:
        """The :class:`SimulationResult` of the ticks taken since :meth:`reset`: read-only views of the
        log's rows, which stay as they are (the next :meth:`reset` starts a new log)."""
        if self.log.ticks == 0:
            raise InputError("Simulation.result: no tick taken yet (call step() or run())")
        opt = self.options
        ctx = RunContext(plant=self.model, controller=self.controller, control_rate=float(opt.integration.rate),
                         integrator=opt.integration.integrator, task_items=self.reference.items if self.reference.task else None,
                         elastic=self.plant.elastic, predict_model_error=opt.logging.predict_model_error,
                         diverged=self.diverged)
        self._log_shared = True
        return make_result(self.log, ctx)

    def _progress_bar(self, ticks: int) -> Any:
        progress = self.options.logging.progress
        substeps = self.options.integration.substeps
        if progress is None:  # automatic: a long run, seen by a person
            per_tick = 2e-5 if self._compiled is not None else 3e-4  # rough cost model of one aba, and of one tick
            from .._progress import stderr_is_a_terminal

            progress = ticks * (substeps * 4 + 2) * per_tick > 1.0 and stderr_is_a_terminal()
        if not progress or ticks <= 0:
            return None
        try:
            from .._progress import progress_bar

            return progress_bar(ticks, unit="tick", desc=f"simulate {self.model.name}", leave=False, mininterval=0.2)
        except ImportError:  # pragma: no cover - tqdm is a dependency; degrade quietly
            return None

    def _tick(self, k: int) -> None:
        """Tick k in Python: any controller, plant and options."""
        st = self.tick_state
        log, n, x = st.log, self.model.nq, st.x
        assert x is not None
        tk = float(log.t[k])
        log.q[k], log.qd[k] = x[:n], x[n : 2 * n]
        q_meas, qd_meas = st.measure(k, x[:n], x[n : 2 * n])
        ref = self.reference
        ref_k = ref.items[k] if ref.items is not None else Reference(ref.q[k], ref.qd[k], ref.qdd[k])
        out = self.controller.update(tk, q_meas, qd_meas, ref_k)
        st.note(tk, out.message)
        log.status[k] = int(out.status)
        log.effort[k] = out.effort
        d = self._dist_f(tk)
        if self._wrench_f is not None:  # a push at a frame: J(q)^T F at the tick's state, held
            d = d + self._wrench_f(tk, x[:n])
        log.disturbance[k] = d
        st.tick = log.ticks = k + 1
        try:
            tau_j = actuator_to_joint(self.model, x[:n], out.effort)  # the plant's own drive train
            log.tau[k] = tau_j
            u = tau_j + d
            k1, log.qdd[k] = self.plant.derivative(x, u)
            if k == self.K - 1:
                return
            st.x = x = self.plant.advance(x, u, tk, self.options.integration, k1)
            if self.plant.elastic:
                log.qm[k + 1] = x[2 * n : 3 * n]
        except Exception as exc:  # noqa: BLE001 - stop the run, report it
            st.diverged = True
            log.messages.append((tk, f"plant integration failed at t = {tk:.4f} s: {exc}"))

