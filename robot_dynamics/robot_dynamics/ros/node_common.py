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

__all__ = ["LATEST", "declare_parameters", "seconds", "run", "service_qos", "sigint_ignored"]

#: The history depth of a control loop's inputs (the controller's joint states and reference,
#: the simulator's commands): the newest message only. With rclpy's 10, a Python node that falls
#: behind a 1 kHz publisher (controller_manager's) works through a queue of states up to 10
#: periods old: delay that the law does not know of, enough to make the loop ring at the effort
#: limits.
LATEST = 1


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


class _Interrupt:
    """The Python-level SIGINT handler while a node runs: it counts the SIGINTs and raises nothing.

    rclpy's own handler, installed by ``rclpy.init`` on top of this one (it calls it after its
    own work), shuts the context down and wakes the executor, whose spin then ends with
    ExternalShutdownException: that is the stop. Python's default handler would raise
    KeyboardInterrupt wherever the interpreter happens to be instead: inside rclpy's message
    conversion, an object's ``__del__`` ("Exception ignored ... Traceback"), and, for the second
    SIGINT a terminal's Ctrl-C brings (it reaches the whole process group, and ``ros2 launch``
    whose stdin is not a terminal sends its own too), inside the stop itself (a traceback and
    exit code -2, seen in destroy_node). A SIGINT before rclpy's handler is installed, or while
    the node is built, is counted and the node stops before it spins.
    """

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, signum: int, frame: Any) -> None:
        self.count += 1


@contextlib.contextmanager
def sigint_ignored(restore: bool = True) -> Iterator[None]:
    """SIGINT ignored inside the block (main thread only; elsewhere the block runs as it is), and
    after it too unless ``restore``: a second Ctrl-C does not interrupt a cleanup."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        if restore:
            signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)


def run(factory: Callable[[], Node], args: list[str] | None = None, *, exit_after: bool = False) -> int:
    """Init rclpy, build the node, spin until Ctrl-C or shutdown, clean up. Returns an exit code.

    Ctrl-C (SIGINT, once or more) and an external shutdown end the node with exit code 0 and no
    traceback, at any point: while rclpy starts, while the node is built, while it spins or
    while it is destroyed (see :class:`_Interrupt`). A configuration error (bad parameter, robot
    that does not load) ends the node with a one-line message and exit code 1. ``exit_after``:
    the caller ends the process with the code (a console script): SIGINT is then left ignored
    (Python would restore its default, death by the signal and exit code -2, for a late one
    while it finalises the interpreter); otherwise the handler before the call is restored.
    """
    node: Node | None = None
    executor: SingleThreadedExecutor | None = None
    code = 0
    interrupt = _Interrupt()
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, interrupt) if main else None
    try:
        rclpy.init(args=args)
        # each step only while no SIGINT came (an Executor made on a context a SIGINT has shut
        # down is left half-made, and its __del__ prints a traceback)
        if not interrupt.count:
            executor = SingleThreadedExecutor()
            if not interrupt.count:
                node = factory()
                if not interrupt.count:
                    executor.add_node(node)
                    executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except RobotDynamicsError as exc:
        print(f"robot_dynamics: {exc}", file=sys.stderr)
        code = 1
    except Exception:
        # A SIGINT shuts the context down at once, while the node is built or a callback runs:
        # what uses the context next fails ("publisher's context is invalid", a node that cannot
        # be created). The context can also go down without a SIGINT of ours (an external
        # shutdown) just before the take that fails. Both are a stop.
        if not interrupt.count and (node is None or not _shutting_down(node)):
            raise
    finally:
        try:
            if executor is not None:
                executor.shutdown()
            if node is not None:
                node.destroy_node()
            try:
                rclpy.try_shutdown()  # shuts down only a context still up
            except Exception:  # "rcl_shutdown already called": a SIGINT shut it down since the check
                if rclpy.ok():
                    raise
        finally:
            if main:
                signal.signal(signal.SIGINT, signal.SIG_IGN if exit_after else
                              previous if previous is not None else signal.default_int_handler)
    return code
