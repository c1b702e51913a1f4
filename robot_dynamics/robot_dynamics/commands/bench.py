"""``robot-dynamics bench``: our inverse dynamics paths against Pinocchio's, side by side.

Same URDF, same states, interleaved rounds, best of each kept; prints microseconds per call
(single) or per sample (batch) and the ratios against Pinocchio when it is installed.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import InputError
from ._common import CommonOptions, emit, format_table, load_model


def register(sub: Any, parents: CommonOptions) -> None:
    p = sub.add_parser("bench", parents=[parents.robot, parents.json], help="time our rnea paths against Pinocchio's (ratios)")
    p.add_argument("--batch", type=int, default=10_000, help="samples in the batch test (default 10000)")
    p.add_argument("--rounds", type=int, default=5, help="interleaved rounds, best kept (default 5)")
    p.add_argument("--threads", type=int, default=2, help="threads for the batch paths (default 2)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..codegen.benchmark import benchmark, pinocchio_available

    if args.batch < 1 or args.rounds < 1 or args.threads < 1:
        raise InputError("--batch, --rounds and --threads must be positive integers")
    if args.batch > 5_000_000:  # about 1.5 GB of states and results for a 6-joint arm
        raise InputError(f"--batch: at most 5,000,000 states per call, got {args.batch:,}")
    model = load_model(args)
    result = benchmark(
        model,
        batch=args.batch,
        rounds=args.rounds,
        threads=args.threads,
        progress=lambda msg: print(msg, file=sys.stderr, flush=True),
    )

    def text() -> str:
        rows = [
            [r["path"], r["kind"], f"{r['us']:.3f}", f"{r['agreement']:.1e}"] for r in result["rows"]
        ]
        out = [
            f"robot {result['robot']} ({result['nq']} joints), batch of {result['batch']}, "
            f"{result['threads']} threads; operations {result['counts']}",
            format_table(["path", "kind", "us per call/sample", "rel. diff to core rnea"], rows),
        ]
        if result["ratios"]:
            out.append("")
            out += [f"{k}: {v:.2f}" for k, v in result["ratios"].items()]
        elif not pinocchio_available():
            out.append("Pinocchio is not installed (pip install pin): no peer ratios")
        return "\n".join(out)

    emit(args, result, text)
    return 0
