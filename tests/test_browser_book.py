"""The static HTML book (``python -m inferqa_utils book``) in a real browser: built from the shipped
executed notebooks (``docs/executed/``) and the repository's pages into a temporary folder, served by
a plain ``http.server`` on 127.0.0.1, and crawled from ``index.html`` in Debian's chromium
(chromedriver, selenium; tests/lab_browser.py).

Every page reached is opened and must load (``document.readyState`` complete, a visible heading —
on a notebook's page its first heading —, the navigation bar, no SEVERE message on the console);
every ``<a href>``, ``<img src>``, stylesheet and script address must be a file of the book (or a
link to the web, never a resource loaded from it), every ``#anchor`` an element of its page, every
image rendered; no page may show an error output (the book marks them ``data-output-type="error"``)
or a traceback; a notebook holding figures must show one. A second test breaks a small book on
purpose (a link to a missing page, a missing anchor and image, an error cell) and checks that the
crawl reports each. Screenshots of the index and a notebook go to ``screenshots/browser-book/``
(git-ignored; beside ``screenshots/browser/``, which the JupyterLab test empties when it starts).

Run with ``make browser-test`` (``pytest -m browser``); ``make test`` runs it too.
"""

from __future__ import annotations

import functools
import shutil
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
from isolated_root import CHECKOUT
from lab_browser import BROWSER_TEST_MARKS, SCREENSHOTS, browser_binaries, chrome
from local_servers import free_port
from nbformat import v4

from inferqa_utils.present.book import build_book, image_outputs, notebook_title

pytestmark = BROWSER_TEST_MARKS

#: the shipped executed notebooks the book is built from
EXECUTED = CHECKOUT / "docs" / "executed"
#: where the screenshots go (git-ignored)
SHOTS = SCREENSHOTS.parent / "browser-book"

#: what a page shows, read in the browser
_READ_PAGE = r"""
const shown = e => !!(e && (e.offsetWidth || e.offsetHeight || e.getClientRects().length));
const text = e => e.innerText.replace(/¶/g, '').trim();
return {
  ready: document.readyState,
  title: document.title,
  headings: [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].filter(shown).map(text),
  nav: document.querySelector('nav.book-nav') ? [...document.querySelectorAll('nav.book-nav a[href]')]
    .map(a => a.href) : null,
  links: [...document.querySelectorAll('a[href]')].map(a => a.href),
  images: [...document.images].map(i => ({src: i.currentSrc || i.src, ok: i.complete && i.naturalWidth > 0,
                                          main: !!i.closest('main')})),
  resources: [...document.querySelectorAll('link[href], script[src], iframe[src], source[src]')]
    .map(e => e.href || e.src),
  ids: [...document.querySelectorAll('[id]')].map(e => e.id)
    .concat([...document.querySelectorAll('a[name]')].map(a => a.name)),
  errors: document.querySelectorAll('[data-output-type="error"], .book-error-output').length,
  tracebacks: [...document.querySelectorAll('.jp-OutputArea-output')]
    .filter(e => /Traceback \(most recent call last\)/.test(e.innerText)).length,
};
"""


