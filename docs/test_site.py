"""The built site in a real browser (Debian's chromium, driven by Selenium's chromedriver).

    bash docs/build.sh && python -m pytest docs/test_site.py -q

Serves ``docs/_build/html`` on a local port (the search loads its index by URL, which a
``file://`` page may not) and checks, page by page: it loads without a console error, every
image has rendered (``naturalWidth > 0``), every link into the site reaches an existing page
and, where it names one, an existing anchor; the search finds ``rnea`` and
``InverseDynamics``. Also runs every Python block of the hand-written pages in one namespace
per page, in order (the package's ``test_readme.py`` runs each block on its own). Skips only
when the site is not built (CI builds it first); a missing browser is a failure, since CI
installs it.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import socketserver
import threading
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import pytest

HERE = Path(__file__).resolve().parent
SITE = HERE / "_build" / "html"
PAGES = sorted(p.relative_to(SITE).as_posix() for p in SITE.rglob("*.html") if "_sources" not in p.parts) if SITE.is_dir() else []

pytestmark = pytest.mark.skipif(not (SITE / "index.html").is_file(), reason="the site is not built: bash docs/build.sh")


def _browser_paths() -> tuple[str, str]:
    chrome = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    driver = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver")
    if not chrome or not driver:
        pytest.fail("Debian's chromium and chromium-driver are needed: apt-get install chromium chromium-driver")
    return chrome, driver


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # the test reports what matters
        pass


@pytest.fixture(scope="module")
def server():
    handler = functools.partial(_Quiet, directory=str(SITE))
    with socketserver.TCPServer(("127.0.0.1", 0), handler) as httpd:
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
        httpd.shutdown()
        thread.join(timeout=5)


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chrome, driver = _browser_paths()
    options = webdriver.ChromeOptions()
    options.binary_location = chrome
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(driver), options=options)
    drv.set_page_load_timeout(60)
    yield drv
    drv.quit()


def _load(browser, url: str) -> list[dict]:
    """Open ``url``, wait until the page and its images are complete; the console's entries."""
    browser.get_log("browser")  # drop what earlier pages left
    browser.get(url)
    browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "const imgs = Array.from(document.images);"
        "Promise.all(imgs.map(i => i.complete ? 0 : new Promise(r => { i.onload = r; i.onerror = r; })))"
        ".then(() => setTimeout(done, 200));"
    )
    return browser.get_log("browser")


def test_the_site_has_its_pages():
    for page in ("index.html", "getting_started.html", "library.html", "conventions.html", "drive_trains.html",
                 "motion.html", "studies.html", "identification.html", "closed_chains.html", "engine.html",
                 "ros2.html", "performance.html", "checks.html", "sources.html", "development.html",
                 "reference/api.html", "reference/cli.html", "reference/ros.html", "tutorials/index.html"):
        assert page in PAGES
    assert sum(p.startswith("tutorials/t") for p in PAGES) >= 9
    assert sum(p.startswith("reference/api/") for p in PAGES) >= 15


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_renders_its_images_and_links_resolve(browser, server, page):
    url = urljoin(server, page)
    logs = _load(browser, url)
    errors = [entry["message"] for entry in logs if entry["level"] == "SEVERE"]
    assert not errors, f"{page}: console errors {errors}"
    assert browser.execute_script("return document.readyState") == "complete"
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.currentSrc || i.src, i.complete, i.naturalWidth]);")
    broken = [src for src, complete, width in images if not (complete and width > 0)]
    assert not broken, f"{page}: images that did not render {broken}"
    links = browser.execute_script("return Array.from(document.querySelectorAll('a[href]')).map(a => a.href);")
    for href in links:
        target, fragment = urldefrag(href)
        if not target.startswith(server):
            continue  # outside the site
        path = urlparse(target).path.lstrip("/") or "index.html"
        if path.endswith("/"):
            path += "index.html"
        file = SITE / path
        assert file.is_file(), f"{page}: link to a missing page {href}"
        if fragment and file.suffix == ".html":
            html = _html(file)
            assert f'id="{fragment}"' in html, f"{page}: link to a missing anchor {href}"


