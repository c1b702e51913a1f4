"""The options of a simulation, grouped as MuJoCo's ``mjOption`` groups its own: how the plant is
integrated, what noise and disturbance it sees, what the plant includes, what is logged.

Each group is a small frozen dataclass that checks what it can alone when built (the choices,
the signs); what depends on the robot (a noise vector of nq values) is checked by
:class:`~robot_dynamics.simulation.Simulation`. Errors are the package's :class:`InputError`
and name the valid choices.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError

__all__ = ["INTEGRATORS", "MAX_TICKS", "Integration", "ExternalWrench", "Noise", "PlantOptions", "Logging", "SimulationOptions"]

#: Fixed-step RK4, or the name of a scipy.integrate.solve_ivp method (adaptive step).
INTEGRATORS = ("rk4", "RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")
#: Controller ticks of one run at most (its log grows with ticks x joints).
MAX_TICKS = 5_000_000


def _positive(value: Any, what: str, unit: str) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if not ok:
        raise InputError(f"{what}: expected a positive number{unit}, got {value!r}")


@dataclass(frozen=True)
class Integration:
    """How the plant is integrated between controller ticks.

    Attributes:
        rate: controller rate [Hz] (> 0); the effort is held over each period 1 / rate (ZOH).
        integrator: one of :data:`INTEGRATORS`: ``"rk4"`` (fixed step, ``substeps`` per period)
            or an adaptive ``scipy.integrate.solve_ivp`` method over each period.
        substeps: RK4 steps per controller period (>= 1).
        rtol, atol: tolerances of the adaptive solvers (> 0).
        max_evaluations: most evaluations of the plant an adaptive solver may make over one
            controller period (>= 1); past it the run stops with a message instead of crawling.
            A stiff plant needs more, or a stiff solver (``"Radau"``, ``"BDF"``, ``"LSODA"``);
            Coulomb friction with the exact sign defeats every adaptive solver as soon as a
            joint rests (its sign flips at every step, however short): smooth it
            (:attr:`PlantOptions.coulomb_smoothing`) or use ``"rk4"``.
        compiled: run the ticks in the engine's compiled loop where the controller and the
            plant allow it (joint-space computed torque, rigid plant, RK4: same results as the
            Python tick); False: always the Python tick.
    """

    rate: float = 1000.0
    integrator: str = "rk4"
    substeps: int = 1
    rtol: float = 1e-8
    atol: float = 1e-10
    max_evaluations: int = 20_000
    compiled: bool = True

    def __post_init__(self) -> None:
        if self.integrator not in INTEGRATORS:
            raise InputError(f"integrator: expected one of {list(INTEGRATORS)}, got {self.integrator!r}")
        if not (isinstance(self.rate, (int, float)) and math.isfinite(self.rate) and self.rate > 0):
            raise InputError(f"control_rate: expected a positive number [Hz], got {self.rate!r}")
        if isinstance(self.substeps, bool) or int(self.substeps) != self.substeps or self.substeps < 1:
            raise InputError(f"substeps: expected an integer >= 1, got {self.substeps!r}")
        if isinstance(self.max_evaluations, bool) or int(self.max_evaluations) != self.max_evaluations \
                or self.max_evaluations < 1:
            raise InputError(f"max_evaluations: expected an integer >= 1, got {self.max_evaluations!r}")
        _positive(self.rtol, "rtol", "")
        _positive(self.atol, "atol", "")

    @property
    def period(self) -> float:
        """The controller period 1 / rate [s]."""
        return 1.0 / float(self.rate)


@dataclass(frozen=True)
class ExternalWrench:
    """A wrench the environment applies to the plant at one of its frames: a push at the tool.

    The plant sees the joint torques ``J(q)^T wrench`` (J: the frame's geometric Jacobian at the
    tick's state, rows [linear; angular] in base axes), computed at each tick and held over it as
    the joint-torque disturbance is, and added to that one: the log's ``disturbance`` holds their
    sum, the true external joint torque.

    Attributes:
        frame: the name of a frame of the plant (a link of its description), e.g. the tool's.
        wrench: [force (3) [N]; moment (3) [N m]] at the frame's origin in base axes: (6,)
            constant or ``f(t) -> (6,)``, sampled at the ticks and held.
    """

    frame: str
    wrench: ArrayLike | Callable[[float], ArrayLike] = field(compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.frame, str):
            raise InputError(f"wrench frame: expected a frame name, got {self.frame!r}")
        if not callable(self.wrench):
            try:
                w = np.asarray(self.wrench, dtype=float)
            except (TypeError, ValueError):
                w = np.full(1, np.nan)
            if w.shape != (6,) or not np.all(np.isfinite(w)):
                raise InputError(f"wrench: expected 6 finite values [force (3) N; moment (3) N m] or a function of t, "
                                 f"got {self.wrench!r}")


@dataclass(frozen=True)
class Noise:
    """What disturbs the loop: white Gaussian measurement noise, a torque disturbance and a wrench.

    Attributes:
        position, velocity: standard deviations of the noise on the measured q [rad or m] and
            qd [rad/s or m/s], scalar or (nq,), >= 0.
        disturbance: joint torque added to the plant [N m or N]: None, (nq,) constant or
            ``f(t) -> (nq,)``, sampled at the ticks and held.
        seed: seed of the noise's generator (``numpy.random.default_rng``).
        wrench: an :class:`ExternalWrench` at a frame of the plant (a push), or None; its joint
            torques add to ``disturbance``.
    """

    position: ArrayLike = 0.0
    velocity: ArrayLike = 0.0
    disturbance: ArrayLike | Callable[[float], ArrayLike] | None = field(default=None, compare=False)
    seed: int | None = 0
    wrench: ExternalWrench | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.wrench is not None and not isinstance(self.wrench, ExternalWrench):
            raise InputError(f"wrench: expected an ExternalWrench or None, got {type(self.wrench).__name__}")


@dataclass(frozen=True)
class PlantOptions:
    """What the simulated plant includes.

    Attributes:
        friction: the plant's joint friction (Khalil [7.26]).
        coulomb_smoothing: velocity scale v_s [rad/s] of a Coulomb friction ``Fc tanh(qd / v_s)``
            instead of ``Fc sign(qd)`` (>= 0; 0 keeps the sign, the core's exact model): with the
            sign, a fixed-step integration never comes to rest and chatters.
        gravity: gravity (3,) [m/s^2] in the base frame; None: the plant model's.
        elastic_joints: simulate the doubled state of Khalil [7.35] when the plant's drive train
            has an ``elastic`` section (rotor positions qm, springs between rotors and links).
    """

    friction: bool = True
    coulomb_smoothing: float = 0.0
    gravity: ArrayLike | None = None
    elastic_joints: bool = True

    def __post_init__(self) -> None:
        s = self.coulomb_smoothing
        if not (isinstance(s, (int, float)) and math.isfinite(s) and s >= 0):
            raise InputError(f"coulomb_smoothing: expected a velocity >= 0 [rad/s], got {s!r}")


@dataclass(frozen=True)
class Logging:
    """What a run records and reports, and its size limit.

    Attributes:
        predict_model_error: for computed torque on a model that differs from the plant, the
            error Khalil [9.28] predicts on the simulated motion (in the metrics).
        progress: a progress bar on stderr. False (the default): a library call is quiet;
            True: always; None: when the run is expected to take over 1 s and stderr is a
            terminal (what the ``robot-dynamics`` command asks for).
        max_ticks: most controller ticks of one simulation (its log is allocated up front).
    """

    predict_model_error: bool = True
    progress: bool | None = False
    max_ticks: int = MAX_TICKS

    def __post_init__(self) -> None:
        if isinstance(self.max_ticks, bool) or int(self.max_ticks) != self.max_ticks or not 1 <= self.max_ticks <= MAX_TICKS:
            raise InputError(f"max_ticks: expected an integer from 1 to {MAX_TICKS:,}, got {self.max_ticks!r}")


@dataclass(frozen=True)
class SimulationOptions:
    """The four groups of options of a :class:`~robot_dynamics.simulation.Simulation`."""

    integration: Integration = field(default_factory=Integration)
    noise: Noise = field(default_factory=Noise)
    plant: PlantOptions = field(default_factory=PlantOptions)
    logging: Logging = field(default_factory=Logging)

    def __post_init__(self) -> None:
        for name, kind in (("integration", Integration), ("noise", Noise), ("plant", PlantOptions), ("logging", Logging)):
            if not isinstance(getattr(self, name), kind):
                raise InputError(f"options.{name}: expected a {kind.__name__}, got {type(getattr(self, name)).__name__}")
