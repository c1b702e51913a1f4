"""What the four rclpy nodes share: declaring the parameter table, reading time, running main().

Targets ROS 2 Humble and Jazzy: ``rclpy.init()`` / an executor's ``spin()`` / ``destroy_node()`` /
``rclpy.try_shutdown()`` (no context-manager form, which exists only on Rolling).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import rclpy
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, qos_profile_services_default

from ..errors import InputError, RobotDynamicsError
from .params import NODE_PARAMETERS, ParamSpec, describe, service_history, validate

__all__ = ["declare_parameters", "seconds", "run", "service_qos", "sigint_ignored"]


def _descriptor(spec: ParamSpec) -> ParameterDescriptor:
    d = ParameterDescriptor()
    d.name = spec.name
    d.description = spec.description
    d.read_only = spec.read_only
    if spec.choices:
        d.additional_constraints = f"one of {list(spec.choices)}"
    if spec.type == "double" and (spec.minimum is not None or spec.maximum is not None):
        r = FloatingPointRange()
        r.from_value = float(spec.minimum if spec.minimum is not None else -sys.float_info.max)
        r.to_value = float(spec.maximum if spec.maximum is not None else sys.float_info.max)
        r.step = 0.0
        d.floating_point_range = [r]
    if spec.type == "integer" and (spec.minimum is not None or spec.maximum is not None):
        ir = IntegerRange()
        ir.from_value = int(spec.minimum if spec.minimum is not None else -(2**63))
        ir.to_value = int(spec.maximum if spec.maximum is not None else 2**63 - 1)
        ir.step = 0
        d.integer_range = [ir]
    if spec.default is None or spec.type in ("double", "double_array"):
        # An empty list has no type rclpy can infer; and ROS users write `rate:=500` or
        # `gravity:=[0, 0, -10]` for doubles: declare these dynamically typed and let
        # params.validate check the type (an integer is taken as a double) and the range.
        d.dynamic_typing = True
    return d


def declare_parameters(node: Node, node_name: str) -> dict[str, Any]:
    """Declare every parameter of ``node_name``'s table on ``node`` and return validated values.

    Raises:
        InputError: a value is invalid (the message names the parameter and the valid values).
    """
    from rclpy.exceptions import InvalidParameterTypeException, InvalidParameterValueException

    values: dict[str, Any] = {}
    for spec in NODE_PARAMETERS[node_name]:
        try:
            param = node.declare_parameter(spec.name, spec.default, _descriptor(spec))
        except (InvalidParameterTypeException, InvalidParameterValueException):
            # rclpy refused the override (type or range): read it without the constraints and let
            # validate() say, in one line, what the parameter takes
            loose = ParameterDescriptor(name=spec.name, description=spec.description, dynamic_typing=True)
            param = node.declare_parameter(spec.name, spec.default, loose)
            values[spec.name] = param.value
            validate(node_name, values)
            raise InputError(f"{node_name}: parameter {spec.name!r}: {describe(spec)}, got {param.value!r}") from None
        value = param.value
        if value is not None and spec.type.endswith("_array"):
            value = list(value)
        values[spec.name] = value
    return validate(node_name, values)


def service_qos(depth: int) -> QoSProfile:
    """The QoS of a service with ``service_queue_depth`` = ``depth``: rclpy's services default
    (reliable, volatile) with a history of ``depth`` (KEEP_ALL for 0).

    rclpy's default keeps 10: a service whose callback is busy while more than 10 requests come
    in (several clients, or calls sent without waiting for the answer) loses the oldest.

    Raises:
        InputError: ``depth`` is not an integer in [0, 1000000].
    """
    history, n = service_history(depth)
    base = qos_profile_services_default
    if history == "keep_all":
        return QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=base.reliability, durability=base.durability)
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=n, reliability=base.reliability,
                      durability=base.durability)


def seconds(node: Node) -> float:
    """The node's clock (ROS time, or sim time with use_sim_time) in seconds."""
    return float(node.get_clock().now().nanoseconds) * 1e-9


