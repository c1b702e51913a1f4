"""``ros2-control``: the robot's URDF with a ``<ros2_control>`` block, and the controller
manager's YAML, for bringing the arm up through ros2_control (robot_dynamics_bringup's
launch/arm.launch.py does the same at launch). ``engine-model``: the robot as the engine's text form, which the ros2_control
plugins of robot_dynamics_control take as their ``robot_model`` parameter (a launch runs this command, or
robot_dynamics.ros.launch_support.robot_model_text; the plugins run no loader)."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import CommonOptions, _pairs, emit, load_model, output_dir, state_vector, write_atomic


def register(sub: Any, parents: CommonOptions) -> None:
    from ..ros.ros2_control import UPDATE_RATE  # numpy and PyYAML, which the CLI has loaded already

    p = sub.add_parser(
        "ros2-control", parents=[parents.robot, parents.json, parents.out],
        help="the URDF with a <ros2_control> block (effort commands; position, velocity, effort states) "
             "and the controller manager's YAML",
    )
    p.add_argument("--hardware", default="sim",
                   help="sim (the arm's dynamics in-process: robot_dynamics_control/SimulatedSystem; default), "
                        "topic (a simulator through topic_based_ros2_control/TopicBasedSystem), "
                        "mock (mock_components/GenericSystem) or a vendor's plugin as package/Class")
    p.add_argument("--control", default="in_loop",
                   help="in_loop (robot_dynamics_control's three controllers in the controller manager, "
                        "joint_trajectory_controller chained in front of the computed-torque one; default) or node (our Python controller "
                        "node commanding a JointGroupEffortController)")
    p.add_argument("--hardware-param", action="append", default=[], metavar="NAME=VALUE",
                   help="a <param> of the hardware (repeatable)")
    p.add_argument("--q", help="initial positions of the position state interfaces (comma list, joint order)")
    p.add_argument("--update-rate", type=int, default=UPDATE_RATE,
                   help=f"controller_manager's rate [Hz] (default {UPDATE_RATE}, as arm.launch.py's)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--block-only", action="store_true", help="print only the <ros2_control> element")
    what.add_argument("--controllers", action="store_true",
                      help="print the controller manager's YAML instead (what depends on the robot; the gains: "
                           "robot_dynamics_bringup's config/controllers.yaml)")
    p.set_defaults(func=run_ros2_control)

    e = sub.add_parser(
        "engine-model", parents=[parents.robot, parents.out],
        help="the robot (URDF + drive-train YAML) as the engine's text form, for C and C++ users: the robot_model "
             "parameter of robot_dynamics_control's controllers and simulated hardware (with --strict, which they "
             "require unless allow_nonphysical_model)",
    )
    e.add_argument("--strict", action="store_true",
                   help="refuse a model with issues its YAML does not accept (a massless moving link, an inertia that "
                        "is not positive definite or breaks the triangle inequality, a joint without effort limit): "
                        "exit status 2 and one line naming them all (without it: a warning line each on stderr); the "
                        "text ends in the line '# checks: strict' recording it")
    e.add_argument("--allow-no-effort-limit", action="store_true",
                   help="leave joints without effort limit out of the checks (where the caller limits the efforts "
                        "itself)")
    e.set_defaults(func=run_engine_model)


def run_ros2_control(args: argparse.Namespace) -> int:
    from ..errors import ModelError
    from ..ros.ros2_control import (
        HARDWARE,
        IN_LOOP_CONTROLLERS,
        controllers_yaml,
        hardware_plugin,
        robot_models,
        ros2_control_block,
        with_ros2_control,
    )

    m = load_model(args)
    if m.description is None:
        raise ModelError(f"robot {m.name!r} has no URDF description")
    q0 = state_vector(args, "q", m) if args.q else None
    hardware_params = _pairs(args.hardware_param, "=", "--hardware-param", "NAME=VALUE")
    # the plugins' model text, made here by the one loader: the simulated arm's and the controllers'
    users = {"hardware": hardware_params} if hardware_plugin(args.hardware) == HARDWARE["sim"] else {}
    if args.control == "in_loop":
        users.update((name, {}) for name, _ in IN_LOOP_CONTROLLERS.values())
    models = robot_models(m, users)
    block = ros2_control_block(m, args.hardware, initial_positions=q0, hardware_params=hardware_params,
                               robot_model=models.get("hardware", ""))
    urdf = with_ros2_control(m.description, block)
    controllers = controllers_yaml(m, args.update_rate, control=args.control,
                                   robot_model={k: v for k, v in models.items() if k != "hardware"})
    files = None
    if args.out:
        folder = output_dir(args)
        files = {"urdf": str(write_atomic(folder / f"{m.name}_ros2_control.urdf", urdf)),
                 "controllers": str(write_atomic(folder / f"{m.name}_controllers.yaml", controllers))}
    if args.json:
        emit(args, {"robot": m.name, "ros2_control": block, "urdf": urdf, "controllers_yaml": controllers,
                    "files": files}, "")
    elif files is not None:
        print("\n".join(files.values()))
    else:
        print(block if args.block_only else controllers if args.controllers else urdf, end="" if args.controllers else "\n")
    return 0


def run_engine_model(args: argparse.Namespace) -> int:
    import sys

    from ..engine.layout import model_text
    from ..model import check_model
    from ..ros.ros2_control import engine_model_text

    m = load_model(args, report_issues=False)
    if args.strict:  # refused on an issue, one line naming them all; the text records the checks
        text = engine_model_text(m, strict=True, allow_no_effort_limit=args.allow_no_effort_limit)
    else:
        for issue in check_model(m, allow=("no_effort_limit",) if args.allow_no_effort_limit else ()):
            print(f"robot-dynamics engine-model: warning: robot {m.name!r}: {issue.message}", file=sys.stderr)
        text = model_text(m)
    if args.out:
        print(write_atomic(output_dir(args) / f"{m.name}.engine-model", text))
    else:
        print(text, end="")
    return 0
