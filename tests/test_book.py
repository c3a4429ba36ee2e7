"""The static HTML book (:mod:`inferqa_utils.present.book`, ``python -m inferqa_utils book``) built
from tiny real notebooks (nbformat) and Markdown pages in ``tmp_path``: links rewritten to the book's
pages with their anchors, repository files outside the book shown as text pages or named, no address
on the network, GitHub's heading ids, error outputs reported, and a folder that is not a book never
overwritten. Nothing is written into the checkout; no browser (tests/test_browser_book.py opens a
real one)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
from nbformat import v4

from inferqa_utils.__main__ import main
from inferqa_utils.present import book as bk
from inferqa_utils.present.book import BookRefusedError, build_book, github_slug, render_markdown

#: a 1×1 PNG
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def _notebook(path: Path, cells: list, widgets: dict | None = None) -> Path:
    nb = v4.new_notebook(cells=cells)
    if widgets is not None:
        nb.metadata["widgets"] = widgets
    nbformat.write(nb, str(path))
    return path


def _code(source: str, outputs: list) -> nbformat.NotebookNode:
    cell = v4.new_code_cell(source, execution_count=1)
    cell.outputs = outputs
    return cell


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, Path]:
    """A repository (``repo/``: README, docs, a record, a source file, a figure) and a run folder
    (``run/``: three notebooks, the second with an error output, a manifest) outside it."""
    root = tmp_path / "repo"
    (root / "docs" / "records" / "runs").mkdir(parents=True)
    (root / "docs" / "figures").mkdir()
    (root / "pkg").mkdir()
    (root / "notebooks").mkdir()
    (root / "README.md").write_text(
        "# Tiny compendium\n\nSee the [glossary](docs/glossary.md#quit), [results](docs/results.md) and "
        "[the first notebook](notebooks/00_first.ipynb).\n",
        encoding="utf-8",
    )
    (root / "docs" / "glossary.md").write_text(
        "# Glossary\n\n### QUIT\n\nA dataset. See [check](#check) and [home](../README.md).\n\n"
        "### Check\n\nA command.\n\n### `odd_name` (x.y §3)\n\nText.\n\n## Notes\n\n## Notes\n",
        encoding="utf-8",
    )
    (root / "docs" / "results.md").write_text(
        "# Results\n\n"
        "- [QUIT](glossary.md#quit) and [odd](glossary.md#odd_name-xy-3) and [repeat](glossary.md#notes-1)\n"
        "- [missing anchor](glossary.md#no-such-heading)\n"
        "- [record](records/runs/r.json) and [source](../pkg/mod.py#L2)\n"
        "- [notebook](../notebooks/01_second.ipynb) and [a missing page](missing.md)\n"
        "- [a folder](records/) and [the web](https://example.org/x)\n\n"
        "![the figure](figures/f.png)\n",
        encoding="utf-8",
    )
    (root / "docs" / "records" / "runs" / "r.json").write_text('{"value": "<1>"}\n', encoding="utf-8")
    (root / "docs" / "figures" / "f.png").write_bytes(b"\x89PNG\r\n\x1a\n fake")
    (root / "pkg" / "mod.py").write_text("def f():\n    return 1 < 2\n", encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    _notebook(
        run / "00_first.ipynb",
        [
            v4.new_markdown_cell(
                "# 00 · First notebook\n\nTerms: [QUIT](../docs/glossary.md#quit), "
                "[next](01_second.ipynb), [Check](../docs/glossary.md#check)."
            ),
            _code(
                "print(1)",
                [
                    v4.new_output("stream", name="stdout", text="1\n"),
                    v4.new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
                ],
            ),
            v4.new_markdown_cell("## A section\n\n[up](#a-section)"),
        ],
    )
    _notebook(
        run / "01_second.ipynb",
        [
            v4.new_markdown_cell("# 01 · Second"),
            _code(
                "1/0",
                [
                    v4.new_output(
                        "error",
                        ename="ZeroDivisionError",
                        evalue="division by zero",
                        traceback=["Traceback (most recent call last)", "ZeroDivisionError"],
                    )
                ],
            ),
        ],
    )
    state = {
        "state": {
            "box": {"model_name": "HBoxModel", "state": {"children": ["IPY_MODEL_lbl", "IPY_MODEL_bar"]}},
            "lbl": {"model_name": "HTMLModel", "state": {"value": "encode: 100%"}},
            "bar": {"model_name": "FloatProgressModel", "state": {"value": 4.0, "min": 0.0, "max": 4.0}},
        }
    }
    _notebook(
        run / "02_third.ipynb",
        [
            v4.new_markdown_cell("# 02 · Third"),
            _code(
                "for _ in tqdm(x): pass",
                [
                    v4.new_output(
                        "display_data",
                        data={
                            "application/vnd.jupyter.widget-view+json": {
                                "model_id": "box",
                                "version_major": 2,
                            },
                            "text/plain": "encode:   0%|          | 0/4",
                        },
                    )
                ],
            ),
        ],
        widgets={"application/vnd.jupyter.widget-state+json": state},
    )
    (run / "manifest.json").write_text(
        json.dumps(
            {
                "run_id": "20261129-121454-default",
                "status": "ok",
                "outcome": "complete",
                "parameters": {"profile": "default"},
                "timings_s": {"00_first": 1.5, "total": 9.0},
                "git": {"commit": "0123456789abcdef", "dirty": False},
            }
        ),
        encoding="utf-8",
    )
    return root, run


class _Refs(HTMLParser):
    """Every id, link and resource address of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.refs: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        self.ids.update(v for k, v in attrs if k == "id" or (tag == "a" and k == "name"))
        for key in ("href", "src", "data"):
            if a.get(key) is not None:
                self.refs.append((tag, a[key]))


