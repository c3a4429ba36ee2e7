"""A static HTML book of a run: its executed notebooks, the results page, the glossary and the other
pages of ``docs/``, readable offline (``file://`` or any plain static server; no CDN, no network).

:func:`build_book` turns a folder of executed notebooks (a run's folder ``build/executions/<run
id>/``, or the shipped copies in ``docs/executed/``) and the Markdown pages of the repository
(``README.md``, ``docs/*.md``, and the folder's own ``README.md``) into a site:

- ``index.html``: the title, the run's facts (from the folder's ``manifest.json``, and its
  ``README.md`` when it has one), the notebooks with their first heading, and the pages;
- ``notebooks/<name>.html``: one page per notebook, rendered by nbconvert's ``lab`` template
  without its scripts (no require.js, MathJax, mermaid or widget manager from a CDN); figures are
  ``data:`` URIs; the progress bars of ipywidgets are drawn from their saved state; an error
  output keeps nbconvert's markup and is marked ``data-output-type="error"``;
- ``README.html``, ``docs/<page>.html``: the Markdown pages (markdown-it-py), their headings given
  the ids GitHub gives them (:func:`github_slug`), so ``glossary.md#quit`` finds its heading;
- ``book.css`` and ``notebook.css`` (nbconvert's JupyterLab styles), shared by the pages, and a
  navigation bar on every page (home, previous and next notebook, results, glossary).

Every local link is rewritten (:class:`_Book`): a link to a page or a notebook of the book points at
its ``.html`` (a link to ``notebooks/<name>.ipynb`` at the executed notebook's page), its
``#anchor`` kept when the target page has that id, dropped otherwise; a repository file outside the
book becomes a page of its own — an image is copied, a text file (source code, a JSON record) is
shown as plain text, a Markdown file rendered, a folder with a ``README.md`` points at it; any
other target (missing, binary, outside the repository) is turned into plain text showing its path.
No link of the book is broken; :class:`BookSummary` lists the links turned into text and the
notebooks holding error outputs.

The book is written into a fresh folder beside ``out_dir`` and swapped in whole
(:func:`inferqa_utils.core.atomic.staged_dir`); a folder that is not a book this function built (no
marker file :data:`MARKER`) is never replaced (:class:`BookRefusedError`). The output is
deterministic: the same inputs give the same bytes.

    >>> github_slug("Reader (paper 000 §5.4, A.4)")
    'reader-paper-000-54-a4'
    >>> github_slug("`optimal_far_above_pipeline`")
    'optimal_far_above_pipeline'
"""

from __future__ import annotations

import html
import json
import os
import posixpath
import re
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from ..core.atomic import staged_dir
from ..core.errors import MissingInputError

#: the file that marks a folder as a book :func:`build_book` wrote (and may therefore replace)
MARKER = ".inferqa-book"
#: what the marker holds
MARKER_CONTENT = {"generator": "inferqa_utils.present.book", "format": 1}
#: the book's own files, never taken by a page of the repository
RESERVED = frozenset({"index.html", "book.css", "notebook.css", MARKER})
#: files shown as plain-text pages when a page links to them
TEXT_SUFFIXES = frozenset(
    {
        ".py",
        ".json",
        ".jsonl",
        ".yaml",
        ".yml",
        ".txt",
        ".cfg",
        ".cff",
        ".toml",
        ".ini",
        ".csv",
        ".tsv",
        ".sh",
        ".j2",
        ".in",
        ".rst",
        ".tex",
        ".bib",
        ".trec",
        ".qrels",
    }
)
#: file names without a suffix shown as plain text
TEXT_NAMES = frozenset({"LICENSE", "Makefile", "Dockerfile", "NOTICE", "AUTHORS"})
#: images copied into the book when a page shows or links them
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"})
#: the largest file copied or shown as text (bytes); a larger one is named, not linked
MAX_FILE_BYTES = 2_000_000
#: the book's default title (the README's first heading replaces it)
DEFAULT_TITLE = "InferQA compendium"

#: tags whose attribute loads a resource (it must never point at the network)
_RESOURCE_ATTRS = {
    "script": "src",
    "link": "href",
    "iframe": "src",
    "source": "src",
    "video": "src",
    "audio": "src",
    "embed": "src",
    "object": "data",
    "track": "src",
}
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_HEADING_MD = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


class BookRefusedError(ValueError):
    """The output folder exists and is not a book :func:`build_book` wrote: it is left alone (an
    unusable ``--out``: the command line prints it as one ``error:`` line and exits with 2)."""


