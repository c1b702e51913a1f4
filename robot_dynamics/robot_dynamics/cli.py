"""The ``robot-dynamics`` command: dynamics from the shell, no ROS needed.

Subcommands live in :mod:`robot_dynamics.commands`: every module there with a
``register(subparsers, parents)`` function adds one (or a few) subcommands. Errors of the
package become one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import pkgutil
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

from . import __version__, commands
from .commands._common import CommonOptions
from .errors import RobotDynamicsError

__all__ = ["main", "build_parser"]


def _either_spelling(choices: Sequence[str]) -> Callable[[str], str]:
    """An argparse ``type`` that maps ``a_b`` to a choice spelt ``a-b`` and back: one name per
    thing across the CLI, the launch files and the YAML (``computed_torque`` is
    ``computed-torque``), shown as the CLI spells it."""
    canonical = {c.replace("_", "-"): c for c in choices}

    def convert(text: str) -> str:
        return canonical.get(text.replace("_", "-"), text)

    convert.__name__ = "choice"  # argparse names the type in its messages
    return convert


def _accept_both_spellings(parser: argparse.ArgumentParser) -> None:
    for action in parser._actions:  # noqa: SLF001 - argparse has no public walk of its actions
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for sub in set(action.choices.values()):
                _accept_both_spellings(sub)
        elif action.choices and action.type is None and all(isinstance(c, str) for c in action.choices):
            if any("-" in c or "_" in c for c in action.choices):
                action.type = _either_spelling(list(action.choices))


def subcommand_parser(parser: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser | None:
    """The parser of subcommand ``name`` (None when there is none of that name)."""
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            return action.choices.get(name) if name else None
    return None


def _unknown_options(parser: argparse.ArgumentParser, command: str | None, extra: list[str]) -> None:
    """Refuse arguments the subcommand does not take, with its own usage and the nearest of
    its options (``--qq`` -> ``--qd``); an option of other subcommands is named as theirs
    (``torque --out``: an option of simulate, trajectory, ...). Exits with status 2 as argparse does."""
    sub = subcommand_parser(parser, command) or parser
    options = [o for a in sub._actions for o in a.option_strings if o.startswith("--")]  # noqa: SLF001
    owners: dict[str, list[str]] = {}
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            for name, other in action.choices.items():
                for o in {o for a in other._actions for o in a.option_strings}:  # noqa: SLF001
                    owners.setdefault(o, []).append(name)
    hints, elsewhere = [], []
    for token in extra:
        if token.startswith("-"):
            typed = token.split("=", 1)[0]
            if typed in owners:
                elsewhere.append(typed)
            # an option of another subcommand is no typo: only a close spelling is suggested for it
            near = difflib.get_close_matches(typed, options, n=1, cutoff=0.8 if typed in owners else 0.6)
            if near:
                hints.append((typed, near[0]))
    message = f"unrecognized arguments: {' '.join(extra)}"
    if len(hints) == 1:
        message += f"; did you mean {hints[0][1]}?"
    elif hints:
        message += "; did you mean " + ", ".join(f"{near} for {typed}" for typed, near in hints) + "?"
    for typed in elsewhere:
        names = sorted(owners[typed])
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        message += f" ({typed} is an option of {shown})"
    sub.error(message)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every discovered subcommand."""
    parser = argparse.ArgumentParser(
        prog="robot-dynamics",
        description="Robot dynamics from URDF + YAML: inverse and direct dynamics, trajectories, "
        "controllers and simulation.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    parents = CommonOptions()
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub, parents)
    _in_order_of_use(sub)
    _accept_both_spellings(parser)
    return parser


#: How --help lists the subcommands: the main job first, then the dynamics, the studies, the
#: mechanisms of the source documents, the exports, and the developer's tools last.
COMMAND_ORDER = ("simulate", "trajectory", "torque", "accel", "mass-matrix", "info", "time-optimal", "drivetrain", "sweep",
                 "identify", "excite", "observer-thresholds", "stewart", "quadruped-yaw", "quadruped-pitch", "urdf",
                 "ros2-control", "engine-model", "codegen", "bench")


def _in_order_of_use(sub: Any) -> None:
    """Orders the subcommands of --help by :data:`COMMAND_ORDER` (any other one after them)."""
    actions = getattr(sub, "_choices_actions", None)  # argparse's list of the help lines
    if actions is None:
        return
    rank = {name: i for i, name in enumerate(COMMAND_ORDER)}
    actions.sort(key=lambda a: rank.get(a.dest, len(rank)))


def _join_negative_values(argv: Sequence[str]) -> list[str]:
    """Let ``--q -0.5,1`` through: argparse would take ``-0.5,1`` for an option."""
    out: list[str] = []
    for tok in argv:
        if out and out[-1].startswith("--") and "=" not in out[-1] and re.match(r"^-[\d.]", tok):
            out[-1] = f"{out[-1]}={tok}"
        else:
            out.append(tok)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``robot-dynamics``; returns the exit status."""
    parser = build_parser()
    args, extra = parser.parse_known_args(_join_negative_values(sys.argv[1:] if argv is None else argv))
    if extra:
        _unknown_options(parser, getattr(args, "command", None), extra)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except RobotDynamicsError as exc:
        print(f"robot-dynamics {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"robot-dynamics {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader (head, less) went away: not an error of ours; silence the flush at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
