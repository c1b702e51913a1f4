"""Actuator torques along a trajectory, and time scaling until they fit the effort limits.

Khalil's remark after [8.3] and his conclusion (section 8.5): plan with kinematic limits, then
verify the torques with the dynamic model and scale the travelling time [Hollerbach 84a].
Stretching time by c keeps the path; the torques become
tau(c) = A qdd / c^2 + C qd qd / c^2 + Q + friction(qd / c), computed here by the dynamics
core (``rnea``) at the same path points for each trial c; c is found by bisection.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from .base import TimeScaled, Trajectory
from .sampling import sample_times

if TYPE_CHECKING:
    from ..model import RobotModel

Array = NDArray[np.float64]

__all__ = ["TorqueCheck", "check_torques", "scale_to_torque_limits", "MAX_CHECK_SAMPLES"]

#: The most samples a torque check takes: a longer trajectory is checked at a lower rate
#: (MAX_CHECK_SAMPLES / duration), so the work stays bounded whatever the duration (the
#: scaling's bisection runs inverse dynamics over them some 30 times).
MAX_CHECK_SAMPLES = 100_000


class TorqueCheck(NamedTuple):
    """Joint torques along a trajectory against the effort limits.

    Attributes:
        feasible: every |tau_j(t)| <= effort_j (joints without a limit never fail).
        ratio: max over t and j of |tau_j| / effort_j.
        time: when that maximum occurs [s]; joint: its joint name.
        t: sample times (N,); tau: torques (N, nq) [N m or N].
    """

    feasible: bool
    ratio: float
    time: float
    joint: str
    t: Array
    tau: Array


def _torques(model: RobotModel, q: Array, qd: Array, qdd: Array, gravity: Array | None) -> Array:
    from ..dynamics import rnea

    return rnea(model, q, qd, qdd, gravity=gravity)


def _ratio(model: RobotModel, tau: Array) -> Array:
    limit = model.effort_limit
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isfinite(limit) & (limit > 0), np.abs(tau) / limit, 0.0)


def check_torques(model: RobotModel, traj: Trajectory, rate: float = 200.0, gravity: Array | None = None) -> TorqueCheck:
    """Inverse dynamics along ``traj`` at ``rate`` [Hz] (lowered to keep at most
    :data:`MAX_CHECK_SAMPLES` samples), compared with ``model.effort_limit``."""
    if traj.n != model.nq:
        raise InputError(f"trajectory has {traj.n} coordinates, the robot {model.nq} joints {list(model.joint_names)}")
    if np.isfinite(traj.duration) and traj.duration * rate > MAX_CHECK_SAMPLES:
        rate = MAX_CHECK_SAMPLES / traj.duration
    t = sample_times(traj.duration, rate)
    q, qd, qdd = traj.sample(t)
    tau = _torques(model, q, qd, qdd, gravity)
    r = _ratio(model, tau)
    k, j = np.unravel_index(int(np.argmax(r)), r.shape)
    worst = float(r[k, j])
    return TorqueCheck(worst <= 1.0, worst, float(t[k]), model.joint_names[j], t, tau)


def scale_to_torque_limits(
    model: RobotModel,
    traj: Trajectory,
    rate: float = 200.0,
    *,
    margin: float = 1.0,
    max_factor: float = 100.0,
    gravity: Array | None = None,
) -> tuple[Trajectory, TorqueCheck]:
    """The slowest-needed uniform time scaling of ``traj`` whose torques fit the effort limits.

    Args:
        rate: samples per second of the *original* trajectory where torques are checked.
        margin: fraction of the effort limits to use (1.0 = the full limits).
        max_factor: largest time stretch tried.

    Returns:
        (the trajectory, unchanged if already feasible, else a :class:`TimeScaled` with the
        smallest factor found to 1e-6 relative; its :class:`TorqueCheck`).

    Raises:
        InputError: infeasible at any speed (the static torques, gravity and Coulomb friction,
            exceed the limits), or needing more than ``max_factor``.
    """
    if not 0.0 < margin <= 1.0:
        raise InputError(f"margin: expected 0 < margin <= 1, got {margin}")
    check = check_torques(model, traj, rate, gravity)
    if check.ratio <= margin:
        return traj, check
    t = check.t
    q, qd, qdd = traj.sample(t)

    def worst(c: float) -> float:
        return float(np.max(_ratio(model, _torques(model, q, qd / c, qdd / c**2, gravity))))

    if worst(1e9) > margin:
        raise InputError(
            "torques: the static torques (gravity, Coulomb friction) alone exceed the effort limits along "
            "this path; no time scaling can make it feasible"
        )
    lo, hi = 1.0, 2.0
    while worst(hi) > margin:
        lo, hi = hi, hi * 2.0
        if hi > max_factor:
            raise InputError(f"torques: more than {max_factor:g} times slower would be needed to fit the effort limits")
    while hi - lo > 1e-6 * hi:
        mid = 0.5 * (lo + hi)
        if worst(mid) > margin:
            lo = mid
        else:
            hi = mid
    scaled = TimeScaled(traj, hi)
    return scaled, check_torques(model, scaled, rate / hi, gravity)
