"""The simulated plant: the direct dynamics of the core as a state equation, and its integrators.

A rigid plant has the state x = (q, qd), (2 nq,); an elastic-joint plant (Khalil [7.35]) the
doubled state x = (q, qd, qm, qmd), (4 nq,), with the rotor positions qm on the joint side.
The input u is the joint torque (nq,) [N m or N] held over a step (zero-order hold).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .._rk4 import rk4_step
from ..errors import InputError
from ..engine import check_status, engine, gravity_vector, stages
from ..model.robot_model import RobotModel
from .options import Integration, PlantOptions

__all__ = ["Plant", "rk4_step", "DIVERGED"]

Array = NDArray[np.float64]

#: A plant state this large has left any physical range: the run stops as diverged.
DIVERGED = 1e150


class _OverBudget(Exception):
    """An adaptive solver used up its evaluations of one period (Integration.max_evaluations)."""


class Plant:
    """The state equation ``xdot = f(x, u)`` of a robot and its integration over one period.

    Args:
        model: the simulated robot (friction and rotor inertia of the core's
            :func:`robot_dynamics.aba`; elastic joints when its drive train has them and
            ``options.elastic_joints``).
        options: :class:`PlantOptions`.
    """

    def __init__(self, model: RobotModel, options: PlantOptions | None = None):
        self.model = model
        self.options = options = PlantOptions() if options is None else options
        self.n = model.nq
        self.gravity = options.gravity
        self.friction = options.friction
        #: the gravity vector (3,) [m/s^2] and the Coulomb sign's smoothing velocity v_s (0: the sign,
        #: or no friction) as the engine's plant takes them
        self.g = gravity_vector(model, options.gravity)
        self.smooth = options.coulomb_smoothing if options.friction else 0.0
        el = getattr(model.drivetrain, "elastic", None) if model.drivetrain is not None else None
        self.elastic = el is not None and options.elastic_joints
        self.stiffness = np.asarray(el.stiffness, float) if self.elastic else None
        if self.stiffness is not None and np.any(self.stiffness <= 0):
            raise InputError("elastic plant: every joint stiffness must be > 0 (set elastic_joints=False for a rigid plant)")
        self._solve_ivp: Any = None

    def switching_friction(self) -> bool:
        """Whether the plant's friction has the exact sign of the joint velocities (Coulomb or
        static friction, not smoothed; an elastic plant's never is): a state equation
        discontinuous at qd = 0."""
        m = self.model
        static = m.static_friction if m.static_friction is not None else m.coulomb
        dry = np.any(m.coulomb > 0) or np.any(static > 0)
        if self.elastic:
            dry = dry or np.any(np.asarray(m.drivetrain.elastic.motor_coulomb) > 0)
        return bool(self.friction and (self.smooth == 0.0 or self.elastic) and dry)

    def _way_out(self) -> str:
        """What to change when an adaptive solver cannot get through a period."""
        if self.switching_friction():
            # at rest the sign flips at every step, however short: no step meets the tolerances
            smooth = "" if self.elastic else "smooth the sign (coulomb_smoothing > 0, e.g. 0.001 rad/s) or "
            return ("the plant's Coulomb friction switches with the sign of the joint velocities, which an adaptive "
                    f"solver cannot step across while a joint is at rest: {smooth}use the rk4 integrator")
        return "a stiff plant: raise max_evaluations, or use a stiff solver (Radau, BDF, LSODA) or the rk4 integrator"

    @property
    def size(self) -> int:
        """Length of the state x: 2 nq (rigid) or 4 nq (elastic joints)."""
        return 4 * self.n if self.elastic else 2 * self.n

    def initial_state(self, q: Array, qd: Array, qm0: ArrayLike | None = None, qmd0: ArrayLike | None = None) -> Array:
        """The state x from q, qd (nq,); for elastic joints the rotors default to the springs'
        static deflection at rest: k (qm - q) = Q(q)."""
        if not self.elastic:
            return np.concatenate([q, qd])
        from ..dynamics import gravity_torques

        n = self.n
        if qm0 is None:
            qm = q + np.asarray(gravity_torques(self.model, q, self.gravity), float) / self.stiffness
        else:
            qm = np.asarray(qm0, float).reshape(n)
        return np.concatenate([q, qd, qm, np.zeros(n) if qmd0 is None else np.asarray(qmd0, float).reshape(n)])

    def accel(self, q: Array, qd: Array, tau: Array) -> Array:
        """Joint accelerations of the rigid plant under joint torques tau, (nq,): the engine's
        direct dynamics, friction by Khalil [7.26] with sign(qd) regularised to tanh(qd / v_s)
        when smoothed (plant only)."""
        return stages.plant_accel(self.model, self.g, self.friction, self.smooth, q, qd, tau)

    def derivative(self, x: Array, u: Array) -> tuple[Array, Array]:
        """(xdot, qdd) at the state x under the held joint torque u (nq,)."""
        n = self.n
        if self.elastic:
            from ..drivetrain import elastic_aba

            qdd, qmdd = elastic_aba(self.model, x[:n], x[n : 2 * n], x[2 * n : 3 * n], x[3 * n :], u,
                                    gravity=self.gravity, friction=self.friction)
            return np.concatenate([x[n : 2 * n], qdd, x[3 * n :], qmdd]), qdd
        qdd = self.accel(x[:n], x[n:], u)
        return np.concatenate([x[n:], qdd]), qdd

    def period(self, x: Array, u: Array | None, dt: float, substeps: int = 1, max_step: float = math.inf,
               max_substeps: int = 0, k1: Array | None = None) -> stages.PlantAdvance:
        """One period dt [s] of the rigid plant from x = (q, qd) (2 nq,) under the held command u
        (nq,) [N m or N], by the engine's rd_plant_advance: the one step of the simulation, the
        simulator node and ros2_control's SimulatedSystem.

        The command rules of a simulated arm: u None or NaN on every joint is no command (the
        brakes hold the arm: velocities set to zero, positions kept), a NaN joint gets zero
        effort. Then ``substeps`` RK4 steps of dt / substeps; a step over ``max_step`` [s] refuses
        the period (``max_substeps`` 0) or cuts it into ceil(dt / max_step) steps, at most
        ``max_substeps`` (then the simulated time falls behind). ``k1`` is ``derivative(x, u)[0]``
        when known. Raises nothing for the plant: the :class:`~robot_dynamics.engine.stages.PlantAdvance`
        says what happened (``code``).
        """
        if self.elastic:
            raise InputError("Plant.period: a rigid plant only (the elastic joints' state is (q, qd, qm, qmd))")
        return stages.plant_advance(self.model, self.g, self.friction, self.smooth, substeps, max_step, max_substeps,
                                    dt, x, k1, u)

    def advance(self, x: Array, u: Array, t: float, integration: Integration, k1: Array | None = None) -> Array:
        """The state one controller period after ``x`` (time t [s]) under the held input u.

        ``k1`` is ``derivative(x, u)[0]`` when already known (the first RK4 stage).
        Raises FloatingPointError when the state leaves :data:`DIVERGED` or an adaptive solver fails.
        """
        dt = integration.period
        if integration.integrator == "rk4" and not self.elastic:  # the engine's period, as the compiled loop's
            # a simulation's torque is never the hardware's "no command": a NaN is an error, as a NaN
            # state is (with k1, f(x, u) has already refused it)
            if k1 is None and np.isnan(u).any():
                check_status(self.model, engine().BAD_INPUT, "aba")
            r = self.period(x, u, dt, integration.substeps, k1=k1)
            if r.code:  # not OK (0): worded here, off the per-tick path
                if r.diverged:
                    raise FloatingPointError("non-finite plant state")
                r.check(self.model)
            return r.x
        if integration.integrator == "rk4":
            h = dt / integration.substeps
            for s in range(integration.substeps):
                x = rk4_step(lambda xs: self.derivative(xs, u)[0], x, h, k1 if s == 0 else None)
        else:
            if self._solve_ivp is None:
                from scipy.integrate import solve_ivp

                self._solve_ivp = solve_ivp
            budget = [int(integration.max_evaluations)]

            def f(_t: float, xs: Array) -> Array:
                budget[0] -= 1
                if budget[0] < 0:
                    raise _OverBudget
                return self.derivative(xs, u)[0]

            try:
                sol = self._solve_ivp(f, (t, t + dt), x, method=integration.integrator, rtol=integration.rtol,
                                      atol=integration.atol)
            except _OverBudget:
                raise FloatingPointError(
                    f"{integration.integrator} made more than {integration.max_evaluations} plant evaluations over "
                    f"one period at t = {t:.6g} s; {self._way_out()}") from None
            if not sol.success:
                raise FloatingPointError(f"{integration.integrator} failed at t = {t:.6g} s: {sol.message}; "
                                         f"{self._way_out()}")
            x = sol.y[:, -1].copy()
        if not max(map(abs, x.tolist())) < DIVERGED:  # NaN compares false too
            raise FloatingPointError("non-finite plant state")
        return x
