"""What differs between the ROS 2 distributions this package runs on (Humble, Jazzy): one place.

No other module checks a ROS version; code that meets a difference asks this module. Pure (no
rclpy import): :func:`current` reads the running distribution from ``ROS_DISTRO`` or, where
that is unset (a source build without ros_environment), from rclpy's package.xml version.

The differences, found by running the ROS tests and ``sim.launch.py`` under both (Humble:
rclpy 3.3, Jazzy: rclpy 7.1):

- Discovery range. Humble keeps DDS on the machine with ``ROS_LOCALHOST_ONLY=1``; Jazzy
  replaces it with ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` (``ROS_LOCALHOST_ONLY`` still
  works there but logs a deprecation warning in every process). :func:`localhost_only`.
- Parameters every node has. Humble: ``use_sim_time``. Jazzy adds
  ``start_type_description_service`` (each node serves ``~/get_type_description``, REP 2011
  type descriptions). :attr:`Distribution.builtin_parameters`.
- Generated service classes. Humble: ``Request`` and ``Response``. Jazzy's rosidl adds an
  ``Event`` message to every service (service introspection; our .srv files build unchanged).
  :attr:`Distribution.service_parts`.
- QoS and parameter APIs: none that this package uses differs. ``QoSProfile(depth=...,
  durability=..., reliability=...)``, ``declare_parameter(name, value, descriptor)`` with
  ``dynamic_typing``, ``rclpy.init/spin/try_shutdown`` and ``ExternalShutdownException`` are the
  same on both (the context-manager forms of Rolling are not used).
- launch_testing and pytest. Humble's launch_testing pytest plugin loads under pytest < 8;
  Jazzy's under pytest < 9 (it still implements the py.path hook argument pytest 9 removes).
  Pinned per distribution in ``.ci/constraints-<distro>.txt``; nothing in the tests differs.
- numpy 1 or 2 beside the distribution. The message packages' C extensions are compiled
  against one numpy major: Humble's (and Jazzy's official debs) against numpy 1, so numpy < 2,
  pyarrow < 21 and pin 2.7 go beside them (the Pinocchio peer tests that need pin >= 3 skip);
  Jazzy also builds against numpy 2 (CI builds it so: numpy 2.2, pin 4.1, every peer test
  runs). The bounds live in the constraints files; the library's own code is numpy 1 and 2
  neutral. :attr:`Distribution.numpy_of_debs` records the official binaries' numpy.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DISTRIBUTIONS", "Distribution", "current", "localhost_only"]


@dataclass(frozen=True)
class Distribution:
    """The facts of one ROS 2 distribution this package depends on."""

    name: str
    rclpy_major: int  # rclpy's major version in this distribution (how a source build is told apart)
    discovery: tuple[str, str]  # the environment variable (and value) that keeps DDS on this machine
    builtin_parameters: frozenset[str]  # parameters rclpy declares on every node
    service_parts: tuple[str, ...]  # the classes generated for each .srv
    pytest_below: int  # launch_testing's pytest plugin needs pytest below this major
    numpy_of_debs: int  # the numpy major the official binaries are built against


DISTRIBUTIONS: dict[str, Distribution] = {
    "humble": Distribution(
        name="humble", rclpy_major=3, discovery=("ROS_LOCALHOST_ONLY", "1"),
        builtin_parameters=frozenset({"use_sim_time"}), service_parts=("Request", "Response"),
        pytest_below=8, numpy_of_debs=1,
    ),
    # Jazzy: ROS_AUTOMATIC_DISCOVERY_RANGE replaces ROS_LOCALHOST_ONLY (deprecated, warns);
    # start_type_description_service on every node; an Event message per service.
    "jazzy": Distribution(
        name="jazzy", rclpy_major=7, discovery=("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST"),
        builtin_parameters=frozenset({"use_sim_time", "start_type_description_service"}),
        service_parts=("Request", "Response", "Event"), pytest_below=9, numpy_of_debs=1,
    ),
}


def _rclpy_major() -> int | None:
    """rclpy's major version from its package.xml in the ament prefixes, or None without rclpy."""
    for prefix in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep):
        xml = Path(prefix) / "share" / "rclpy" / "package.xml" if prefix else None
        if xml is not None and xml.is_file():
            match = re.search(r"<version>(\d+)\.", xml.read_text(encoding="utf-8"))
            if match:
                return int(match.group(1))
    return None


def current() -> Distribution | None:
    """The sourced distribution, or None without ROS 2 (or one this package does not know).

    ``ROS_DISTRO`` where set (the official binaries set it); otherwise the one whose rclpy major
    version the ament prefixes hold (a source build without ros_environment).
    """
    name = os.environ.get("ROS_DISTRO", "")
    if name:
        return DISTRIBUTIONS.get(name)
    major = _rclpy_major()
    return next((d for d in DISTRIBUTIONS.values() if d.rclpy_major == major), None)


def localhost_only(distribution: Distribution | None = None) -> dict[str, str]:
    """The environment that keeps DDS discovery on this machine under ``distribution``.

    Defaults to :func:`current`; without ROS 2, the variables of every known distribution.
    """
    known = distribution or current()
    chosen = [known] if known is not None else list(DISTRIBUTIONS.values())
    return dict(d.discovery for d in chosen)
