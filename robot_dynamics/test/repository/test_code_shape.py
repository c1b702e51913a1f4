"""The repository's code stays readable in one sitting: no file over 800 lines, no Python
function over 80.

Every file of the repository counts (the files git tracks and the new ones it does not ignore;
without git, every file outside build outputs and hidden folders) except data: recorded results
and images (``.json``, ``.npz``, ``.png``, ``.svg``) and the test data folders. A function's
length runs from its ``def`` line to its last line (decorators aside), nested functions included
in their parent's.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path

from repo_files import repository_root

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 80

#: Data, not code: their length says nothing of how they read.
DATA_SUFFIXES = (".json", ".npz", ".png", ".svg")
#: Folders that are never the repository's own files.
SKIP_FOLDERS = {"build", "install", "log", "__pycache__", "node_modules"}


def _walk(root: Path) -> list[Path]:
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIP_FOLDERS and not d.endswith(".egg-info")]
        out += [Path(folder, n) for n in names]
    return out


def repository_files(root: Path) -> list[Path]:
    """The repository's files: git's (tracked, and untracked but not ignored), else a walk."""
    if (root / ".git").exists() and shutil.which("git"):
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                capture_output=True, check=False)
        if listed.returncode == 0:
            return [root / name for name in sorted(set(listed.stdout.decode().split("\0"))) if name and (root / name).is_file()]
    return _walk(root)


def is_data(path: Path) -> bool:
    return path.suffix in DATA_SUFFIXES or "data" in path.parts or "results" in path.parts


def long_files(files: list[Path], limit: int = MAX_FILE_LINES) -> dict[Path, int]:
    """The text files over ``limit`` lines, with their count (data and binary files left out)."""
    out = {}
    for path in files:
        if is_data(path):
            continue
        try:
            lines = path.read_text(encoding="utf-8").count("\n")
        except (UnicodeDecodeError, OSError):
            continue
        if lines > limit:
            out[path] = lines
    return out


def long_functions(path: Path, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, int]]:
    """The functions of the Python file ``path`` over ``limit`` lines: (qualified name, lines)."""
    out = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            name = prefix
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}."
                if not isinstance(child, ast.ClassDef):
                    length = child.end_lineno - child.lineno + 1
                    if length > limit:
                        out.append((name[:-1], length))
            visit(child, name)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), "")
    return out


def test_the_limits_count_what_they_say(tmp_path: Path) -> None:
    def body(indent: int, n: int = 79) -> str:
        return "".join(f"{' ' * indent}x{k} = {k}\n" for k in range(n))

    (tmp_path / "m.py").write_text(
        f"def short():\n{body(4)}\n\nclass K:\n    @property\n    def long(self):\n{body(8)}        return 1\n"
        f"        def inner():\n{body(12, 158)}\n")
    assert long_functions(tmp_path / "m.py") == [("K.long", 80 + 1 + 80 + 79), ("K.long.inner", 159)]
    assert long_functions(tmp_path / "m.py", limit=80) == long_functions(tmp_path / "m.py")
    (tmp_path / "a.cpp").write_text("x\n" * 801)
    (tmp_path / "b.cpp").write_text("x\n" * 800)
    (tmp_path / "c.json").write_text("x\n" * 900)
    (tmp_path / "d.bin").write_bytes(b"\xff\n" * 900)
    assert long_files(sorted(tmp_path.iterdir())) == {tmp_path / "a.cpp": 801}


def test_no_file_over_800_lines() -> None:
    root = repository_root()
    files = repository_files(root) if root is not None else _walk(Path(__file__).resolve().parents[2])
    assert any(p.name == "test_fuzz_controllers.cpp" for p in files) or root is None
    long = {str(p): n for p, n in long_files(files).items()}
    assert not long, f"files over {MAX_FILE_LINES} lines (split them by what they do): {long}"


def test_no_python_function_over_80_lines() -> None:
    root = repository_root()
    files = repository_files(root) if root is not None else _walk(Path(__file__).resolve().parents[2])
    python = [p for p in files if p.suffix == ".py" and not is_data(p)]
    assert len(python) > 200 or root is None
    long = {str(p): found for p in python if (found := long_functions(p))}
    assert not long, f"Python functions over {MAX_FUNCTION_LINES} lines (name their parts): {long}"
