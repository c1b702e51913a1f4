"""Closed-loop simulation: plant = direct dynamics of the core, a sampled controller, metrics.

:class:`Simulation` is the loop as an object with a step (as MuJoCo's ``mj_step`` or Drake's
``Simulator``): built once from the plant, the controller, the reference and its
:class:`SimulationOptions` (:class:`Integration`, :class:`Noise`, :class:`PlantOptions`,
:class:`Logging`), then ``reset(q0, qd0)``, ``step()`` or ``run(duration)``. The controller is
ticked at the control rate (default 1 kHz); its effort is held constant between ticks
(zero-order hold) while the plant ``qdd = aba(plant, q, qd, tau + d)`` is integrated by
fixed-step RK4 (``substeps`` steps per tick) or by an adaptive scipy solver over each tick.
The plant may differ from the controller's model (parameter errors); measurement noise, a
torque disturbance and a wrench at a frame (:class:`ExternalWrench`, a push) are optional. The
result holds every tick (time, state, reference, torques, status) and the metrics: RMS / max tracking error per joint, peak torques, actuator
energy, and for computed torque with a model error, the error that Khalil's [9.28] predicts.
:func:`simulate` is the one-call form.
"""

from .convenience import simulate
from .core import DEFAULT_SETTLE, Simulation
from .options import INTEGRATORS, MAX_TICKS, ExternalWrench, Integration, Logging, Noise, PlantOptions, SimulationOptions
from .plant import DIVERGED, Plant, rk4_step
from .reference import ReferenceSamples, reference_function, sample_reference
from .result import SimulationLog, SimulationMetrics, SimulationResult

__all__ = [
    "DEFAULT_SETTLE",
    "DIVERGED",
    "INTEGRATORS",
    "MAX_TICKS",
    "ExternalWrench",
    "Integration",
    "Logging",
    "Noise",
    "Plant",
    "PlantOptions",
    "ReferenceSamples",
    "Simulation",
    "SimulationLog",
    "SimulationMetrics",
    "SimulationOptions",
    "SimulationResult",
    "reference_function",
    "rk4_step",
    "sample_reference",
    "simulate",
]