@dataclass(frozen=True)
class BookSummary:
    """What :func:`build_book` wrote."""

    out_dir: Path
    source: Path
    notebooks: tuple[str, ...]
    markdown_pages: int
    text_pages: int
    files: int
    bytes: int
    #: notebook file name → number of its error outputs (only notebooks that hold some)
    errors: Mapping[str, int]
    #: ``<page>: <target>`` for each link turned into plain text (no page of the book to point at)
    unlinked: tuple[str, ...]
    #: ``<page>: <target>`` for each link whose ``#anchor`` the target page does not have (dropped)
    anchors_dropped: tuple[str, ...]

    @property
    def index(self) -> Path:
        return self.out_dir / "index.html"

    @property
    def pages(self) -> int:
        """HTML pages in all: the index, the notebooks, the Markdown and the plain-text pages."""
        return 1 + len(self.notebooks) + self.markdown_pages + self.text_pages

    def lines(self) -> list[str]:
        """The summary as the command line prints it."""
        out = [
            f"[book] {self.out_dir}: {self.pages} pages ({len(self.notebooks)} notebooks, "
            f"{self.markdown_pages} Markdown pages, {self.text_pages} plain-text pages), "
            f"{self.files} files copied, {self.bytes:,} bytes"
        ]
        if self.unlinked:
            out.append(
                f"[book] {len(self.unlinked)} link(s) to files the book cannot hold shown as text, "
                f"e.g. {self.unlinked[0]}"
            )
        if self.anchors_dropped:
            out.append(
                f"[book] {len(self.anchors_dropped)} link(s) to a missing anchor point at the page "
                f"instead, e.g. {self.anchors_dropped[0]}"
            )
        for name, n in self.errors.items():
            out.append(f"[book] warning: {name} holds {n} error output{'s' * (n != 1)}")
        return out


