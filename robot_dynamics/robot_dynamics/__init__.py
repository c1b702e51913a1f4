"""robot_dynamics: dynamics of robot arms and mechanisms from URDF and YAML.

    >>> import robot_dynamics as rd
    >>> model = rd.load_robot("puma560")
    >>> tau = rd.rnea(model, q, qd, qdd)          # inverse dynamics, shape (..., nq)
    >>> M = rd.crba(model, q)                     # joint-space inertia matrix
    >>> qdd = rd.aba(model, q, qd, tau)           # direct dynamics
    >>> sim = rd.Simulation(model, controller, trajectory)   # closed loop: sim.step(), sim.run()

The core needs numpy and scipy only (its engine is C, compiled at install); ROS 2 lives in ``robot_dynamics.ros``.
"""

from .conventions import GRAVITY
from .dynamics import (
    OperationalSpace,
    aba,
    aba_derivatives,
    bias_torques,
    coriolis_matrix,
    crba,
    dynamically_consistent_inverse,
    gravity_torques,
    kinetic_energy,
    linearize,
    mechanical_energy,
    null_space_projector,
    operational_space,
    potential_energy,
    rnea,
    rnea_derivatives,
    task_inertia,
)
from .codegen import fastest_rnea, inverse_dynamics_function
from .drivetrain import actuated_aba, actuator_torques
from .dynamics.base_parameters import base_parameters
from .dynamics.regressor import regressor
from .errors import (
    InputError,
    MissingDependencyError,
    ModelError,
    ModelWarning,
    RobotDynamicsError,
    SingularityError,
    UnknownNameError,
)
from .engine import get_num_threads, set_num_threads
from .kinematics import (
    IKResult,
    body_poses,
    frame_pose,
    frame_poses,
    frame_velocity,
    inverse_kinematics,
    jacobian,
    jacobian_dot_qdot,
)
from .simulation import Simulation, SimulationOptions
from .model import (
    DEFAULT_ROBOT,
    ModelIssue,
    RobotModel,
    check_model,
    list_robots,
    load_dh_yaml,
    load_robot,
    load_urdf,
)

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_ROBOT",
    "GRAVITY",
    "IKResult",
    "InputError",
    "MissingDependencyError",
    "ModelError",
    "ModelIssue",
    "ModelWarning",
    "OperationalSpace",
    "RobotDynamicsError",
    "RobotModel",
    "Simulation",
    "SimulationOptions",
    "SingularityError",
    "UnknownNameError",
    "aba",
    "aba_derivatives",
    "actuated_aba",
    "base_parameters",
    "fastest_rnea",
    "inverse_dynamics_function",
    "regressor",
    "actuator_torques",
    "bias_torques",
    "check_model",
    "body_poses",
    "coriolis_matrix",
    "crba",
    "dynamically_consistent_inverse",
    "frame_pose",
    "frame_poses",
    "frame_velocity",
    "get_num_threads",
    "gravity_torques",
    "inverse_kinematics",
    "jacobian",
    "jacobian_dot_qdot",
    "kinetic_energy",
    "linearize",
    "list_robots",
    "load_dh_yaml",
    "load_robot",
    "load_urdf",
    "mechanical_energy",
    "null_space_projector",
    "operational_space",
    "potential_energy",
    "rnea",
    "rnea_derivatives",
    "set_num_threads",
    "task_inertia",
]
