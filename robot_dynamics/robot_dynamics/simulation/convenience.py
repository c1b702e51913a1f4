"""``simulate()``: one call that builds a :class:`Simulation`, runs it to the end and returns its result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from numpy.typing import ArrayLike

from ..control.base import ControllerBase
from ..model.robot_model import RobotModel
from .core import Simulation
from .options import Integration, Logging, Noise, PlantOptions, SimulationOptions
from .result import SimulationResult

__all__ = ["simulate"]


def simulate(  # noqa: PLR0913 - the documented keyword API; the options live in SimulationOptions
    plant: RobotModel,
    controller: ControllerBase,
    reference: Any,
    duration: float | None = None,
    *,
    q0: ArrayLike | None = None,
    qd0: ArrayLike | None = None,
    control_rate: float = 1000.0,
    integrator: str = "rk4",
    substeps: int = 1,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    max_evaluations: int = 20_000,
    settle: float = 0.5,
    friction: bool = True,
    coulomb_smoothing: float = 0.0,
    gravity: ArrayLike | None = None,
    position_noise: ArrayLike = 0.0,
    velocity_noise: ArrayLike = 0.0,
    disturbance: ArrayLike | Callable[[float], ArrayLike] | None = None,
    seed: int | None = 0,
    elastic_joints: bool = True,
    qm0: ArrayLike | None = None,
    qmd0: ArrayLike | None = None,
    predict_model_error: bool = True,
    progress: bool | None = False,
) -> SimulationResult:
    """Run the closed loop ``controller -> ZOH -> plant`` once and measure it.

    The one function of the simulation package with many parameters, on purpose: its keywords
    are the documented API of a one-call run (the CLI's, the studies', the tutorials'). Each
    keyword is one field of :class:`SimulationOptions`'s groups, and the call is
    ``Simulation(plant, controller, reference, duration, options, settle=settle)``, then
    ``reset(q0, qd0, qm0, qmd0)`` and ``run()``: use :class:`Simulation` to step, stop early or
    inspect the state between ticks.

    Args:
        plant: the simulated robot (direct dynamics :func:`robot_dynamics.aba`, friction and
            rotor inertia included; its drive train maps actuator efforts to joint torques;
            elastic joints when its drive train has them).
        controller: a controller built on its own model (may differ from ``plant``).
        reference: trajectory (``sample(t)``), callable, :class:`Reference`,
            :class:`TaskReference` or goal (nq,); see :func:`reference_function`.
        duration: simulated time [s]; default the trajectory's duration + ``settle``.
        q0, qd0: initial state (nq,); default the reference at t = 0 (at rest for task refs:
            q0 is then required).
        control_rate, integrator, substeps, rtol, atol, max_evaluations: :class:`Integration`
            (rate [Hz], ``"rk4"`` or a solve_ivp method of :data:`INTEGRATORS`, RK4 steps per
            period, tolerances of the adaptive solvers, their plant evaluations per period at most).
        friction, coulomb_smoothing, gravity, elastic_joints: :class:`PlantOptions`.
        position_noise, velocity_noise, disturbance, seed: :class:`Noise` (std of white
            Gaussian measurement noise [rad, rad/s]; joint torque disturbance (nq,) or
            ``f(t)``, held over each tick; the noise's seed).
        qm0, qmd0: initial rotor state of an elastic plant (default: the springs' static
            deflection, at rest).
        predict_model_error, progress: :class:`Logging` (Khalil [9.28]'s predicted error for
            computed torque on a different model; a progress bar on stderr: none by default,
            ``True`` always, ``None`` for a long run when stderr is a terminal).

    Returns:
        :class:`SimulationResult`.

    Raises:
        InputError: bad options (the loop itself never raises: a diverging plant stops the run
            with ``metrics.diverged``).
    """
    options = SimulationOptions(
        integration=Integration(rate=control_rate, integrator=integrator, substeps=substeps, rtol=rtol, atol=atol,
                                max_evaluations=max_evaluations),
        noise=Noise(position=position_noise, velocity=velocity_noise, disturbance=disturbance, seed=seed),
        plant=PlantOptions(friction=friction, coulomb_smoothing=coulomb_smoothing, gravity=gravity,
                           elastic_joints=elastic_joints),
        logging=Logging(predict_model_error=predict_model_error, progress=progress),
    )
    sim = Simulation(plant, controller, reference, duration, options, settle=settle)
    sim.reset(q0, qd0, qm0, qmd0)
    return sim.run()
