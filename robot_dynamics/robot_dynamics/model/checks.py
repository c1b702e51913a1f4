"""Is the model physical, and complete enough to control? :func:`check_model` says where not.

A description can load and still hold what no rigid body has, or leave out what a controller
needs. The checks run on what the dynamics use: the moving bodies (fixed links lumped into the
body that carries them, a drive train's secondary links into their carriers) and the
independent joints. Each issue names its link or joint and has one of four kinds:

* ``massless_link``: a moving body without mass. A URDF link without ``<inertial>`` (or with a
  misspelt ``<mas>``) is massless by the URDF spec: its gravity torque is zero, so a controller
  that compensates gravity commands nothing for it. A massless body that carries massive links
  (a link between two joints of a wrist) is reported too, since nothing in the file says the
  zero was meant; the message gives the mass of what it carries, and a model that means it
  declares the issue accepted (below).
* ``inertia_not_positive_definite``: a body with mass whose rotational inertia about its centre
  of mass has a principal moment at most :data:`SINGULAR_TOLERANCE` of its largest (a point
  mass, a rod, or a CAD export's round-off below zero), or whose largest moment is at most
  :data:`POINT_MASS_TOLERANCE` of the robot's largest (a zero tensor's round-off, 1e-20 kg m^2
  on a link of a kilogram).
* ``triangle_inequality``: principal moments about the centre of mass with A + B < C (beyond
  :data:`TRIANGLE_TOLERANCE` of C). On principal axes A + B - C = 2 * integral of z^2 dm >= 0 for
  every distribution of mass, so no rigid body has such moments; MuJoCo refuses to compile one.
* ``no_effort_limit``: an independent joint whose effort limit is infinite (no ``effort=`` in the
  URDF's ``<limit>`` and none in the YAML) or zero (a placeholder): a controller never
  saturates it, or saturates it to nothing.

The loaders (:func:`~robot_dynamics.model.load_urdf`, :func:`~robot_dynamics.model.load_robot`,
:func:`~robot_dynamics.model.load_dh_yaml`) warn with a :class:`~robot_dynamics.errors.ModelWarning`
per issue. An issue that is known and meant is declared in the robot's drive-train YAML, or at
the top of a DH table, with the reason; the loaders stay quiet about it::

    accepted_model_issues:
      link3:
        triangle_inequality: the published parameter set (Armstrong, Khatib and Burdick 1986)
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ModelError, ModelWarning, UnknownNameError
from .robot_model import RobotModel

__all__ = [
    "ACCEPTED_KEY",
    "ISSUE_KINDS",
    "ModelIssue",
    "accepted_issues",
    "check_model",
    "warn_model_issues",
]

#: The kinds of issue, links' first, then joints'.
ISSUE_KINDS = ("massless_link", "inertia_not_positive_definite", "triangle_inequality", "no_effort_limit")
#: The kinds that concern a moving link (body), and those that concern a joint.
LINK_KINDS = ISSUE_KINDS[:3]
JOINT_KINDS = ISSUE_KINDS[3:]

#: A principal moment at most this fraction of the body's largest one counts as zero: a thin
#: wire (radius 1e-4 of its length) is still 6e-8, double round-off is 1e-16.
SINGULAR_TOLERANCE = 1e-9
#: A body whose largest principal moment is at most this fraction of the robot's largest is a
#: point mass: the round-off of a zero tensor is no inertia whatever its moments' ratios.
POINT_MASS_TOLERANCE = 1e-12
#: Slack of A + B >= C, relative to C: moments written with six or seven significant digits
#: (a disc's A = B = C / 2 rounded) pass; a published set that breaks it by percents does not.
TRIANGLE_TOLERANCE = 1e-6

#: The YAML key (drive-train YAML, DH table) that declares issues known and accepted.
ACCEPTED_KEY = "accepted_model_issues"


@dataclass(frozen=True)
class ModelIssue:
    """One issue of a model.

    Attributes:
        kind: one of :data:`ISSUE_KINDS`.
        name: the link (a moving body, as in ``model.body_names``) or joint it concerns.
        message: one line with the numbers, naming the link or joint.
        accepted: the reason the robot's YAML gives for accepting it, or None.
    """

    kind: str
    name: str
    message: str
    accepted: str | None = None

    def __str__(self) -> str:
        return self.message


def _subtree_mass(model: RobotModel) -> np.ndarray:
    """Mass of each body and everything it carries, (nb,) [kg] (children come after parents)."""
    total = np.array(model.mass, dtype=float)
    for b in range(model.nb - 1, -1, -1):
        p = int(model.parent[b])
        if p >= 0:
            total[p] += total[b]
    return total


def _link_issues(model: RobotModel) -> list[tuple[str, str, str]]:
    """(kind, link, message) of the moving bodies, in tree order, at most one per body."""
    out: list[tuple[str, str, str]] = []
    carried = _subtree_mass(model) - model.mass
    # principal moments about the centre of mass, ascending (the symmetric part: a loaded tensor
    # is symmetric to 1e-12 of its scale); a tensor whose entries overflowed (a mass or an inertia
    # near the largest double) has none: NaN, reported below, never a LinAlgError
    with np.errstate(over="ignore", invalid="ignore"):
        sym = 0.5 * (model.inertia_com + np.swapaxes(model.inertia_com, -1, -2))
    finite = np.isfinite(sym).all(axis=(-2, -1))
    moments = np.full(sym.shape[:-1], np.nan)
    if finite.any():
        moments[finite] = np.linalg.eigvalsh(sym[finite])
    robot_scale = float(np.abs(moments[finite]).max()) if finite.any() else 0.0
    for b, link in enumerate(model.body_names):
        joint = model.body_joint_names[b]
        mass = float(model.mass[b])
        a, bb, c = (float(x) for x in moments[b])
        if not mass > 0.0:
            if carried[b] > 0.0:
                rest = f"the links it carries have {carried[b]:.4g} kg"
            else:
                rest = f"nor has anything it carries: joint {joint!r} moves no mass, its gravity torque is zero"
            out.append(("massless_link", link, f"link {link!r} (moved by joint {joint!r}) has no mass; {rest}"))
        elif not finite[b]:
            out.append(("inertia_not_positive_definite", link,
                        f"link {link!r}: inertia about the centre of mass is not finite (mass {mass:.4g} kg: "
                        "an entry overflows)"))
        elif a <= SINGULAR_TOLERANCE * c or c <= POINT_MASS_TOLERANCE * robot_scale:
            out.append(("inertia_not_positive_definite", link,
                        f"link {link!r}: inertia about the centre of mass is not positive definite: principal "
                        f"moments {a:.4g}, {bb:.4g}, {c:.4g} kg m^2 (mass {mass:.4g} kg)"))
        elif a + bb < c * (1.0 - TRIANGLE_TOLERANCE):
            out.append(("triangle_inequality", link,
                        f"link {link!r}: principal moments of inertia about the centre of mass {a:.4g} + {bb:.4g} "
                        f"< {c:.4g} kg m^2 break the triangle inequality A + B >= C (no rigid body has them)"))
    return out


def _joint_issues(model: RobotModel) -> list[tuple[str, str, str]]:
    """(kind, joint, message) of the independent joints, in ``joint_names`` order."""
    out: list[tuple[str, str, str]] = []
    for i, joint in enumerate(model.joint_names):
        limit = float(model.effort_limit[i])
        where = f"<limit effort=...> in the URDF or joints.{joint}.limits.effort in the drive-train YAML"
        if limit == np.inf:
            out.append(("no_effort_limit", joint, f"joint {joint!r} has no effort limit, so it is never saturated ({where})"))
        elif limit == 0.0:
            out.append(("no_effort_limit", joint,
                        f"joint {joint!r} has an effort limit of 0 (a placeholder?): saturated, it exerts nothing ({where})"))
    return out


def _kinds(kinds: Iterable[str], what: str) -> set[str]:
    if isinstance(kinds, str):  # one kind given bare would be read letter by letter
        kinds = (kinds,)
    out = set()
    for kind in kinds:
        if kind not in ISSUE_KINDS:
            raise UnknownNameError(what, kind, ISSUE_KINDS)
        out.add(kind)
    return out


def check_model(model: RobotModel, *, allow: Iterable[str] = (), include_accepted: bool = False) -> list[ModelIssue]:
    """The issues of ``model``: moving links first (tree order), then joints (``joint_names`` order).

    Args:
        model: the robot.
        allow: kinds (of :data:`ISSUE_KINDS`) to leave out, e.g. ``("no_effort_limit",)`` where
            the controller has effort limits of its own.
        include_accepted: also return the issues the robot's YAML declares accepted (their
            ``accepted`` holds the reason); by default they are left out.

    Returns:
        A list of :class:`ModelIssue`, empty for a model with nothing to report.

    Raises:
        UnknownNameError: a kind in ``allow`` that is not one of :data:`ISSUE_KINDS`.
    """
    allowed = _kinds(allow, "issue kind")
    reasons = {(name, kind): reason for name, kind, reason in model.accepted_issues}
    issues = []
    for kind, name, message in _link_issues(model) + _joint_issues(model):
        reason = reasons.get((name, kind))
        if kind in allowed or (reason is not None and not include_accepted):
            continue
        issues.append(ModelIssue(kind, name, message, reason))
    return issues


def warn_model_issues(model: RobotModel, stacklevel: int = 2) -> list[ModelIssue]:
    """Warn once per issue of ``model`` that its YAML does not accept (a
    :class:`~robot_dynamics.errors.ModelWarning` naming the robot and the link or joint), and
    return them. ``stacklevel`` as for :func:`warnings.warn`, counted from the caller."""
    issues = check_model(model)
    for issue in issues:
        warnings.warn(ModelWarning(f"robot {model.name!r}: {issue.message}", issue), stacklevel=stacklevel + 1)
    return issues


def _nearest(name: str, valid: list[str]) -> str:
    near = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
    return f"; did you mean {near[0]!r}?" if near else ""


def accepted_issues(model: RobotModel, section: Any, where: str = ACCEPTED_KEY) -> tuple[tuple[str, str, str], ...]:
    """The ``accepted_model_issues`` section of a YAML, checked against ``model``, merged over
    the model's own declarations: ``((name, kind, reason), ...)`` for :attr:`RobotModel.accepted_issues`.

    The section maps a moving link (``model.body_names``) or a joint (``model.joint_names``) to
    ``{kind: reason}``: a link takes the kinds of :data:`LINK_KINDS`, a joint those of
    :data:`JOINT_KINDS`; the reason is text, which says why the model keeps the value.

    Raises:
        ModelError: not a mapping, an unknown link or joint (the valid ones named), a kind that
            does not exist or does not concern that name, a reason that is not text.
    """
    if section is None:
        section = {}
    if not isinstance(section, dict):
        raise ModelError(f"{where}: expected a mapping of link or joint names to {{kind: reason}}, "
                         f"got {type(section).__name__}")
    links, joints = list(model.body_names), list(model.joint_names)
    merged = {(name, kind): reason for name, kind, reason in model.accepted_issues}
    for name, kinds in section.items():
        valid = ([*LINK_KINDS] if name in links else []) + ([*JOINT_KINDS] if name in joints else [])
        if not valid:
            raise ModelError(f"{where}.{name}: not a moving link or a joint of {model.name!r}. Valid links: {links}; "
                             f"valid joints: {joints}{_nearest(str(name), links + joints)}")
        if not isinstance(kinds, dict) or not kinds:
            raise ModelError(f"{where}.{name}: expected a mapping of issue kinds to reasons, e.g. "
                             f"{{{valid[-1]}: \"why the model keeps it\"}}; valid kinds here: {valid}")
        for kind, reason in kinds.items():
            if kind not in valid:
                role = "link" if name in links else "joint"
                raise ModelError(f"{where}.{name}.{kind}: not an issue kind of a {role}. Valid kinds for {name!r}: {valid}"
                                 f"{_nearest(str(kind), valid)}")
            if not isinstance(reason, str) or not reason.strip():
                raise ModelError(f"{where}.{name}.{kind}: expected the reason as text (why the model keeps it), "
                                 f"got {reason!r}")
            merged[(name, kind)] = " ".join(reason.split())
    return tuple((name, kind, reason) for (name, kind), reason in merged.items())