def _refs(path: Path) -> _Refs:
    p = _Refs()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def broken_links(out: Path) -> list[str]:
    """Each local link or resource of the book whose file or ``#anchor`` does not exist."""
    pages = {p: _refs(p) for p in out.rglob("*.html")}
    broken = []
    for page, parsed in pages.items():
        for _tag, ref in parsed.refs:
            if re.match(r"^[a-z][a-z0-9+.-]*:", ref):
                continue
            parts = urlsplit(ref)
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.is_file():
                broken.append(f"{page.relative_to(out)}: {ref}")
            elif parts.fragment and target.suffix == ".html":
                ids = pages[target].ids if target in pages else set()
                if parts.fragment not in ids and unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(out)}: {ref} (no such anchor)")
    return broken


def test_github_slugs_and_heading_ids():
    assert github_slug("Reader (paper 000 §5.4, A.4)") == "reader-paper-000-54-a4"
    assert github_slug("Dataset release (data/embedded/release)") == "dataset-release-dataembeddedrelease"
    html = render_markdown("# Top\n## `code_name` and *more*\n## Notes\n## Notes\n```\n# not one\n```\n")
    assert re.findall(r'<h\d id="([^"]+)"', html) == ["top", "code_name-and-more", "notes", "notes-1"]
    assert "<h1" not in render_markdown("# Top\n", demote=1)


