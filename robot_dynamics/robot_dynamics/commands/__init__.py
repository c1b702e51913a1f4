"""Subcommands of ``robot-dynamics``: one module each, discovered by :mod:`robot_dynamics.cli`.

A module defines ``register(subparsers, parents)``; it adds its parser with
``parents=parents`` (the shared --robot/--urdf/--drivetrain/--json/--out options) and sets
``func=run`` where ``run(args) -> int``. Heavy imports go inside ``run``.
"""
