"""The shape of the compiled sources: no C or C++ function takes more than eight parameters.

The engine's C (``robot_dynamics/src``) and the controllers' C++ (``robot_dynamics_control``'s
``src``, ``include``, ``test`` and ``bench``) are read here, comments, strings and preprocessor
lines left out, and every function definition or declaration is counted: what a function needs
beyond eight values travels in a struct (engine.h's ``rd_input``, ``rd_options``,
``rd_reference``; recursions.h's ``rd_arrays``). ``RD_NAME(x)``, the instanced recursions' name,
counts as ``x``. The parser is checked on known signatures first, so that a regression of it cannot
pass the rule silently.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from repo_files import repository_path

PACKAGE = Path(__file__).resolve().parents[2]
MAX_PARAMETERS = 8
#: words before "(" that are not a function's name
KEYWORDS = frozenset({
    "if", "for", "while", "switch", "return", "sizeof", "else", "case", "throw", "new", "delete", "do", "catch",
    "alignof", "decltype", "static_assert", "defined", "typeof", "__attribute__", "_Pragma", "noexcept", "operator",
})
QUALIFIERS = re.compile(r"\s*((const|override|final|noexcept|volatile|&&|&|->\s*[\w:<>]+)\s*)*")


def _strip(text: str) -> str:
    """The text without comments, string and character literals and preprocessor lines (lines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            end = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif text[i] in "\"'":
            quote, j = text[i], i + 1
            while j < n and text[j] != quote:
                j += 2 if text[j] == "\\" else 1
            out.append(quote * 2)
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    lines, continued = [], False
    for line in "".join(out).split("\n"):
        directive = continued or line.lstrip().startswith("#")
        continued = directive and line.rstrip().endswith("\\")
        lines.append("" if directive else line)
    return re.sub(r"RD_NAME\((\w+)\)", r"\1", "\n".join(lines))


def _parameters(src: str, start: int) -> tuple[int, int]:
    """The parameter count of the list opening at src[start - 1] == "(", and the index past its ")"."""
    depth, angle, commas, k = 1, 0, 0, start
    while k < len(src) and depth:
        ch = src[k]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "<" and depth == 1 and (src[k - 1].isalnum() or src[k - 1] == "_"):
            angle += 1
        elif ch == ">" and depth == 1 and angle:
            angle -= 1
        elif ch == "," and depth == 1 and not angle:
            commas += 1
        k += 1
    inner = src[start:k - 1].strip()
    return (0 if inner in ("", "void") else commas + 1), k


def functions(text: str) -> list[tuple[str, int, int]]:
    """(name, parameters, line) of every function defined or declared in C or C++ source text."""
    src = _strip(text)
    found = []
    for match in re.finditer(r"([A-Za-z_]\w*)\s*\(", src):
        name = match.group(1)
        if name in KEYWORDS:
            continue
        before = src[max(0, match.start() - 200):match.start()].rstrip()
        count, end = _parameters(src, match.end())
        rest = src[end:end + 200]
        after = rest[QUALIFIERS.match(rest).end():][:2]
        previous = re.search(r"(\w+|[*&>])$", before)
        definition = after[:1] == "{" or (after[:1] == ":" and after != "::")
        declaration = after[:1] == ";" and previous is not None
        if not (definition or declaration) or before.endswith(tuple("=,(!?+-/|")):
            continue
        if previous is not None and previous.group(1) in KEYWORDS:
            continue
        found.append((name, count, src.count("\n", 0, match.start()) + 1))
    return found


def _sources() -> list[Path]:
    files = sorted(p for p in (PACKAGE / "src").rglob("*") if p.suffix in (".c", ".h"))
    control = repository_path("robot_dynamics_control")
    if control is not None and control.is_dir():
        files += sorted(p for p in control.rglob("*") if p.suffix in (".c", ".h", ".cpp", ".hpp") and "build" not in p.parts)
    return files


def test_the_parser_counts_known_signatures():
    text = """
    /* int commented(int a, int b, int c, int d, int e, int f, int g, int h, int i); */
    #define RD_WIDE(a, b, c, d, e, f, g, h, i) (a)
    static RD_INLINE void RD_NAME(forward)(const rd_model *m, const double *q, const double *qd, const double *qdd,
                                           const double *g, const RD_NAME(rd_arrays) *ar)
    {
        if (m) { call(a, b, c, d, e, f, g, h, i, j); }
        const int st = rd_rnea(m, &in, NULL, tau, w);
    }
    int rd_crba(const rd_model *m, const double *q, double *H, rd_work *w);
    void none(void);
    JointPoint hermite(int order, double T, double s, const JointPoint & start, const JointPoint & end) noexcept;
    Foo::Foo(std::map<int, int> table, int b) : table_(table), b_(b) {}
    """
    assert functions(text) == [("forward", 6, 4), ("rd_crba", 4, 10), ("none", 0, 11), ("hermite", 5, 12), ("Foo", 2, 13)]


def test_the_engine_sources_are_found():
    names = {name for path in _sources() for name, _, _ in functions(path.read_text(encoding="utf-8"))}
    assert {"rd_rnea", "rd_aba", "rd_rnea_derivatives", "rd_aba_derivatives", "articulated_solve", "place"} <= names


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.name)
def test_no_function_takes_more_than_eight_parameters(path):
    wide = [f"{path.name}:{line}: {name} takes {count}" for name, count, line in functions(path.read_text(encoding="utf-8"))
            if count > MAX_PARAMETERS]
    assert not wide, f"more than {MAX_PARAMETERS} parameters (pass a struct): " + "; ".join(wide)
