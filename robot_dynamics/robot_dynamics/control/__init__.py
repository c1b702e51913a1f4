"""Motion control (Khalil chapter 9): PID, PD + gravity, computed torque in joint and task space, LQR.

Every controller is built once (model, gains, limits; bad values raise
:class:`~robot_dynamics.errors.InputError`) and ticked with ``update(t, q, qd, reference)``,
which returns a :class:`ControlOutput` (actuator efforts, joint torques, :class:`Status`,
message) and never raises.

    >>> from robot_dynamics.control import ComputedTorque, Reference
    >>> ctrl = ComputedTorque(model, omega=20.0, xi=1.0)
    >>> out = ctrl.update(t, q, qd, Reference(q_d, qd_d, qdd_d))
"""

from .base import (
    DEFAULT_OMEGA,
    FAULT_ACTIONS,
    ControlOutput,
    Controller,
    ControllerBase,
    Reference,
    Status,
    TaskReference,
    actuator_to_joint,
    gain_vector,
    joint_to_actuator,
)
from .by_name import CONTROLLERS, build_controller
from .cartesian import CartesianImpedance, OperationalSpaceControl, impedance_damping
from .computed_torque import FRICTION_VELOCITY, SCHEMES, ComputedTorque, gains_from_bandwidth, model_error_excitation
from .lqr import LQR, MIN_XI, lqr_gain
from .pd_gravity import GRAVITY_MODES, PDGravity, gravity_stiffness_bound
from .pid import JointPID, max_inertia_diagonal
from .task_space import TaskComputedTorque, TaskController, TaskPID, damped_pseudo_inverse, task_error

__all__ = [
    "CONTROLLERS",
    "DEFAULT_OMEGA",
    "FAULT_ACTIONS",
    "FRICTION_VELOCITY",
    "GRAVITY_MODES",
    "SCHEMES",
    "CartesianImpedance",
    "ComputedTorque",
    "ControlOutput",
    "Controller",
    "ControllerBase",
    "JointPID",
    "LQR",
    "MIN_XI",
    "OperationalSpaceControl",
    "PDGravity",
    "Reference",
    "Status",
    "TaskComputedTorque",
    "TaskController",
    "TaskPID",
    "TaskReference",
    "actuator_to_joint",
    "build_controller",
    "damped_pseudo_inverse",
    "gain_vector",
    "gains_from_bandwidth",
    "gravity_stiffness_bound",
    "impedance_damping",
    "joint_to_actuator",
    "lqr_gain",
    "max_inertia_diagonal",
    "model_error_excitation",
    "task_error",
]