def test_the_book_links_pages_notebooks_anchors_and_files(site: tuple[Path, Path], tmp_path: Path):
    root, run = site
    out = tmp_path / "book"
    s = build_book(run, out, root)
    assert s.notebooks == ("00_first.ipynb", "01_second.ipynb", "02_third.ipynb")
    assert (s.markdown_pages, s.text_pages, s.files) == (3, 2, 1)
    assert s.pages == 1 + 3 + 3 + 2 == len(list(out.rglob("*.html")))
    assert s.bytes == sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    assert (out / bk.MARKER).is_file() and s.index == out / "index.html"

    results = (out / "docs" / "results.html").read_text(encoding="utf-8")
    # a page, its anchor kept (GitHub's id of the heading)
    assert 'href="glossary.html#quit"' in results and 'href="glossary.html#odd_name-xy-3"' in results
    assert 'href="glossary.html#notes-1"' in results
    # an anchor the target does not have: the link points at the page, and the summary says so
    assert 'href="glossary.html">missing anchor' in results
    assert s.anchors_dropped == ("docs/results.html: glossary.md#no-such-heading",)
    # a notebook of notebooks/ → the executed notebook's page; repository files → plain-text pages
    assert 'href="../notebooks/01_second.html"' in results
    assert 'href="records/runs/r.json.html"' in results and 'href="../pkg/mod.py.html#L3"' not in results
    assert 'href="../pkg/mod.py.html#L2"' in results  # a line of a source file: its id
    source = (out / "pkg" / "mod.py.html").read_text(encoding="utf-8")
    assert '<span id="L2">    return 1 &lt; 2</span>' in source
    # a missing page and a folder without a README: plain text showing the path, never a link
    assert (
        '<span class="book-unlinked" title="missing.md">a missing page</span> '
        '<code class="book-path">missing.md</code>'
    ) in results
    assert sorted(s.unlinked) == ["docs/results.html: missing.md", "docs/results.html: records/"]
    assert 'href="https://example.org/x"' in results  # a link to the web stays a link
    assert '<img src="figures/f.png" alt="the figure"' in results and (out / "docs/figures/f.png").is_file()

    readme = (out / "README.html").read_text(encoding="utf-8")
    assert 'href="docs/glossary.html#quit"' in readme and 'href="notebooks/00_first.html"' in readme
    glossary = (out / "docs" / "glossary.html").read_text(encoding="utf-8")
    assert 'id="quit"' in glossary and 'href="#check"' in glossary and 'href="../README.html"' in glossary

    first = (out / "notebooks" / "00_first.html").read_text(encoding="utf-8")
    assert 'href="../docs/glossary.html#quit"' in first and 'href="01_second.html"' in first
    assert 'href="#a-section"' in first and 'id="a-section"' in first  # GitHub's id added to the heading
    assert f'src="data:image/png;base64,{PNG}' in first
    assert "<title>00 · First notebook · Tiny compendium</title>" in first
    nav = re.search(r'<nav class="book-nav">(.*?)</nav>', first, re.S).group(1)
    assert 'href="../index.html"' in nav and 'href="01_second.html"' in nav and "00_first" in nav
    assert broken_links(out) == []


def test_no_address_on_the_network_and_no_script(site: tuple[Path, Path], tmp_path: Path):
    root, run = site
    out = tmp_path / "book"
    build_book(run, out, root)
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for tag, ref in _refs(page).refs:
            assert tag == "a" or not re.match(r"^(https?:)?//", ref), (page.name, tag, ref)
        assert "<script" not in text, page.name
    css = (out / "notebook.css").read_text(encoding="utf-8") + (out / "book.css").read_text(encoding="utf-8")
    assert not re.search(r"url\(\s*['\"]?(https?:)?//|@import", css)
    third = (out / "notebooks" / "02_third.html").read_text(encoding="utf-8")
    assert re.search(r"<progress [^>]*value=\"100.0\"[^>]*>100%</progress>", third)  # drawn from its state
    assert "encode: 100%" in third and "widget-state" not in third and "widget-view" not in third


def test_error_outputs_are_marked_and_reported(site: tuple[Path, Path], tmp_path: Path, capsys):
    root, run = site
    s = build_book(run, tmp_path / "book", root)
    assert dict(s.errors) == {"01_second.ipynb": 1}
    assert "[book] warning: 01_second.ipynb holds 1 error output" in s.lines()
    second = (tmp_path / "book" / "notebooks" / "01_second.html").read_text(encoding="utf-8")
    assert second.count('data-output-type="error"') == 1 and "ZeroDivisionError" in second
    first = (tmp_path / "book" / "notebooks" / "00_first.html").read_text(encoding="utf-8")
    assert 'data-output-type="error"' not in first
    index = (tmp_path / "book" / "index.html").read_text(encoding="utf-8")
    assert "1 error output" in index and "20261129-121454-default" in index and "0123456789ab" in index


def test_the_same_inputs_give_the_same_bytes(site: tuple[Path, Path], tmp_path: Path):
    root, run = site
    build_book(run, tmp_path / "a", root)
    build_book(run, tmp_path / "b", root)
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)


def test_a_folder_that_is_not_a_book_is_never_overwritten(site: tuple[Path, Path], tmp_path: Path):
    root, run = site
    users = tmp_path / "mine"
    users.mkdir()
    (users / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(BookRefusedError, match="is not a book"):
        build_book(run, users, root)
    assert [p.name for p in users.iterdir()] == ["notes.txt"]
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    with pytest.raises(BookRefusedError):
        build_book(run, afile, root)
    assert afile.read_text(encoding="utf-8") == "x"
    # an empty folder, and a book built before, are replaced whole
    (tmp_path / "empty").mkdir()
    build_book(run, tmp_path / "empty", root)
    (tmp_path / "empty" / "notebooks" / "stale.html").write_text("old", encoding="utf-8")
    build_book(run, tmp_path / "empty", root)
    assert not (tmp_path / "empty" / "notebooks" / "stale.html").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".empty.")]  # no temporary folder left