def github_slug(text: str) -> str:
    """The id GitHub gives a heading of text ``text`` (lower case, punctuation dropped, each space a
    hyphen); :func:`unique_slug` adds ``-1``, ``-2`` … for repeats."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def unique_slug(text: str, seen: dict[str, int]) -> str:
    """:func:`github_slug` of ``text``, ``-<n>`` appended for its n-th repeat on a page (``seen``)."""
    slug = github_slug(text)
    n = seen.get(slug, 0)
    seen[slug] = n + 1
    return slug if n == 0 else f"{slug}-{n}"


def plain_inline(markdown: str) -> str:
    """A line of Markdown as plain text: link targets, code ticks and emphasis marks dropped."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"[`*]|(?<!\w)_|_(?!\w)", "", text).strip()


def first_heading(markdown: str) -> str | None:
    """The text of the first ATX heading of a Markdown text (fenced code skipped), or ``None``."""
    fenced = False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        m = None if fenced else _HEADING_MD.match(line)
        if m:
            return plain_inline(m.group(1))
    return None


def notebook_title(nb: Any) -> str | None:
    """The first heading of a notebook's Markdown cells, or ``None``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found = first_heading(cell.source)
            if found:
                return found
    return None


def error_outputs(nb: Any) -> int:
    """How many error outputs (a raised exception's traceback) the notebook holds."""
    return sum(o.get("output_type") == "error" for c in nb.cells for o in c.get("outputs", []))


def image_outputs(nb: Any) -> int:
    """How many outputs of the notebook show an image."""
    return sum(
        any(k.startswith("image/") for k in (o.get("data") or {}))
        for c in nb.cells
        for o in c.get("outputs", [])
    )


def notebook_files(folder: Path) -> list[Path]:
    """The notebooks of a folder in name order (hidden files and checkpoints left out)."""
    return sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))


def is_book(folder: Path) -> bool:
    """Whether ``folder`` holds the marker of a book :func:`build_book` wrote."""
    try:
        return (
            json.loads((folder / MARKER).read_text(encoding="utf-8")).get("generator")
            == MARKER_CONTENT["generator"]
        )
    except (OSError, ValueError, AttributeError):
        return False


def check_replaceable(out_dir: Path) -> None:
    """Raise :class:`BookRefusedError` unless ``out_dir`` is absent, an empty folder or a book."""
    if out_dir.is_symlink():
        raise BookRefusedError(f"{out_dir} is a symbolic link: the book is not written through it")
    if not out_dir.exists():
        return
    if not out_dir.is_dir():
        raise BookRefusedError(f"{out_dir} is a file, not a book: choose another --out")
    if any(out_dir.iterdir()) and not is_book(out_dir):
        raise BookRefusedError(
            f"{out_dir} is not a book built by `python -m inferqa_utils book` (no {MARKER} "
            "in it): nothing of it is replaced; choose another --out or remove it"
        )


# -- HTML scanning ----------------------------------------------------------------------------------


class _Scanner(HTMLParser):
    """Walks an HTML text and reports each start tag, end tag and text with its offsets in it."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text = text
        self._lines = [0, *(m.end() for m in re.finditer("\n", text))]

    def _offset(self) -> int:
        line, col = self.getpos()
        return self._lines[line - 1] + col

    def run(self) -> None:
        self.feed(self.text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        start = self._offset()
        raw = self.get_starttag_text() or ""
        self.start(tag, attrs, start, start + len(raw))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        start = self._offset()
        end = self.text.find(">", start)
        self.end(tag, start, len(self.text) if end < 0 else end + 1)

    def handle_data(self, data: str) -> None:
        self.data(data)

    def start(self, tag: str, attrs: list[tuple[str, str | None]], begin: int, end: int) -> None:
        """A start tag spanning ``text[begin:end]``."""

    def end(self, tag: str, begin: int, end: int) -> None:
        """An end tag spanning ``text[begin:end]``."""

    def data(self, data: str) -> None:
        """Text between tags."""


def _start_tag(tag: str, attrs: Iterable[tuple[str, str | None]]) -> str:
    parts = [
        tag,
        *(name if value is None else f'{name}="{html.escape(value, quote=True)}"' for name, value in attrs),
    ]
    return "<" + " ".join(parts) + ">"


def _apply(text: str, edits: Sequence[tuple[int, int, str]]) -> str:
    out, at = [], 0
    for begin, end, new in sorted(edits):
        out.append(text[at:begin])
        out.append(new)
        at = end
    out.append(text[at:])
    return "".join(out)


class _Ids(_Scanner):
    """Collects the ids (and ``<a name>``) of a page; on headings without a GitHub-style id, adds an
    empty anchor carrying one (``add_slugs``)."""

    def __init__(self, text: str, add_slugs: bool) -> None:
        super().__init__(text)
        self.ids: set[str] = set()
        self.add_slugs = add_slugs
        self.headings: list[tuple[int, str]] = []  # (offset after the start tag, its text)
        self._heading: tuple[str, int, list[str]] | None = None
        self._skip = 0

    def start(self, tag: str, attrs: list[tuple[str, str | None]], begin: int, end: int) -> None:
        a = dict(attrs)
        for key in ("id", "name") if tag == "a" else ("id",):
            if a.get(key):
                self.ids.add(str(a[key]))
        if re.fullmatch(r"h[1-6]", tag) and self._heading is None:
            self._heading = (tag, end, [])
        elif self._heading is not None and tag == "a" and "anchor-link" in (a.get("class") or ""):
            self._skip += 1

    def end(self, tag: str, begin: int, end: int) -> None:
        if self._heading is not None and tag == self._heading[0]:
            self.headings.append((self._heading[1], "".join(self._heading[2])))
            self._heading = None
        elif self._heading is not None and tag == "a" and self._skip:
            self._skip -= 1

    def data(self, data: str) -> None:
        if self._heading is not None and not self._skip:
            self._heading[2].append(data)

    def result(self) -> tuple[str, set[str]]:
        self.run()
        if not self.add_slugs:
            return self.text, self.ids
        seen: dict[str, int] = {}
        edits = []
        for offset, text in self.headings:
            slug = unique_slug(text, seen)
            if slug and slug not in self.ids:
                self.ids.add(slug)
                edits.append((offset, offset, f'<a class="book-anchor" id="{html.escape(slug)}"></a>'))
        return _apply(self.text, edits), self.ids


class _Links(_Scanner):
    """Rewrites the links and resource addresses of a page with ``resolve``: ``resolve(url, tag)``
    gives the new address, or ``None`` for a target the book cannot hold (a link then becomes
    plain text showing the path; an image its description)."""

    def __init__(self, text: str, resolve: Callable[[str, str], str | None]) -> None:
        super().__init__(text)
        self.resolve = resolve
        self.edits: list[tuple[int, int, str]] = []
        self._open: tuple[str, list[str]] | None = None  # an unlinked <a>: its target, its text

    def start(self, tag: str, attrs: list[tuple[str, str | None]], begin: int, end: int) -> None:
        a = dict(attrs)
        if tag == "a" and a.get("href") is not None:
            href = str(a["href"])
            new = self.resolve(href, tag)
            if new is None:
                anchor = [("id", v) for k, v in attrs if k in ("id", "name") and v][:1]
                self.edits.append(
                    (begin, end, _start_tag("span", [("class", "book-unlinked"), ("title", href), *anchor]))
                )
                self._open = (href, [])
            elif new != href:
                self.edits.append(
                    (begin, end, _start_tag(tag, [(k, new if k == "href" else v) for k, v in attrs]))
                )
        elif tag == "img" and a.get("src") is not None:
            src = str(a["src"])
            new = self.resolve(src, tag)
            if new is None:
                alt = html.escape(str(a.get("alt") or "image"))
                shown = "" if src.startswith("data:") else f" <code>{html.escape(src)}</code>"
                self.edits.append((begin, end, f'<span class="book-missing-image">[{alt}]{shown}</span>'))
            elif new != src:
                self.edits.append(
                    (begin, end, _start_tag(tag, [(k, new if k == "src" else v) for k, v in attrs]))
                )
        elif tag in _RESOURCE_ATTRS and a.get(_RESOURCE_ATTRS[tag]):
            key = _RESOURCE_ATTRS[tag]
            url = str(a[key])
            new = self.resolve(url, tag)
            if new != url:
                self.edits.append(
                    (
                        begin,
                        end,
                        _start_tag(
                            tag,
                            [
                                (k, new) if k == key else (k, v)
                                for k, v in attrs
                                if k != key or new is not None
                            ],
                        ),
                    )
                )

    def end(self, tag: str, begin: int, end: int) -> None:
        if tag == "a" and self._open is not None:
            href, texts = self._open
            path = unquote(urlsplit(href).path) or href
            shown = "" if path in "".join(texts) else f' <code class="book-path">{html.escape(path)}</code>'
            self.edits.append((begin, end, f"</span>{shown}"))
            self._open = None

    def data(self, data: str) -> None:
        if self._open is not None:
            self._open[1].append(data)

    def result(self) -> str:
        self.run()
        return _apply(self.text, self.edits)


# -- rendering --------------------------------------------------------------------------------------


def _markdown_renderer() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def render_markdown(text: str, md: Any = None, demote: int = 0) -> str:
    """Markdown (GitHub's flavour as far as the pages use it: tables, strike-through, raw HTML) to
    HTML, each heading given the id GitHub gives it (:func:`unique_slug`) and ``demote`` levels
    lower (``<h1>`` → ``<h2>`` for 1; at most ``<h6>``)."""
    md = md or _markdown_renderer()
    tokens = md.parse(text)
    seen: dict[str, int] = {}
    for i, tok in enumerate(tokens):
        if tok.type in ("heading_open", "heading_close") and demote:
            tok.tag = f"h{min(6, int(tok.tag[1]) + demote)}"
        if tok.type == "heading_open" and i + 1 < len(tokens):
            words = "".join(
                c.content for c in tokens[i + 1].children or [] if c.type in ("text", "code_inline")
            )
            tok.attrSet("id", unique_slug(words, seen))
    return md.renderer.render(tokens, md.options, {})


#: nbconvert's lab template with its head, scripts and body wrapper left out (the book draws the
#: page around the cells) and each error output marked as one
_NOTEBOOK_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block header -%}{%- endblock header -%}
{%- block body_header -%}{%- endblock body_header -%}
{%- block body_footer -%}{%- endblock body_footer -%}
{%- block footer -%}{%- endblock footer -%}
{% block error -%}
<div class="jp-RenderedText jp-OutputArea-output book-error-output" data-output-type="error" \
data-mime-type="application/vnd.jupyter.stderr">
<pre>
{{- super() -}}
</pre>
</div>
{%- endblock error %}
"""

#: rules of the lab template's own <style> the book keeps (anchor links hidden, inputs unclipped)
_NOTEBOOK_EXTRA_CSS = """
a.anchor-link { display: none; }
.jp-InputArea { overflow: hidden; }
.jp-InputArea-editor { overflow: hidden; }
.cm-editor.cm-s-jupyter .highlight pre { padding: var(--jp-code-padding) 4px; margin: 0;
  font-family: inherit; font-size: inherit; line-height: inherit; color: inherit; }
.jp-OutputArea-output pre { line-height: inherit; font-family: inherit; }
.jp-RenderedText pre { color: var(--jp-content-font-color1); font-size: var(--jp-code-font-size); }
.jp-Collapser { display: none; }
@media print { .jp-Cell-inputWrapper, .jp-Cell-outputWrapper { display: block; } }
"""

BOOK_CSS = """/* the book's own styles (inferqa_utils/present/book.py) */
body.book { margin: 0; font: 16px/1.55 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif;
  color: #1f2328; background: #fff; }
.book-nav { position: sticky; top: 0; z-index: 10; display: flex; flex-wrap: wrap; gap: .4em 1.2em;
  padding: .55em 1.2em; background: #f6f8fa; border-bottom: 1px solid #d0d7de;
  font: 14px/1.4 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; }
.book-nav a { color: #0969da; text-decoration: none; }
.book-nav a:hover { text-decoration: underline; }
.book-nav .book-nav-here { color: #57606a; }
.book-page { max-width: 980px; margin: 0 auto; padding: 1.5em 2em 4em; }
.book-page h1, .book-page h2 { border-bottom: 1px solid #d8dee4; padding-bottom: .25em; }
.book-page table { border-collapse: collapse; margin: 1em 0; display: block; overflow-x: auto; }
.book-page th, .book-page td { border: 1px solid #d0d7de; padding: .3em .7em; vertical-align: top; }
.book-page tr:nth-child(2n) td { background: #f6f8fa; }
.book-page code { background: #eff1f3; border-radius: 4px; padding: .1em .3em; font-size: 88%; }
.book-page pre { background: #f6f8fa; padding: 1em; overflow-x: auto; border-radius: 6px; }
.book-page pre code { background: none; padding: 0; font-size: 85%; }
.book-page img { max-width: 100%; }
.book-page blockquote { margin: 0; padding: 0 1em; color: #57606a; border-left: .25em solid #d0d7de; }
pre.book-text { font-size: 13px; line-height: 1.45; white-space: pre-wrap; word-break: break-word; }
.book-unlinked { border-bottom: 1px dotted #8c959f; }
code.book-path { color: #57606a; }
.book-missing-image { color: #57606a; font-style: italic; }
.book-facts th { text-align: left; background: #f6f8fa; }
.book-warning { color: #cf222e; font-weight: 600; }
.book-error-output { border-left: 4px solid #cf222e; }
.book-widget { display: flex; align-items: center; gap: .6em; padding: 2px 0;
  font-family: var(--jp-code-font-family, monospace); font-size: var(--jp-code-font-size, 13px); }
.book-widget-vbox { flex-direction: column; align-items: flex-start; }
.book-widget-progress { width: 16em; }
body.book.jp-Notebook { padding: 0; overflow: visible; }
main.book-notebook { max-width: 1200px; margin: 0 auto; padding: 1em 1.5em 4em; }
"""


def _widget_html(model_id: str, state: Mapping[str, Any], depth: int = 0) -> str | None:
    """Static HTML of an ipywidget from its saved state (boxes, HTML, labels, progress bars — what
    tqdm draws), or ``None`` for a widget that needs its JavaScript to be seen."""
    model = state.get(model_id)
    if not isinstance(model, Mapping) or depth > 20:
        return None
    name = model.get("model_name")
    s = model.get("state") if isinstance(model.get("state"), Mapping) else {}
    desc = str(s.get("description") or "")
    label = f'<span class="book-widget-label">{html.escape(desc)}</span>' if desc else ""
    if name in ("HBoxModel", "VBoxModel", "BoxModel", "GridBoxModel"):
        parts = [
            _widget_html(str(c).removeprefix("IPY_MODEL_"), state, depth + 1) for c in s.get("children") or []
        ]
        if any(p is None for p in parts):
            return None
        kind = "vbox" if name == "VBoxModel" else "hbox"
        return f'<div class="book-widget book-widget-{kind}">{"".join(p or "" for p in parts)}</div>'
    if name in ("HTMLModel", "HTMLMathModel"):
        return f'{label}<span class="book-widget-html">{s.get("value") or ""}</span>'
    if name == "LabelModel":
        return f'{label}<span class="book-widget-html">{html.escape(str(s.get("value") or ""))}</span>'
    if name in ("FloatProgressModel", "IntProgressModel"):
        try:
            value, lo, hi = float(s.get("value") or 0), float(s.get("min") or 0), float(s.get("max") or 100)
        except (TypeError, ValueError):
            return None
        span = hi - lo if hi > lo else 1.0
        pct = max(0.0, min(100.0, 100 * (value - lo) / span))
        return (
            f'{label}<progress class="book-widget-progress" value="{pct:.1f}" max="100">{pct:.0f}%</progress>'
        )
    return None


def static_widgets(nb: Any) -> None:
    """Replace each widget output of the notebook by static HTML drawn from the widget state the
    notebook saved (:func:`_widget_html`), or by its text when it cannot be drawn, and drop the
    state: the exported page then needs no widget manager (which nbconvert loads from a CDN)."""
    key = "application/vnd.jupyter.widget-view+json"
    saved = nb.metadata.pop("widgets", None) or {}
    state = (saved.get("application/vnd.jupyter.widget-state+json") or {}).get("state") or {}
    for cell in nb.cells:
        kept = []
        for out in cell.get("outputs", []):
            data = out.get("data")
            if data and key in data:
                view = data.pop(key)
                drawn = _widget_html(str((view or {}).get("model_id", "")), state)
                if drawn is not None:
                    data["text/html"] = drawn
                if not data:
                    continue
            kept.append(out)
        if "outputs" in cell:
            cell["outputs"] = kept


# -- the book ---------------------------------------------------------------------------------------


@dataclass
class _Page:
    kind: str  # notebook | markdown | text | index
    out: str  # its path in the book (posix)
    title: str
    source: Path | None = None
    bases: tuple[Path, ...] = ()  # folders the relative links of its source are resolved against
    body: str = ""
    ids: set[str] = field(default_factory=set)
    errors: int = 0


def _abs(path: Path) -> Path:
    return Path(os.path.normpath(os.path.abspath(path)))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _rel_href(target: str, page: str) -> str:
    rel = posixpath.relpath(target, posixpath.dirname(page) or ".")
    return quote(rel, safe="/")


class _Book:
    """The pages of a book, rendered, then linked (module docstring)."""

    def __init__(self, notebooks_dir: Path, root: Path) -> None:
        self.root, self.nbdir = _abs(root), _abs(notebooks_dir)
        self.pages: dict[str, _Page] = {}
        self.by_source: dict[Path, _Page] = {}
        self.files: dict[str, Path] = {}  # copied files: book path → source
        self.copied: dict[Path, str] = {}  # the same, source → book path
        self.unlinked: list[str] = []
        self.anchors_dropped: list[str] = []
        self.queue: deque[_Page] = deque()
        self.notebooks: list[_Page] = []
        self.markdown: list[_Page] = []
        self._md: Any = None
        self._exporter: Any = None
        self.notebook_css = ""

    # -- where a source goes ------------------------------------------------------------------
    def out_path(self, source: Path, replace: str | None = None, append: str = "") -> str | None:
        """The book path of a repository file (its suffix replaced by ``replace``, ``append``
        appended), or ``None`` outside the repository and the notebooks' folder, for hidden files
        and for a path the book already uses."""
        if _within(source, self.nbdir) and source != self.nbdir:
            rel = "notebooks/" + source.relative_to(self.nbdir).as_posix()
        elif _within(source, self.root) and source != self.root:
            rel = source.relative_to(self.root).as_posix()
        else:
            return None
        if any(part.startswith(".") for part in rel.split("/")):
            return None
        if replace is not None:
            rel = posixpath.splitext(rel)[0] + replace
        rel += append
        if rel in RESERVED or rel in self.pages or rel in self.files:
            return None
        return rel

    def add(self, page: _Page) -> _Page:
        self.pages[page.out] = page
        if page.source is not None:
            self.by_source.setdefault(page.source, page)
        self.queue.append(page)
        return page

    # -- rendering ----------------------------------------------------------------------------
    def exporter(self) -> Any:
        if self._exporter is None:
            import jinja2
            from nbconvert import HTMLExporter

            self._exporter = HTMLExporter(
                template_name="lab",
                template_file="book.html.j2",
                mathjax_url="",
                extra_loaders=[jinja2.DictLoader({"book.html.j2": _NOTEBOOK_TEMPLATE})],
            )
        return self._exporter

    def lab_css(self, inline_css: Sequence[str]) -> str:
        """nbconvert's JupyterLab styles (the lab template's ``static/`` files), the syntax colours
        of the first export, and the rules of the template's own <style>."""
        parts = []
        for name in ("index.css", "theme-light.css"):
            for folder in self.exporter().template_paths:
                f = Path(folder) / "static" / name
                if f.is_file():
                    parts.append(f.read_text(encoding="utf-8"))
                    break
        return "\n".join([*parts, *inline_css, _NOTEBOOK_EXTRA_CSS])

    def add_notebook(self, path: Path, out: str) -> _Page:
        import nbformat

        nb = nbformat.read(str(path), as_version=4)
        title = notebook_title(nb) or path.stem
        errors = error_outputs(nb)
        static_widgets(nb)
        body, resources = self.exporter().from_notebook_node(nb, resources={"metadata": {"name": path.stem}})
        if not self.notebook_css:
            self.notebook_css = self.lab_css((resources.get("inlining") or {}).get("css") or [])
        body, ids = _Ids(body, add_slugs=True).result()
        bases = self.notebook_bases()
        return self.add(_Page("notebook", out, title, path, bases, body, ids, errors))

    def notebook_bases(self) -> tuple[Path, ...]:
        """Where a notebook's relative links are resolved: its own folder, then the places executed
        notebooks come from (``notebooks/``, whose links a run's copies keep, and ``docs/executed/``,
        whose links the shipped copies have) — a copy outside the repository still finds its pages."""
        return tuple(dict.fromkeys([self.nbdir, self.root / "notebooks", self.root / "docs" / "executed"]))

    def add_markdown(self, path: Path, out: str, bases: tuple[Path, ...] | None = None) -> _Page:
        self._md = self._md or _markdown_renderer()
        text = path.read_text(encoding="utf-8")
        body, ids = _Ids(render_markdown(text, self._md), add_slugs=False).result()
        rel = out.removesuffix(".html")
        page = self.add(
            _Page("markdown", out, first_heading(text) or rel, path, bases or (path.parent,), body, ids)
        )
        self.markdown.append(page)
        return page

    def add_text(self, path: Path, out: str) -> _Page | None:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        shown = out.removesuffix(".html")
        # each line its id, as GitHub gives it (``mod.py#L3``)
        lines = "\n".join(
            f'<span id="L{n}">{html.escape(line)}</span>' for n, line in enumerate(text.splitlines(), start=1)
        )
        body = f'<h1><code>{html.escape(shown)}</code></h1>\n<pre class="book-text">{lines}</pre>\n'
        ids = {f"L{n}" for n in range(1, len(text.splitlines()) + 1)}
        return self.add(_Page("text", out, shown, path, (), body, ids))

    # -- linking ------------------------------------------------------------------------------
    def target_of(self, path: Path) -> _Page | str | None:
        """The page (or copied file's book path) a link to the repository file ``path`` points at,
        made when it is not in the book yet; ``None`` when the book cannot hold it."""
        if path in self.by_source:
            return self.by_source[path]
        if path in self.copied:
            return self.copied[path]
        inside = _within(path, self.root) or _within(path, self.nbdir)
        real = _abs(path.resolve()) if path.exists() else path
        if not inside or not (_within(real, self.root) or _within(real, self.nbdir)):
            return None
        if path.is_dir() and path in (self.nbdir, self.root / "notebooks", self.root / "docs" / "executed"):
            return self.pages["index.html"]  # the notebooks' folder: the index lists them
        if path.is_dir():
            readme = path / "README.md"
            return self.target_of(readme) if readme.is_file() else None
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        suffix = path.suffix.lower()
        if suffix in IMAGE_SUFFIXES:
            out = self.out_path(path)
            if out is None:
                return None
            self.files[out] = path
            self.copied[path] = out
            return out
        if suffix == ".md":
            out = self.out_path(path, replace=".html")
            return None if out is None else self.add_markdown(path, out)
        if suffix in TEXT_SUFFIXES or path.name in TEXT_NAMES:
            out = self.out_path(path, append=".html")
            return None if out is None else self.add_text(path, out)
        return None

    def resolve(self, page: _Page, url: str, tag: str) -> str | None:
        """The book address of ``url`` as written in ``page``'s source (:class:`_Links`)."""
        if url.startswith("data:"):
            return url
        if _SCHEME.match(url) or url.startswith("//"):
            # a link to the web stays; nothing on a page loads from the network
            if tag == "a" and url.lower().startswith(("http:", "https:", "mailto:")):
                return url
            if tag == "a":
                self.unlinked.append(f"{page.out}: {url}")
            return None
        parts = urlsplit(url)
        frag = parts.fragment
        if not parts.path:
            if not frag or frag in page.ids or unquote(frag) in page.ids:
                return url
            self.anchors_dropped.append(f"{page.out}: {url}")
            return None
        if not page.bases and not parts.path.startswith("/"):
            return None
        rel = unquote(parts.path)
        candidates = [self.root / rel.lstrip("/")] if rel.startswith("/") else [b / rel for b in page.bases]
        found = next((c for c in map(_abs, candidates) if c in self.by_source or c.exists()), None)
        target = None if found is None else self.target_of(found)
        if target is None:
            if tag == "a":
                self.unlinked.append(f"{page.out}: {url}")
            return None
        if isinstance(target, str):
            return _rel_href(target, page.out)
        href = _rel_href(target.out, page.out)
        if frag:
            if frag in target.ids or unquote(frag) in target.ids:
                return f"{href}#{frag}"
            self.anchors_dropped.append(f"{page.out}: {url}")
        return href

    def link(self, page: _Page) -> None:
        page.body = _Links(page.body, lambda url, tag: self.resolve(page, url, tag)).result()


# -- page chrome ------------------------------------------------------------------------------------


def _nav(book: _Book, page: _Page, title: str) -> str:
    def a(target: _Page | str, text: str) -> str:
        out = target if isinstance(target, str) else target.out
        if out == page.out:
            return f'<span class="book-nav-here">{html.escape(text)}</span>'
        return f'<a href="{_rel_href(out, page.out)}">{html.escape(text)}</a>'

    items = [a("index.html", f"⌂ {title}")]
    nbs = book.notebooks
    if page in nbs:
        i = nbs.index(page)
        if i > 0:
            items.append(a(nbs[i - 1], f"← {_short(nbs[i - 1])}"))
        items.append(f'<span class="book-nav-here">{html.escape(_short(page))}</span>')
        if i + 1 < len(nbs):
            items.append(a(nbs[i + 1], f"{_short(nbs[i + 1])} →"))
    elif nbs:
        items.append(a(nbs[0], "Notebooks"))
    for name, label in (("docs/results.html", "Results"), ("docs/glossary.html", "Glossary")):
        if name in book.pages:
            items.append(a(name, label))
    return '<nav class="book-nav">' + "\n".join(items) + "</nav>"


def _short(page: _Page) -> str:
    return page.source.stem if page.source is not None else page.title


def _html_page(book: _Book, page: _Page, book_title: str) -> str:
    css = _rel_href("book.css", page.out)
    title = page.title if page.kind == "index" else f"{page.title} · {book_title}"
    head = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>",
        '<link rel="icon" href="data:,">',  # no request for a favicon the book does not have
    ]
    if page.kind == "notebook":
        head.append(f'<link rel="stylesheet" href="{_rel_href("notebook.css", page.out)}">')
        head.append(f'<link rel="stylesheet" href="{css}">')
        body = (
            '<body class="book jp-Notebook" data-jp-theme-light="true" data-jp-theme-name="JupyterLab Light">'
            f'\n{_nav(book, page, book_title)}\n<main class="book-notebook">\n{page.body}\n</main>'
        )
    else:
        head.append(f'<link rel="stylesheet" href="{css}">')
        body = (
            f'<body class="book book-{page.kind}">\n{_nav(book, page, book_title)}\n'
            f'<main class="book-page">\n{page.body}\n</main>'
        )
    return "\n".join([*head, "</head>", body, "</body>", "</html>", ""])


def _run_facts(manifest: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(label, value)`` rows of a run manifest for the index page."""

    def get(*keys: str) -> Any:
        v: Any = manifest
        for k in keys:
            v = v.get(k) if isinstance(v, Mapping) else None
        return v

    rows = [
        ("run", get("run_id")),
        ("profile", get("parameters", "profile")),
        ("outcome", get("outcome") or get("status")),
        ("status", get("status")),
        ("started", get("started")),
        ("finished", get("finished")),
    ]
    total = get("timings_s", "total")
    if isinstance(total, int | float):
        rows.append(("notebook time", f"{total / 60:.1f} min ({total:.0f} s)"))
    commit = get("git", "commit")
    if commit:
        rows.append(
            ("commit", f"{str(commit)[:12]}{' (uncommitted changes)' if get('git', 'dirty') else ''}")
        )
    versions = get("versions")
    if isinstance(versions, Mapping):
        rows.append(("packages", ", ".join(f"{k} {v}" for k, v in versions.items())))
    plat = get("platform")
    if isinstance(plat, Mapping):
        rows.append(("platform", " ".join(str(v) for v in plat.values())))
    return [(k, str(v)) for k, v in rows if v not in (None, "")]


def _index_body(
    book: _Book,
    title: str,
    manifest: Mapping[str, Any] | None,
    about: tuple[_Page, str] | None,
    source_label: str,
) -> str:
    page = book.pages["index.html"]
    parts = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p>The executed notebooks of <code>{html.escape(source_label)}</code> and the pages of the "
        "compendium, readable offline.</p>",
    ]
    if manifest:
        rows = "".join(
            f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in _run_facts(manifest)
        )
        parts.append(f'<h2 id="book-run">The run</h2>\n<table class="book-facts">{rows}</table>')
    if about is not None:
        parts.append(
            f'<section class="book-about">\n{about[1]}<p>(<a href="{_rel_href(about[0].out, page.out)}">'
            f"{html.escape(about[0].title)}</a> on a page of its own)</p>\n</section>"
        )
    timings = (
        (manifest or {}).get("timings_s") if isinstance((manifest or {}).get("timings_s"), Mapping) else {}
    )
    items = []
    for nb in book.notebooks:
        name = nb.source.name if nb.source else nb.out
        extra = []
        t = timings.get(nb.source.stem) if nb.source else None
        if isinstance(t, int | float):
            extra.append(f"{t:.0f} s")
        if nb.errors:
            extra.append(
                f'<span class="book-warning">{nb.errors} error output{"s" * (nb.errors != 1)}</span>'
            )
        tail = f" — {', '.join(extra)}" if extra else ""
        items.append(
            f'<li><a href="{_rel_href(nb.out, page.out)}">{html.escape(nb.title)}</a> '
            f"<code>{html.escape(name)}</code>{tail}</li>"
        )
    parts.append(f'<h2 id="book-notebooks">Notebooks</h2>\n<ol class="book-notebooks">{"".join(items)}</ol>')
    listed = [p for p in book.markdown if about is None or p is not about[0]]
    pitems = "".join(
        f'<li><a href="{_rel_href(p.out, page.out)}">{html.escape(p.title)}</a> '
        f"<code>{html.escape(p.out.removesuffix('.html') + '.md')}</code></li>"
        for p in listed
    )
    parts.append(f'<h2 id="book-pages">Pages</h2>\n<ul class="book-pages">{pitems}</ul>')
    return "\n".join(parts) + "\n"


def _read_manifest(folder: Path) -> dict[str, Any] | None:
    try:
        m = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return m if isinstance(m, dict) else None


def markdown_pages(root: Path) -> list[Path]:
    """The repository's pages of the book: ``README.md`` and ``docs/*.md``."""
    found = [root / "README.md"] if (root / "README.md").is_file() else []
    return found + sorted((root / "docs").glob("*.md"))


def build_book(
    notebooks_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str] = "build/book",
    root: str | os.PathLike[str] = ".",
    pages: Sequence[str | os.PathLike[str]] | None = None,
) -> BookSummary:
    """Write the book of the notebooks of ``notebooks_dir`` and the pages of the repository at
    ``root`` (``README.md``, ``docs/*.md``; ``pages`` chooses others) into ``out_dir`` (module
    docstring); returns what it wrote. Raises :class:`~inferqa_utils.core.errors.MissingInputError`
    for a folder without notebooks, :class:`BookRefusedError` when ``out_dir`` is not a book."""
    nbdir, root_p, out = _abs(Path(notebooks_dir)), _abs(Path(root)), _abs(Path(out_dir))
    notebooks = notebook_files(nbdir) if nbdir.is_dir() else []
    if not notebooks:
        raise MissingInputError(
            f"no notebooks (*.ipynb) in {notebooks_dir}: give a run's folder or docs/executed"
        )
    check_replaceable(out)
    book = _Book(nbdir, root_p)
    index = book.add(_Page("index", "index.html", DEFAULT_TITLE))
    book.queue.clear()
    for path in notebooks:
        page = book.add_notebook(path, f"notebooks/{path.stem}.html")
        book.notebooks.append(page)
        for alias in (root_p / "notebooks" / path.name, root_p / "docs" / "executed" / path.name):
            book.by_source.setdefault(alias, page)
    about = None
    about_out = book.out_path(nbdir / "README.md", replace=".html")
    if (nbdir / "README.md").is_file() and about_out is not None:
        about = book.add_markdown(nbdir / "README.md", about_out, book.notebook_bases())
    chosen = [_abs(Path(p)) for p in pages] if pages is not None else markdown_pages(root_p)
    for path in chosen:
        target = book.out_path(path, replace=".html")
        if target is not None and path not in book.by_source:
            book.add_markdown(path, target)
    readme = book.by_source.get(root_p / "README.md")
    title = readme.title if readme is not None else DEFAULT_TITLE
    shown = None
    if about is not None:  # the folder's README, on the index too: its headings one level lower
        text = (nbdir / "README.md").read_text(encoding="utf-8")
        fragment, ids = _Ids(render_markdown(text, demote=1), add_slugs=False).result()
        where = _Page("index", "index.html", title, about.source, about.bases, fragment, ids)
        shown = (about, _Links(fragment, lambda url, tag: book.resolve(where, url, tag)).result())
    while book.queue:
        book.link(book.queue.popleft())
    manifest = _read_manifest(nbdir)
    label = nbdir.relative_to(root_p).as_posix() if _within(nbdir, root_p) else nbdir.name
    index.title = title
    index.body = _index_body(book, title, manifest, shown, label)
    written = 0
    with staged_dir(out) as tmp:
        for page in sorted(book.pages.values(), key=lambda p: p.out):
            f = tmp / page.out
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(_html_page(book, page, title), encoding="utf-8")
        for rel, src in sorted(book.files.items()):
            f = tmp / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(src.read_bytes())
        (tmp / "book.css").write_text(BOOK_CSS, encoding="utf-8")
        (tmp / "notebook.css").write_text(book.notebook_css, encoding="utf-8")
        (tmp / MARKER).write_text(json.dumps(MARKER_CONTENT) + "\n", encoding="utf-8")
        written = sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file())
        check_replaceable(out)  # again, just before the swap: nothing of a user's is replaced
    return BookSummary(
        out_dir=out,
        source=nbdir,
        notebooks=tuple(p.source.name for p in book.notebooks if p.source),
        markdown_pages=len(book.markdown),
        text_pages=sum(p.kind == "text" for p in book.pages.values()),
        files=len(book.files),
        bytes=written,
        errors={p.source.name: p.errors for p in book.notebooks if p.errors and p.source},
        unlinked=tuple(book.unlinked),
        anchors_dropped=tuple(book.anchors_dropped),
    )
