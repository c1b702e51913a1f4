"""Customised symbolic Newton-Euler inverse dynamics (Khalil 7.5), generated per robot.

* :func:`generate`: base parameters -> customised model on a tape -> numpy and numba code,
  cached on disk keyed by the model (see :mod:`.generated`).
* :func:`inverse_dynamics_function` / :func:`fastest_rnea` / :func:`tick_inverse_dynamics`
  (one state per call): the fastest available path,
  falling back to the core's :func:`robot_dynamics.rnea`.
* :func:`operation_counts`, :func:`khalil_comparison`: multiplications and additions beside
  Khalil's Tables 7.5 and 7.6.
"""

from .fast import InverseDynamics, fastest_rnea, inverse_dynamics_function, tick_inverse_dynamics
from .generated import CACHE_ENV, GeneratedModel, cache_dir, generate, model_key, numba_available, operation_counts
from .khalil import khalil_comparison
from .tape import OpCount

__all__ = [
    "CACHE_ENV",
    "GeneratedModel",
    "InverseDynamics",
    "OpCount",
    "cache_dir",
    "fastest_rnea",
    "generate",
    "inverse_dynamics_function",
    "khalil_comparison",
    "model_key",
    "numba_available",
    "operation_counts",
    "tick_inverse_dynamics",
]