def _shutting_down(node: Node, wait: float = 1.0) -> bool:
    """Whether the node's context goes down within ``wait`` seconds (a stop, not an error)."""
    end = time.monotonic() + wait
    while node.context.ok():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def _ignore_sigint() -> Any:
    """Ignore SIGINT from now on (main thread only: None elsewhere); the handler it replaces.

    A Ctrl-C on a terminal reaches the whole process group, and ``ros2 launch`` whose stdin is
    not a terminal (a script, a container, launch_testing) sends each process its own SIGINT
    as well: the second one must not interrupt the cleanup of the first with a KeyboardInterrupt
    (seen in destroy_node: a traceback and exit code -2). One that lands while this runs is
    absorbed here.
    """
    if threading.current_thread() is not threading.main_thread():
        return None
    replaced: list[Any] = []
    while True:
        try:
            replaced.append(signal.signal(signal.SIGINT, signal.SIG_IGN))
            break
        except KeyboardInterrupt:  # raised as the call returned: SIGINT is ignored from here on
            continue
    first = replaced[0] if replaced else None
    return first if first not in (None, signal.SIG_IGN) else signal.default_int_handler


@contextlib.contextmanager
def sigint_ignored(restore: bool = True) -> Iterator[None]:
    """SIGINT ignored inside the block (main thread only; elsewhere the block runs as it is), and
    after it too unless ``restore`` (see :func:`_ignore_sigint`)."""
    previous = _ignore_sigint()
    try:
        yield
    finally:
        if restore and previous is not None:
            signal.signal(signal.SIGINT, previous)


def run(factory: Callable[[], Node], args: list[str] | None = None, *, exit_after: bool = False) -> int:
    """Init rclpy, build the node, spin until Ctrl-C or shutdown, clean up. Returns an exit code.

    Ctrl-C (SIGINT, once or twice) and an external shutdown end the node with exit code 0 and no
    traceback, at any point: while rclpy starts, while the node is built, while it spins or
    while it is destroyed. A configuration error (bad parameter, robot that does not load) ends
    the node with a one-line message and exit code 1. ``exit_after``: the caller ends the
    process with the code (a console script): SIGINT stays ignored from the node's stop on, so
    that a late second one cannot end the process with its signal (exit code -2) instead.
    """
    node: Node | None = None
    executor: SingleThreadedExecutor | None = None
    code = 0
    try:
        try:
            rclpy.init(args=args)
            # the executor before the node (rclpy.spin would make one after it): a SIGINT that lands
            # while an executor is constructed leaves a half-made one whose __del__ prints a traceback
            executor = SingleThreadedExecutor()
            node = factory()
            executor.add_node(node)
            executor.spin()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
        except RobotDynamicsError as exc:
            print(f"robot_dynamics: {exc}", file=sys.stderr)
            code = 1
        except Exception:
            # Ctrl-C (or launch's SIGINT) shuts the context down while a callback may be running;
            # its next publish then fails with "publisher's context is invalid". And a SIGINT that
            # lands while rclpy converts a message it takes surfaces as that conversion's
            # RuntimeError ("Unable to convert call argument to Python object"), not as
            # KeyboardInterrupt (seen under load at launch's shutdown); the take can also fail a
            # moment before rclpy's signal handler has shut the context down. All are a stop.
            # rclpy's own SIGINT handler shuts the context down (a Python handler installed here
            # would replace it at the C level: nodes without timers then never wake up to stop).
            if node is None or not _shutting_down(node):
                raise
    except KeyboardInterrupt:  # a second SIGINT while the first was being handled
        pass
    finally:
        while True:  # one that lands as this clause starts, before SIGINT is ignored, is absorbed too
            try:
                previous = _ignore_sigint()
                break
            except KeyboardInterrupt:
                continue
        try:
            if executor is not None:
                executor.shutdown()
            if node is not None:
                node.destroy_node()
            rclpy.try_shutdown()  # shuts down only a context still up
        finally:
            if not exit_after and previous is not None:
                signal.signal(signal.SIGINT, previous)
    return code
