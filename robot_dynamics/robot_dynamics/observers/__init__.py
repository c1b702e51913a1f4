"""Observers of the external forces on an arm: De Luca's generalized momentum observer, its
collision detection and isolation, and the contact wrench (Haddadin, De Luca and Albu-Schaeffer
2017, IEEE T-RO).

    >>> from robot_dynamics.observers import MomentumObserver
    >>> obs = MomentumObserver(model, gain=100.0)
    >>> out = obs.update(t, q, qd, tau)       # every tick
    >>> out.external_torque, out.collision, out.joint
    >>> obs.wrench("tool0")                   # [force; moment] at the frame, base axes
    >>> tuning = tune_thresholds(model, read_recording("collision_free.csv", model))
    >>> tuning.observer(model)                # thresholds with a margin over the recording's residuals
"""

from .momentum import (
    DEFAULT_GAIN,
    DEFAULT_RELATIVE,
    DEFAULT_THRESHOLD_FRACTION,
    TORQUE_INPUTS,
    MomentumObserver,
    ObserverOutput,
    generalized_momentum,
)
from .tuning import DEFAULT_MARGIN, ThresholdTuning, tune_thresholds

__all__ = [
    "DEFAULT_GAIN",
    "DEFAULT_MARGIN",
    "DEFAULT_RELATIVE",
    "DEFAULT_THRESHOLD_FRACTION",
    "TORQUE_INPUTS",
    "MomentumObserver",
    "ObserverOutput",
    "ThresholdTuning",
    "generalized_momentum",
    "tune_thresholds",
]