class StaticServer:
    """A plain ``http.server`` serving ``folder`` on 127.0.0.1 (a thread of this process)."""

    def __init__(self, folder: Path) -> None:
        class Quiet(SimpleHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(
            ("127.0.0.1", free_port()), functools.partial(Quiet, directory=str(folder))
        )
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> StaticServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


@dataclass
class Crawl:
    """What a crawl of a book saw: each page opened (book path → what it showed) and each problem."""

    pages: dict[str, dict[str, Any]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    external_links: int = 0
    seconds: float = 0.0


def crawl(driver: Any, url: str, out: Path, notebooks: Mapping[str, tuple[str, int]]) -> Crawl:
    """Open every page of the book served at ``url`` (its files in ``out``) from ``index.html``, then
    any page no link reached; ``notebooks`` maps a notebook page's book path to its first heading and
    the number of image outputs of its source notebook."""
    t0 = time.monotonic()
    seen = Crawl()
    origin = urlsplit(url)
    queue: deque[str] = deque(["index.html"])
    queued = {"index.html"}
    anchors: list[tuple[str, str, str]] = []  # (page with the link, target page, fragment)

    def local(address: str, page: str, what: str) -> str | None:
        """The book path of a same-origin address (a problem when its file is missing), else None."""
        parts = urlsplit(address)
        if (parts.scheme, parts.netloc) != (origin.scheme, origin.netloc):
            return None
        path = unquote(parts.path).lstrip("/") or "index.html"
        if not (out / path).is_file():
            seen.problems.append(f"{page}: {what} {address.removeprefix(url).lstrip('/')} -> no such file")
            return None
        return path

    while True:
        if not queue:  # pages no link reached load too
            rest = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html"))
            queue.extend(p for p in rest if p not in queued)
            queued.update(queue)
            if not queue:
                break
        page = queue.popleft()
        driver.get(f"{url}/{page}")
        for _ in range(100):
            info = driver.execute_script(_READ_PAGE)
            if info["ready"] == "complete":
                break
            time.sleep(0.1)
        seen.pages[page] = info
        if info["ready"] != "complete":
            seen.problems.append(f"{page}: did not finish loading ({info['ready']})")
        for entry in driver.get_log("browser"):
            if entry.get("level") == "SEVERE":
                seen.problems.append(f"{page}: console: {entry.get('message', '')[:300]}")
        if not info["title"] or not info["headings"]:
            seen.problems.append(f"{page}: no title or no visible heading")
        home = [a for a in info["nav"] or [] if urlsplit(a).path == "/index.html"]
        if info["nav"] is None or not (home or page == "index.html"):
            seen.problems.append(f"{page}: no navigation bar leading home")
        if info["errors"] or info["tracebacks"]:
            seen.problems.append(
                f"{page}: {info['errors']} error output(s), {info['tracebacks']} traceback(s)"
            )
        for address in info["links"]:
            scheme = urlsplit(address).scheme
            if scheme in ("http", "https", "mailto") and urlsplit(address).netloc != origin.netloc:
                seen.external_links += 1
                continue
            if scheme not in ("http", "https"):
                seen.problems.append(f"{page}: link {address[:120]} (neither the book nor the web)")
                continue
            target = local(address, page, "link")
            if target is None:
                continue
            if urlsplit(address).fragment:
                anchors.append((page, target, urlsplit(address).fragment))
            if target.endswith(".html") and target not in queued:
                queued.add(target)
                queue.append(target)
        for img in info["images"]:
            src = img["src"]
            if not src.startswith("data:") and urlsplit(src).netloc != origin.netloc:
                seen.problems.append(f"{page}: image from the network {src[:120]}")
            elif not src.startswith("data:"):
                local(src, page, "image")
            if not img["ok"]:
                seen.problems.append(f"{page}: image not rendered {src[:120]}")
        for address in info["resources"]:
            if urlsplit(address).scheme not in ("data", "") and urlsplit(address).netloc != origin.netloc:
                seen.problems.append(f"{page}: resource from the network {address[:120]}")
            else:
                local(address, page, "resource")
        if page in notebooks:
            title, n_images = notebooks[page]
            if title not in info["headings"]:
                seen.problems.append(f"{page}: the notebook's first heading {title!r} is not shown")
            if n_images and not any(i["ok"] and i["main"] for i in info["images"]):
                seen.problems.append(f"{page}: its notebook holds {n_images} figure(s); none is shown")
    for page, target, fragment in anchors:
        ids = set(seen.pages.get(target, {}).get("ids", []))
        if fragment not in ids and unquote(fragment) not in ids:
            seen.problems.append(f"{page}: link to {target}#{fragment} -> no such anchor")
    seen.seconds = time.monotonic() - t0
    return seen


def expected_notebooks(folder: Path) -> dict[str, tuple[str, int]]:
    """Book path of each notebook's page → (its first heading, its image outputs)."""
    out = {}
    for path in sorted(folder.glob("*.ipynb")):
        nb = nbformat.read(str(path), as_version=4)
        out[f"notebooks/{path.stem}.html"] = (notebook_title(nb) or path.stem, image_outputs(nb))
    return out


@pytest.fixture
def driver() -> Iterator[Any]:
    browser_binaries()
    d = chrome(1300, 1000)
    try:
        yield d
    finally:
        d.quit()


def test_the_book_of_the_shipped_notebooks_in_a_browser(driver: Any, tmp_path: Path) -> None:
    notebooks = sorted(EXECUTED.glob("*.ipynb")) if EXECUTED.is_dir() else []
    assert notebooks, (
        f"{EXECUTED.relative_to(CHECKOUT)} holds no executed notebook: it is shipped with the "
        "repository (python -m inferqa_utils executed export writes it from a complete run)"
    )
    t0 = time.monotonic()
    summary = build_book(EXECUTED, tmp_path / "book", root=CHECKOUT)
    built = time.monotonic() - t0
    expected = expected_notebooks(EXECUTED)
    with StaticServer(summary.out_dir) as server:
        seen = crawl(driver, server.url, summary.out_dir, expected)
        shutil.rmtree(SHOTS, ignore_errors=True)
        SHOTS.mkdir(parents=True, exist_ok=True)
        driver.get(f"{server.url}/index.html")
        driver.save_screenshot(str(SHOTS / "01_index.png"))
        with_figure = next((p for p, (_t, n) in expected.items() if n), next(iter(expected)))
        driver.get(f"{server.url}/{with_figure}")
        driver.execute_script(
            "const i = document.querySelector('main img'); if (i) i.scrollIntoView({block: 'center'});"
        )
        driver.save_screenshot(str(SHOTS / "02_notebook.png"))
    print(
        f"\n[browser-book] built {summary.pages} pages ({len(summary.notebooks)} notebooks, "
        f"{summary.bytes:,} bytes) in {built:.1f} s; opened {len(seen.pages)} pages in {seen.seconds:.1f} s, "
        f"{seen.external_links} links to the web; screenshots in {SHOTS}"
    )
    assert not seen.problems, f"{len(seen.problems)} problem(s):\n" + "\n".join(seen.problems[:60])
    assert len(seen.pages) == summary.pages
    assert set(expected) <= set(seen.pages)
    assert not summary.errors, f"notebooks holding error outputs: {dict(summary.errors)}"


#: a 1×1 PNG
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def test_the_crawl_finds_what_is_broken(driver: Any, tmp_path: Path) -> None:
    """A small book broken on purpose: the crawl names each fault."""
    root, run = tmp_path / "repo", tmp_path / "run"
    (root / "docs").mkdir(parents=True)
    run.mkdir()
    (root / "README.md").write_text("# Small\n\n[glossary](docs/glossary.md#term)\n", encoding="utf-8")
    (root / "docs" / "glossary.md").write_text("# Glossary\n\n## Term\n", encoding="utf-8")
    figure = v4.new_code_cell("plot()", execution_count=1)
    figure.outputs = [v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})]
    failing = v4.new_code_cell("1/0", execution_count=1)
    failing.outputs = [
        v4.new_output(
            "error",
            ename="ZeroDivisionError",
            evalue="division by zero",
            traceback=["Traceback (most recent call last)", "ZeroDivisionError"],
        )
    ]
    nbformat.write(
        v4.new_notebook(cells=[v4.new_markdown_cell("# 00 · Figure"), figure]), str(run / "00_a.ipynb")
    )
    nbformat.write(
        v4.new_notebook(cells=[v4.new_markdown_cell("# 01 · Fails"), failing]), str(run / "01_b.ipynb")
    )
    summary = build_book(run, tmp_path / "book", root)
    out = summary.out_dir
    readme = out / "README.html"
    readme.write_text(
        readme.read_text(encoding="utf-8").replace(
            "</main>",
            '<a href="nowhere.html">gone</a> <a href="docs/glossary.html#no-anchor">lost</a> '
            '<img src="missing.png" alt="missing"></main>',
        ),
        encoding="utf-8",
    )
    with StaticServer(out) as server:
        seen = crawl(driver, server.url, out, expected_notebooks(run))
    text = "\n".join(seen.problems)
    assert "README.html: link nowhere.html -> no such file" in text, text
    assert "README.html: link to docs/glossary.html#no-anchor -> no such anchor" in text, text
    assert "README.html: image missing.png -> no such file" in text, text
    assert "README.html: image not rendered" in text and "README.html: console:" in text, text
    assert "notebooks/01_b.html: 1 error output(s)" in text, text
    assert not any(p.startswith(("notebooks/00_a.html", "index.html", "docs/")) for p in seen.problems), text
