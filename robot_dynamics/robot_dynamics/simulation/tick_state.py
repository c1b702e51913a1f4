"""What the ticks of a :class:`~robot_dynamics.simulation.Simulation` read and write.

One :class:`TickState` per simulation, shared by the two ways a tick is taken: the Python tick
(:mod:`.core`, any controller and plant) and the compiled loop (:mod:`.compiled`, many ticks per
engine call). Either one advances the same state, log and tick count, measures with the same
noise draws and notes the controller's messages the same way, so a run may pass from one to the
other at any tick.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .result import SimulationLog

__all__ = ["TickState"]

Array = NDArray[np.float64]


@dataclass(eq=False)
class TickState:
    """The plant state, the tick count, the log and the measurement noise of one run.

    Attributes:
        log: the arrays of every tick (rows [0, tick) written).
        pos_std, vel_std: the standard deviations of the position and velocity noise (nq,)
            [rad or m, rad/s or m/s].
        x: the plant state at the next tick: (q, qd) (2 nq,), or (q, qd, qm, qmd) (4 nq,) for
            elastic joints; None before the initial state is given.
        tick: index of the next tick (ticks done so far).
        diverged: True once the plant's integration failed (the run is then done).
        zq, zqd: the unit normal draws of every tick's noise (K, nq), or None where that noise is off.
        last_message: the controller's message last logged.
    """

    log: SimulationLog
    pos_std: Array
    vel_std: Array
    x: Array | None = None
    tick: int = 0
    diverged: bool = False
    zq: Array | None = None
    zqd: Array | None = None
    last_message: str = ""

    def draw_noise(self, seed: int | None, K: int, n: int) -> None:
        """The unit normal draws of every tick's measurement noise, in the order of a tick's draws
        (q's n values, then qd's), for K ticks of n joints: ``zq``, ``zqd``."""
        rng = np.random.default_rng(seed)
        noisy_q, noisy_qd = bool(self.pos_std.any()), bool(self.vel_std.any())
        parts = int(noisy_q) + int(noisy_qd)
        z = rng.normal(0.0, 1.0, (K, parts, n)) if parts else None
        self.zq = np.ascontiguousarray(z[:, 0]) if noisy_q and z is not None else None
        self.zqd = np.ascontiguousarray(z[:, parts - 1]) if noisy_qd and z is not None else None

    def measure(self, k: int, q: Array, qd: Array) -> tuple[Array, Array]:
        """The measured q, qd (nq,) of tick k: the state plus its white noise."""
        q_meas = q + self.zq[k] * self.pos_std if self.zq is not None else q
        qd_meas = qd + self.zqd[k] * self.vel_std if self.zqd is not None else qd
        return q_meas, qd_meas

    def note(self, t: float, message: str) -> None:
        """Log the controller's message at time t [s] when it changes."""
        if message != self.last_message:
            if message:
                self.log.messages.append((t, message))
            self.last_message = message
