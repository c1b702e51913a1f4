"""``ros2-control``: the robot's URDF with a ``<ros2_control>`` block, and the controller
manager's YAML, for bringing the arm up through ros2_control (robot_dynamics_bringup's
launch/arm.launch.py does the same at launch). ``engine-model``: the robot as the engine's text form, which the ros2_control
plugins of robot_dynamics_control load (they run this command once, at configuration)."""

from __future__ import annotations

import argparse
from typing import Any

from ..model.checks import ACCEPTED_KEY
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
        help="the robot (URDF + drive-train YAML) as the engine's text form, for C and C++ users "
             "(robot_dynamics_control's controllers and simulated hardware load it)",
    )
    e.add_argument("--strict", action="store_true",
                   help="refuse a model with issues its YAML does not accept (a massless moving link, an inertia that "
                        "is not positive definite or breaks the triangle inequality, a joint without effort limit): "
                        "exit status 2 and one line naming them all (without it: a warning line each on stderr)")
    e.add_argument("--allow-no-effort-limit", action="store_true",
                   help="leave joints without effort limit out of the checks (where the caller limits the efforts "
                        "itself)")
    e.set_defaults(func=run_engine_model)


def run_ros2_control(args: argparse.Namespace) -> int:
    from ..errors import ModelError
    from ..ros.ros2_control import controllers_yaml, ros2_control_block, with_ros2_control

    m = load_model(args)
    if m.description is None:
        raise ModelError(f"robot {m.name!r} has no URDF description")
    q0 = state_vector(args, "q", m) if args.q else None
    drivetrain = _drivetrain_path(args)
    block = ros2_control_block(m, args.hardware, initial_positions=q0,
                               hardware_params=_pairs(args.hardware_param, "=", "--hardware-param", "NAME=VALUE"),
                               drivetrain=drivetrain if args.hardware == "sim" else "")
    urdf = with_ros2_control(m.description, block)
    controllers = controllers_yaml(m, args.update_rate, control=args.control, description=urdf, drivetrain=drivetrain)
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


def _drivetrain_path(args: argparse.Namespace) -> str:
    """The drive-train YAML the plugins load beside the URDF: --drivetrain, else a bundled
    robot's own (absolute, as the controller manager runs elsewhere), else none."""
    from pathlib import Path

    from ..model.registry import robot_files

    if getattr(args, "drivetrain", None):
        return str(Path(args.drivetrain).resolve())
    if getattr(args, "urdf", None):
        return ""
    from ..model import DEFAULT_ROBOT

    sidecar = robot_files(getattr(args, "robot", None) or DEFAULT_ROBOT)[1]
    return "" if sidecar is None else str(Path(sidecar).resolve())


def run_engine_model(args: argparse.Namespace) -> int:
    import sys

    from ..errors import ModelError
    from ..engine.layout import model_text
    from ..model import check_model

    m = load_model(args, report_issues=False)
    issues = check_model(m, allow=("no_effort_limit",) if args.allow_no_effort_limit else ())
    if issues and args.strict:
        # one line: the C++ plugins report the last line of stderr as the reason they refuse the model
        raise ModelError(
            f"robot {m.name!r} fails the model checks ({len(issues)} issue{'s' if len(issues) > 1 else ''}): "
            + "; ".join(i.message for i in issues)
            + f"; declare a known one under {ACCEPTED_KEY} in the drive-train YAML"
            + ("" if args.allow_no_effort_limit or all(i.kind != "no_effort_limit" for i in issues)
               else ", or give the effort limits and --allow-no-effort-limit"))
    for issue in issues:
        print(f"robot-dynamics engine-model: warning: robot {m.name!r}: {issue.message}", file=sys.stderr)
    text = model_text(m)
    if args.out:
        print(write_atomic(output_dir(args) / f"{m.name}.engine-model", text))
    else:
        print(text, end="")
    return 0
