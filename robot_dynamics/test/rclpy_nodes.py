"""rclpy nodes in one process, for the node tests of test/ros: the executor fixture and the calls
they share. Import it after the test module's ``pytest.importorskip("rclpy")``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor


@pytest.fixture
def ros() -> Iterator[tuple[Any, list[Any]]]:
    """(executor, nodes): rclpy initialised, the nodes added by ``add`` destroyed afterwards."""
    rclpy.init()
    executor = SingleThreadedExecutor()
    nodes: list[Any] = []
    yield executor, nodes
    for n in nodes:
        executor.remove_node(n)
        n.destroy_node()
    executor.shutdown()
    rclpy.shutdown()


def add(ros: tuple[Any, list[Any]], node: Any) -> Any:
    """The node added to the fixture's executor (and destroyed with it)."""
    executor, nodes = ros
    executor.add_node(node)
    nodes.append(node)
    return node


def spin_until(executor: Any, predicate: Callable[[], bool], timeout: float) -> bool:
    """Spins until ``predicate()`` or ``timeout`` [s]; its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        executor.spin_once(timeout_sec=0.02)
    return predicate()


def call(ros: tuple[Any, list[Any]], client: Any, request: Any, timeout: float = 10.0) -> Any:
    """A service's answer to ``request`` within ``timeout`` [s] (asserted)."""
    executor, _ = ros
    assert client.wait_for_service(timeout_sec=timeout)
    future = client.call_async(request)
    assert spin_until(executor, future.done, timeout)
    return future.result()
