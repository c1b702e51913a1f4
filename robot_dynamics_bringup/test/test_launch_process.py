"""`ros2 launch robot_dynamics_bringup arm.launch.py` as a user runs it, in a process group of its own
as a terminal starts it: a hardware plugin that cannot load ends the launch by itself with an
error naming the plugin; Ctrl-C on the terminal (SIGINT to the whole group, stdin a terminal)
stops every process with exit code 0 and no traceback.

Run where ROS 2 with its C++ stack is sourced and the packages are built (``colcon test``):
    python -m pytest robot_dynamics_bringup/test/test_launch_process.py
"""

from __future__ import annotations

import os
import pty
import random
import re
import signal
import subprocess
import time

import pytest

from robot_dynamics.ros.probe import package_share

#: every process of a launch ends with one of these lines of launch's
FINISHED = re.compile(r"\[INFO\] \[([\w.-]+)\]: process has finished cleanly")
DIED = re.compile(r"\[ERROR\] \[([\w.-]+)\]: process has died \[pid \d+, exit code (-?\d+)")
STARTED = re.compile(r"\[INFO\] \[([\w.-]+)\]: process started with pid")


class Launch:
    """``ros2 launch robot_dynamics_bringup arm.launch.py <arguments>`` in a new session (its own
    process group, as a terminal's shell starts a job), stdin a pseudo-terminal (what makes
    `ros2 launch` interactive), output collected."""

    def __init__(self, *arguments: str):
        self.primary, secondary = pty.openpty()
        env = dict(os.environ, ROS_DOMAIN_ID=str(random.randint(100, 200)), RCUTILS_COLORIZED_OUTPUT="0")
        self.process = subprocess.Popen(
            ["ros2", "launch", "robot_dynamics_bringup", "arm.launch.py", "use_rviz:=false", *arguments],
            stdin=secondary, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        os.close(secondary)
        self.lines: list[str] = []
        os.set_blocking(self.process.stdout.fileno(), False)

    def read(self) -> None:
        chunk = self.process.stdout.read()
        if chunk:
            self.lines.extend(chunk.decode(errors="replace").splitlines())

    def wait_for(self, pattern: str, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.read()
            if any(re.search(pattern, line) for line in self.lines) or self.process.poll() is not None:
                break
            time.sleep(0.1)
        self.read()
        return any(re.search(pattern, line) for line in self.lines)

    def wait(self, timeout: float) -> int | None:
        """The launch's exit code once it ends within ``timeout`` [s]; None (and the group killed) otherwise."""
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.process.poll() is None:
            self.read()
            time.sleep(0.1)
        if self.process.poll() is None:
            self.close()
            return None
        time.sleep(0.2)
        self.read()
        return self.process.returncode

    def interrupt(self) -> None:
        """Ctrl-C on the terminal: SIGINT to every process of the group."""
        os.killpg(self.process.pid, signal.SIGINT)

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.read()
        os.close(self.primary)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@pytest.fixture
def launch():
    started: list[Launch] = []

    def start(*arguments: str) -> Launch:
        started.append(Launch(*arguments))
        return started[-1]

    yield start
    for one in started:
        one.close()


def test_a_hardware_plugin_that_cannot_load_ends_the_launch_with_its_name(launch):
    start = time.monotonic()
    arm = launch("hardware:=no_such_pkg/NoSuchSystem")
    code = arm.wait(120.0)
    assert code is not None, "the launch did not end by itself:\n" + arm.text[-4000:]
    # controller_manager's failure is seen at once (Humble: it ends; Jazzy: it says so and runs on),
    # not after the spawners' 60 s without a controller manager
    assert time.monotonic() - start < 50.0, arm.text[-4000:]
    assert code == 1, arm.text[-4000:]
    errors = [line for line in arm.lines if "[ERROR] [launch]" in line]
    assert errors, arm.text[-4000:]
    assert "controller_manager (ros2_control_node)" in errors[0] and "the arm is not up" in errors[0], errors
    assert "hardware plugin no_such_pkg/NoSuchSystem" in errors[0], errors


@pytest.mark.parametrize("arguments", [(), ("control:=node", "hardware:=topic")], ids=["in_loop-sim", "node-topic"])
def test_ctrl_c_on_the_terminal_stops_every_process_cleanly(launch, arguments):
    if "hardware:=topic" in arguments:
        if package_share("topic_based_ros2_control") is None:
            pytest.skip("topic_based_ros2_control is not built in this ROS 2 (hardware:=topic needs it)")
    arm = launch(*arguments, "goal:=0.5,-0.4,0.3,0.2,-0.1,0.6")
    # up: every spawner done, the trajectory node (started after them) built. Its process start is
    # not enough: a Ctrl-C while Python still imports the node's modules (seconds on a slow machine)
    # ends it by the signal, exit code -2, before its handler is installed
    assert arm.wait_for(r"\[trajectory\]: planning for", 150.0), arm.text[-4000:]
    time.sleep(3.0)
    arm.interrupt()
    code = arm.wait(60.0)
    assert code == 0, arm.text[-4000:]
    started = {m.group(1) for line in arm.lines for m in [STARTED.search(line)] if m}
    finished = {m.group(1) for line in arm.lines for m in [FINISHED.search(line)] if m}
    died = {m.group(1): m.group(2) for line in arm.lines for m in [DIED.search(line)] if m}
    assert not died, died
    assert started == finished, f"started {sorted(started)}, finished cleanly {sorted(finished)}"
    assert {"ros2_control_node", "dynamics", "trajectory"} <= {name.rsplit("-", 1)[0] for name in finished}
    assert "Traceback" not in arm.text and "KeyboardInterrupt" not in arm.text, arm.text[-4000:]
