"""Subcommands of ``robot-dynamics``: one module each, discovered by :mod:`robot_dynamics.cli`.

A module defines ``register(subparsers, parents)``; it adds its parser with the shared option
sets it uses (``parents=[parents.robot, parents.json]``: see
``CommonOptions`` in ``commands._common``; ``parents=parents`` takes them all) and sets
``func=run`` where ``run(args) -> int``. Heavy imports go inside ``run``.
"""