@functools.lru_cache(maxsize=None)
def _html(path: Path) -> str:
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("word, expected", [("rnea", "robot_dynamics.rnea"), ("InverseDynamics", "InverseDynamics")])
def test_search_finds(browser, server, word, expected):
    logs = _load(browser, urljoin(server, f"search.html?q={word}"))
    assert not [e for e in logs if e["level"] == "SEVERE"]
    from selenium.webdriver.support.ui import WebDriverWait

    def results(drv):
        items = drv.execute_script("return Array.from(document.querySelectorAll('#search-results li')).map(li => li.innerText);")
        return items if items else False

    found = WebDriverWait(browser, 30).until(results)
    assert any(expected in item for item in found), f"search for {word!r}: {found[:10]}"


def test_screenshots_of_the_front_page_and_a_tutorial(browser, server, tmp_path):
    """A person's view: the front page and the animation tutorial render with content."""
    for page in ("index.html", "tutorials/t09_animation.html"):
        _load(browser, urljoin(server, page))
        shot = tmp_path / (page.replace("/", "_") + ".png")
        assert browser.save_screenshot(str(shot))
        assert shot.stat().st_size > 20_000  # a blank page is a few kB
    gifs = browser.execute_script(
        "return Array.from(document.images).filter(i => i.src.endsWith('.gif')).map(i => i.naturalWidth);")
    assert gifs and all(w > 100 for w in gifs)  # the animation, as an animated GIF


MARKDOWN = sorted(HERE.glob("*.md"))


@pytest.mark.parametrize("path", [p for p in MARKDOWN if "```python" in p.read_text(encoding="utf-8")],
                         ids=lambda p: p.name)
def test_every_python_block_of_the_pages_runs(path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = path.read_text(encoding="utf-8")
    namespace: dict[str, object] = {"__name__": "docs"}
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        exec(compile(block, str(path), "exec"), namespace)  # noqa: S102 - the page's own code


def test_the_ros_reference_lists_every_parameter_service_and_field():
    """The generated ROS page against its sources: every parameter of every node's table, every
    service a node creates, every field of every .srv file, each in its own section."""
    import html as html_lib

    from robot_dynamics.ros.params import NODE_PARAMETERS

    page = _html(SITE / "reference" / "ros.html")

    def section(anchor: str) -> str:
        start = page.index(f'id="{anchor}"')
        ends = [page.find(f'id="{a}', start + 1) for a in ("ros-node-", "srv-", "ros-services")]
        end = min([e for e in ends if e > 0] or [len(page)])
        text = html_lib.unescape(re.sub(r"<[^>]+>", " ", page[start:end]))
        return " " + " ".join(text.split()) + " "

    for node, specs in NODE_PARAMETERS.items():
        text = section(f"ros-node-{node}")
        for spec in specs:
            assert f" {spec.name} {spec.type} " in text, f"{node}: parameter {spec.name} missing"
    services = section("ros-node-dynamics") + section("ros-node-trajectory")
    for service in ("/dynamics/inverse_dynamics", "/dynamics/forward_dynamics", "/dynamics/mass_matrix",
                    "/dynamics/trajectory_effort", "/dynamics/linearize", "/trajectory/plan",
                    "/trajectory/time_optimal"):
        assert f" {service} " in services
    for srv in sorted((HERE.parent / "robot_dynamics_interfaces" / "srv").glob("*.srv")):
        text = section(f"srv-{srv.stem.lower()}")
        for line in srv.read_text(encoding="utf-8").splitlines():
            line = line.split("#")[0].strip()
            if line and line != "---":
                field_type, name = line.split()[:2]
                assert f" {name} {field_type} " in text, f"{srv.name}: field {name} missing"
