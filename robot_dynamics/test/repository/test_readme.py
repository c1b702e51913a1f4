"""The README and the documentation pages run as written: every Python block executes on its
own, and every ``robot-dynamics`` line of their shell blocks exits 0, except the lines that
name a user's own files or a cluster (listed below, each with the reason). The README stays a
five-minute guide (under 250 lines) whose links reach existing pages and sections, and every
hand-written page of ``docs/`` is in a toctree of the site's front page. The ROS 2 commands
are checked by ``test_ros_doc_examples.py`` and, under a real ROS 2, by ``test_launch_sim.py`` (the
service calls and their answers)."""

from __future__ import annotations

import re
import shlex

import numpy as np
import pytest
from repo_files import repository_file, repository_path

README = repository_path("README.md")  # None: the package without its repository
TEXT = README.read_text(encoding="utf-8") if README is not None and README.is_file() else ""
DOCS = repository_path("docs")
#: the hand-written pages of the documentation site (docs/README.md describes the folder)
PAGES = sorted(p for p in DOCS.glob("*.md") if p.name != "README.md") if DOCS is not None and DOCS.is_dir() else []
README_MAX_LINES = 250


def _blocks(text: str) -> list[tuple[str, str]]:
    return re.findall(r"```(\w*)\n(.*?)```", text, re.S)


def _python(text: str) -> list[str]:
    return [b for lang, b in _blocks(text) if lang == "python"]


def _cli(text: str) -> list[str]:
    return [line.split("#")[0].strip() for lang, b in _blocks(text) if lang == "bash"
            for line in b.splitlines() if line.strip().startswith("robot-dynamics ")]


PYTHON = [(README, code) for code in _python(TEXT)] + [(p, c) for p in PAGES for c in _python(p.read_text(encoding="utf-8"))]
CLI = list(dict.fromkeys(_cli(TEXT) + [line for p in PAGES for line in _cli(p.read_text(encoding="utf-8"))]))

#: lines that cannot run here, and why (everything else must).
NOT_HERE = {
    "study.yaml": "stands for the user's own study file",
    "rosbag2_excitation": "stands for a recording of the user's arm",
    "robot_dynamics_out/identified.urdf": "reads what `identify` on the user's recording wrote",
    "observer-thresholds free.csv": "reads the recording the page's Python block writes in a folder of its own",
}


def _page_id(item: tuple) -> str:
    return getattr(item[0], "name", "README.md")


def test_the_readme_is_there_and_has_code():
    repository_file("README.md")
    assert len(_python(TEXT)) >= 1 and len(_cli(TEXT)) >= 4
    assert len(PYTHON) >= 6 and len(CLI) >= 15, "the pages' examples are gone"


def test_the_readme_is_a_five_minute_guide():
    """Under 250 lines; it names the C compiler, the pip and colcon installs, the main job and
    the test command exactly as .ci/run runs them."""
    repository_file("README.md")
    lines = TEXT.count("\n")
    assert lines < README_MAX_LINES, f"README.md has {lines} lines: move details to docs/ (limit {README_MAX_LINES})"
    ci = repository_file(".ci", "run").read_text(encoding="utf-8")
    test_command = 'python -m pip install "./robot_dynamics[test]" && python -m pytest robot_dynamics/test -q -p no:cacheprovider'
    assert test_command.replace("python -m pip install", "python -m pip install -q") in ci
    assert test_command in TEXT
    assert "robot-dynamics simulate" in ci and "\nrobot-dynamics simulate\n" in TEXT
    for needed in ("pip install ./robot_dynamics", "colcon build", "C compiler", "ros2 launch", "ros2 service call"):
        assert needed in TEXT, f"README: {needed!r} missing"


def _slug(title: str) -> str:
    """The anchor of a Markdown heading, as MyST (myst_heading_anchors) and GitHub make it."""
    title = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return title.replace(" ", "-")


def test_every_link_of_the_readme_reaches_a_file_and_its_section():
    readme = repository_file("README.md")
    links = re.findall(r"\]\(([^)\s]+)\)", TEXT)
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        if "://" in link:
            continue
        target, _, anchor = link.partition("#")
        path = readme.parent / target
        assert path.is_file(), f"README links to a missing file {target}"
        if anchor:
            headings = re.findall(r"^#{1,6} (.+)$", path.read_text(encoding="utf-8"), re.M)
            assert anchor in {_slug(h) for h in headings}, f"README links to a missing section {link}"


def test_every_page_is_in_a_toctree_of_the_front_page():
    """Every hand-written page and reference of docs/ is reachable from index.md's toctrees."""
    index = repository_file("docs", "index.md").read_text(encoding="utf-8")
    listed = {line.strip() for block in re.findall(r"```\{toctree\}\n(.*?)```", index, re.S)
              for line in block.splitlines() if line.strip() and not line.strip().startswith(":")}
    pages = {p.stem for p in PAGES if p.stem != "index"} | {f"reference/{p.stem}" for p in (DOCS / "reference").glob("*.rst")}
    assert pages and not pages - listed, f"pages in no toctree of docs/index.md: {sorted(pages - listed)}"
    assert not {e for e in listed - pages if e != "tutorials/index"}, f"toctree entries without a page: {sorted(listed - pages)}"
    for page in pages - {"index"}:
        assert f"]({page}." in index, f"docs/index.md: no row of 'Find what you need' links {page}"


@pytest.mark.parametrize("item", PYTHON, ids=[f"{_page_id(item)}-python-block-{i}" for i, item in enumerate(PYTHON)])
def test_every_python_block_runs_on_its_own(item, tmp_path, monkeypatch):
    path, code = item
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "readme"}
    exec(compile(code, str(path), "exec"), namespace)  # noqa: S102 - the page's own code
    arrays = [v for v in namespace.values() if isinstance(v, np.ndarray) and v.dtype.kind == "f"]
    assert arrays and all(np.all(np.isfinite(a)) for a in arrays)


@pytest.mark.parametrize("line", CLI)
def test_every_command_line_of_the_readme_and_the_pages_runs(line, tmp_path, monkeypatch, capsys):
    from robot_dynamics.cli import main

    reason = next((why for key, why in NOT_HERE.items() if key in line), None)
    if reason is not None:
        # not run here, but it must still parse: its options exist
        from robot_dynamics.cli import build_parser

        build_parser().parse_args(shlex.split(line)[1:])
        return
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(line)[1:]) == 0, capsys.readouterr().err


@pytest.mark.parametrize("where", [("README.md",), ("docs", "motion.md")], ids=lambda w: w[-1])
def test_the_main_job_prints_the_documented_numbers(where, tmp_path, monkeypatch, capsys):
    """`robot-dynamics simulate` prints the table of the README and of the control page digit
    for digit (the wall time aside)."""
    from robot_dynamics.cli import main

    text = repository_file(*where).read_text(encoding="utf-8")
    block = text[text.index("$ robot-dynamics simulate\n"):]
    block = block[: block.index("```")]
    rows = {line.split()[0]: [float(x) for x in line.split()[1:]] for line in block.splitlines()
            if re.match(r"joint\d\s", line)}
    assert len(rows) >= 2
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--no-plot", "--no-bag"]) == 0
    out = capsys.readouterr().out
    for line in out.splitlines():
        name = line.split()[0] if line.strip() else ""
        if name in rows:
            np.testing.assert_allclose([float(x) for x in line.split()[1:]], rows[name], rtol=1e-5, err_msg=name)
            rows.pop(name)
    assert not rows, f"{'/'.join(where)}: rows not printed: {list(rows)}"