def test_a_failed_build_leaves_the_old_book(site: tuple[Path, Path], tmp_path: Path):
    root, run = site
    out = tmp_path / "book"
    build_book(run, out, root)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    (run / "03_broken.ipynb").write_text("{not json", encoding="utf-8")
    with pytest.raises(Exception, match=r"(?i)json|notebook"):
        build_book(run, out, root)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_a_folder_without_notebooks_is_refused(tmp_path: Path):
    from inferqa_utils.core.errors import MissingInputError

    with pytest.raises(MissingInputError, match="no notebooks"):
        build_book(tmp_path, tmp_path / "book", tmp_path)


def test_the_notebooks_folders_readme_is_on_the_index(site: tuple[Path, Path], tmp_path: Path):
    """Shipped executed notebooks live inside the repository (``docs/executed``) with a README and
    links relative to that place."""
    root, run = site
    shipped = root / "docs" / "executed"
    shipped.mkdir()
    for nb in run.glob("*.ipynb"):
        (shipped / nb.name).write_bytes(nb.read_bytes())
    (shipped / "README.md").write_text(
        "# Executed notebooks\n\n| notebook |\n|---|\n| [00](00_first.ipynb) |\n\n"
        "See [results](../results.md#results) and [the sources](../../notebooks).\n",
        encoding="utf-8",
    )
    out = tmp_path / "book"
    s = build_book(shipped, out, root)
    assert s.notebooks == ("00_first.ipynb", "01_second.ipynb", "02_third.ipynb")
    index = (out / "index.html").read_text(encoding="utf-8")
    assert '<h2 id="executed-notebooks">Executed notebooks</h2>' in index  # demoted under the index's h1
    assert 'href="notebooks/00_first.html"' in index and 'href="docs/results.html#results"' in index
    assert 'href="index.html">the sources</a>' in index  # the notebooks' folder: the index lists them
    about = (out / "notebooks" / "README.html").read_text(encoding="utf-8")
    assert 'href="00_first.html"' in about and 'href="../docs/results.html#results"' in about
    # the README's links from docs/ to notebooks/ point at the executed pages
    assert 'href="notebooks/00_first.html"' in (out / "README.html").read_text(encoding="utf-8")
    assert broken_links(out) == []
    # a copy of the shipped folder outside the repository finds the same pages
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in shipped.iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    s = build_book(copy, tmp_path / "book2", root)
    about = (tmp_path / "book2" / "notebooks" / "README.html").read_text(encoding="utf-8")
    assert 'href="../docs/results.html#results"' in about
    assert all(u.startswith("docs/results.html: ") for u in s.unlinked)  # only results.md's own faults
    assert broken_links(tmp_path / "book2") == []


def test_the_command_line(site: tuple[Path, Path], tmp_path: Path, capsys, monkeypatch):
    _root, run = site
    out = tmp_path / "book"
    assert main(["book", "--notebooks", str(run), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"[book] notebooks from {run}" in printed and f"[book] open {out / 'index.html'}" in printed
    assert re.search(r"\[book\] .*: \d+ pages \(3 notebooks, .*[\d,]+ bytes", printed)
    assert "[book] warning: 01_second.ipynb holds 1 error output" in printed
    # without --notebooks: the profile's newest complete run
    from inferqa_utils.record import run_dirs

    monkeypatch.setattr(
        run_dirs,
        "run_manifests",
        lambda profile, executions=None: [
            (tmp_path / "later" / "manifest.json", {"outcome": "failed"}),
            (run / "manifest.json", {"outcome": "complete"}),
        ],
    )
    assert main(["book", "--out", str(out)]) == 0
    assert f"[book] notebooks from {run}" in capsys.readouterr().out
    users = tmp_path / "mine"
    users.mkdir()
    (users / "x").write_text("x", encoding="utf-8")
    assert main(["book", "--notebooks", str(run), "--out", str(users)]) == 2
    assert "is not a book" in capsys.readouterr().err
    assert main(["book", "--run", "no-such-run", "--out", str(out)]) == 2
