"""``robot-dynamics codegen``: generate the customised inverse dynamic model of a robot.

Prints the operation counts (standard and base parameters, Khalil 7.5), the number of base
parameters, the generation time and where the cache is; ``--khalil`` adds the comparison
with Khalil's counts (general 6R, RX-90) and ``--expressions`` the regrouped base
parameters.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ._common import CommonOptions, emit, format_table, load_model


def register(sub: Any, parents: CommonOptions) -> None:
    p = sub.add_parser(
        "codegen",
        parents=[parents.robot, parents.json],
        help="generate the customised Newton-Euler model (counts, generation time, cache)",
    )
    p.add_argument("--no-compile", action="store_true", help="numpy code only (skip numba)")
    p.add_argument("--no-cache", action="store_true", help="generate again (and refresh the cache)")
    p.add_argument("--khalil", action="store_true", help="also compare counts with Khalil's (6R, RX-90)")
    p.add_argument("--expressions", action="store_true", help="print the regrouped base parameters (QR)")
    p.add_argument("--rules", action="store_true", help="print Khalil's symbolic grouping rules where they apply")
    p.set_defaults(func=run)


def _progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from ..codegen import cache_dir, generate, khalil_comparison, numba_available

    model = load_model(args)
    compiled = False if args.no_compile else numba_available()
    gm = generate(model, compiled=compiled, read_cache=not args.no_cache, progress=_progress)
    data: dict[str, Any] = {
        "robot": model.name,
        "nq": model.nq,
        "base_parameters": gm.n_base,
        "multiplications": gm.counts.multiplications,
        "additions": gm.counts.additions,
        "sin_cos_sign": gm.counts.functions,
        "standard_parameters_counts": None
        if gm.counts_standard is None
        else [gm.counts_standard.multiplications, gm.counts_standard.additions],
        "compiled": gm.compiled,
        "from_cache": gm.from_cache,
        "generation_seconds": gm.generation_seconds,
        "load_seconds": gm.load_seconds,
        "cache_dir": str(cache_dir()),
        "module": str(gm.path),
    }
    lines = [
        f"robot {model.name} ({model.nq} joints): customised Newton-Euler, Khalil 7.5",
        f"  base parameters:     {gm.n_base}",
        f"  operations (base):   {gm.counts}",
    ]
    if gm.counts_standard is not None:
        lines.append(f"  operations (standard parameters): {gm.counts_standard}")
    if gm.from_cache:
        lines.append(f"  loaded from the cache in {gm.load_seconds:.2f} s")
    else:
        lines.append(f"  generated in {gm.generation_seconds:.2f} s" + (" (numba compile included)" if gm.compiled else ""))
    lines.append(f"  paths: numpy batch{', compiled single + threaded batch (numba)' if gm.compiled else ''}")
    lines.append(f"  cache: {gm.path.parent}")
    if args.expressions:
        from ..dynamics.base_parameters import base_parameters

        exprs = base_parameters(model).expressions()
        data["expressions"] = exprs
        lines += ["", "base parameters (regrouped):"] + [f"  {e}" for e in exprs]
    if args.rules:
        from ..dynamics.base_parameters import regrouped_name, grouping_rules

        exprs_r, grouped = grouping_rules(model)
        data["rules"] = {regrouped_name(k): str(v) for k, v in exprs_r.items()}
        data["grouped"] = grouped
        lines += ["", "Khalil's grouping rules (regrouped standard parameters):"]
        lines += [f"  {k} = {v}" for k, v in data["rules"].items()]
        lines.append(f"  grouped (eliminated): {', '.join(grouped) or 'none'}")
    if args.khalil:
        rows = khalil_comparison()
        data["khalil"] = rows
        table = format_table(
            ["case", "mult", "Khalil mult", "add", "Khalil add"],
            [[r["case"], r["multiplications"], r["khalil_multiplications"], r["additions"], r["khalil_additions"]] for r in rows],
        )
        lines += [
            "",
            "operation counts without friction, beside Khalil's Tables 7.5 and 7.6"
            " (direct dynamics: the notes of 7.6.2):",
            table,
        ]
    emit(args, data, "\n".join(lines))
    return 0
