"""The package's exceptions: one base class, messages that name what was expected."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "RobotDynamicsError",
    "ModelError",
    "InputError",
    "UnknownNameError",
    "SingularityError",
    "PathInfeasibleError",
    "MissingDependencyError",
    "ModelWarning",
]


class RobotDynamicsError(Exception):
    """Base class of every error raised by robot_dynamics."""


class ModelError(RobotDynamicsError):
    """A robot description (URDF, xacro, DH or drive-train YAML) is malformed or inconsistent."""


class ModelWarning(UserWarning):
    """A robot description loads but describes something no rigid body has, or leaves out what a
    controller needs (a massless moving link, an impossible inertia, a joint without effort limit).

    One warning per issue; ``issue`` holds it as a :class:`robot_dynamics.model.ModelIssue`
    (its ``kind``, the link or joint ``name``, the ``message``). Silence a known one by declaring
    it in the robot's YAML (``accepted_model_issues``), not with a warnings filter.
    """

    def __init__(self, message: str, issue: object = None):
        super().__init__(message)
        self.issue = issue


class InputError(RobotDynamicsError, ValueError):
    """A numeric input has the wrong shape, a non-finite value or an invalid range."""


class MissingDependencyError(RobotDynamicsError, ImportError):
    """A feature needs an optional dependency that is not installed; the message names the
    extra that installs it: ``pip install "./robot_dynamics[studies]"`` from a clone."""


class SingularityError(RobotDynamicsError):
    """A computation met a singular configuration (inverse kinematics, loop closure, A matrix)."""


class UnknownNameError(RobotDynamicsError, KeyError):
    """A name (joint, link, frame, robot, profile...) is not among the valid ones.

    The message lists the valid choices, MuJoCo style, and the nearest one when a name looks
    mistyped: ``Unknown joint 'elbw'. Valid joints: ['shoulder', 'elbow']; did you mean 'elbow'?``.
    """

    def __init__(self, kind: str, name: object, valid: Iterable[object]):
        import difflib

        self.kind = kind
        self.name = name
        self.valid = list(valid)
        message = f"Unknown {kind} {name!r}. Valid {kind}s: {self.valid}"
        if isinstance(name, str):
            near = difflib.get_close_matches(name, [str(v) for v in self.valid], n=1, cutoff=0.6)
            if near:
                message += f"; did you mean {near[0]!r}?"
        super().__init__(message)

    def __str__(self) -> str:  # KeyError would quote the whole message otherwise
        return str(self.args[0])


class PathInfeasibleError(InputError):
    """A path no timing can follow within the limits (:func:`robot_dynamics.trajectory.time_optimal`).

    Attributes:
        s: the path parameter in [0, 1] where it fails; joint: the joint (or motor) whose limit
        decides; torque: what it needs there at rest [N m or N]; limit: its limit.
    """

    def __init__(self, message: str, *, s: float, joint: str, torque: float, limit: float):
        super().__init__(message)
        self.s, self.joint, self.torque, self.limit = s, joint, torque, limit
