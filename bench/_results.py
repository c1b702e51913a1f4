"""The JSON file a bench writes with ``--results``: what ran, when, on what, and its numbers."""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from robot_dynamics.commands._common import write_atomic


def write_results(path: str, script: str, argv: list[str] | None, **fields: Any) -> None:
    """Write ``{command, date, machine, **fields}`` to ``path`` atomically (its folder made).

    ``argv`` is the bench's arguments (None: this process's command line).
    """
    args = sys.argv[1:] if argv is None else argv
    data = {"command": " ".join(["python", f"bench/{script}", *args]),
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
            **fields}
    Path(path).resolve().parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=1) + "\n")


def print_table(title: str, columns: list[str], rows: list[list[str]]) -> dict:
    """Prints a table (its title, right-aligned columns and rows of text) and returns it as the
    JSON's ``{"title", "columns", "rows"}``."""
    widths = [max(len(c), *(len(r[k]) for r in rows)) if rows else len(c) for k, c in enumerate(columns)]
    print(f"\n{title}")
    print("  ".join(c.rjust(w) for c, w in zip(columns, widths)))
    print("-" * (sum(widths) + 2 * (len(widths) - 1)))
    for r in rows:
        print("  ".join(v.rjust(w) for v, w in zip(r, widths)))
    return {"title": title, "columns": columns, "rows": rows}
