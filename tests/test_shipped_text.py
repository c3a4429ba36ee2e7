"""Shipped text describes the compendium as it is, not how it was made.

The README, the documentation pages, the notebooks, the package's code and configuration, the
benchmarks, the scripts and the Makefile must not refer to development history (work sessions,
issue numbers, superseded measurements, branches merged). The generated ``docs/results.md`` is
left out: it is written by ``make results-page``. Relative links of the README and the docs pages
must name files that exist.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: generated, not written by hand
GENERATED = {"docs/results.md"}

#: history references, each with a short name for the failure message
HISTORY = [
    ("work session", re.compile(r"\bsession[ -]?\d+", re.IGNORECASE)),
    ("work sessions", re.compile(r"\bsessions? \d", re.IGNORECASE)),
    ("issue number", re.compile(r"\bissue[ -]?#?\d+", re.IGNORECASE)),
    ("superseded measurement", re.compile(r"previous measurement", re.IGNORECASE)),
    ("superseded code", re.compile(r"since replaced", re.IGNORECASE)),
    ("branch history", re.compile(r"merged into main", re.IGNORECASE)),
]

#: the shipped text files, as glob patterns relative to the repository root
SHIPPED = [
    "README.md", "docs/*.md", "notebooks/*.ipynb", "inferqa_utils/**/*.py", "inferqa_utils/**/*.yaml",
    "benchmarks/*.py", "scripts/*.py", "scripts/*.sh", "Makefile", "examples/*/*.py", "examples/*/*.md",
    "examples/*/*.toml", "LICENSE", "CITATION.cff",
]


def shipped_files(root: Path = ROOT) -> list[Path]:
    files: set[Path] = set()
    for pattern in SHIPPED:
        files.update(p for p in root.glob(pattern) if p.is_file())
    return sorted(p for p in files if p.relative_to(root).as_posix() not in GENERATED)


def history_references(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line: [kind] text`` for every history reference in ``path``."""
    found = []
    text = path.read_text(encoding="utf-8")
    for number, line in enumerate(text.splitlines(), start=1):
        for kind, pattern in HISTORY:
            match = pattern.search(line)
            if match:
                found.append(f"{path.relative_to(root).as_posix()}:{number}: [{kind}] "
                             f"{match.group(0)!r} in {line.strip()[:160]!r}")
                break  # one report per line
    return found


def test_the_shipped_files_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in shipped_files()}
    for expected in ("README.md", "Makefile", "docs/methods.md", "notebooks/00_quickstart.ipynb",
                     "inferqa_utils/core/profiles.yaml", "inferqa_utils/core/config.py", "LICENSE",
                     "CITATION.cff"):
        assert expected in names
    assert "docs/results.md" not in names


def test_the_licence_and_the_citation_file_agree_with_pyproject():
    """LICENSE is the MIT licence pyproject.toml names; CITATION.cff (CFF 1.2.0) cites the
    compendium at pyproject's version under that licence and names paper 000 as the work it
    reproduces."""
    import tomllib

    import yaml

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert project["license"] == "MIT" and licence.startswith("MIT License\n")
    assert "Copyright (c) 2026 the InferQA compendium authors" in licence
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0" and cff["license"] == project["license"]
    assert cff["version"] == project["version"] and cff["title"] and cff["authors"]
    assert [r["title"] for r in cff["references"]] == ["Inferential Question Answering"]


@pytest.mark.parametrize("path", shipped_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_history_references(path: Path):
    found = history_references(path)
    assert not found, "development history in shipped text:\n" + "\n".join(found)


def test_the_patterns_catch_history(tmp_path: Path):
    sample = tmp_path / "sample.md"
    sample.write_text("Measured (session 9, 2026-11-23).\nissue-20 target\nsessions 9–10\n"
                      "The previous measurement\nsince replaced\nthe code of abc merged into main\n"
                      "A training session resumes from its checkpoint (sessions of training).\n",
                      encoding="utf-8")
    found = history_references(sample, tmp_path)
    assert [f.split(":")[1] for f in found] == ["1", "2", "3", "4", "5", "6"]


#: [text](target) in Markdown, target without a scheme
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def relative_links(path: Path) -> list[tuple[int, str]]:
    links = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue  # a URL, or an anchor on the same page
            links.append((number, target.split("#", 1)[0]))
    return links


@pytest.mark.parametrize("path", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(path: Path):
    missing = [f"{path.relative_to(ROOT).as_posix()}:{n}: {target}"
               for n, target in relative_links(path) if not (path.parent / target).exists()]
    assert not missing, "links to missing files:\n" + "\n".join(missing)


def github_anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a Markdown file's headings (lower case, punctuation dropped, spaces
    to hyphens, ``-1``, ``-2`` … for repeats; link text for ``[text](url)``) and its explicit
    ``<a id=…>`` / ``<a name=…>`` anchors."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        anchors.update(re.findall(r"<a (?:id|name)=\"([^\"]+)\"", line))
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or not m:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        anchors.add(slug if n == 0 else f"{slug}-{n}")
    return anchors


def test_github_anchors_by_hand(tmp_path: Path):
    page = tmp_path / "p.md"
    page.write_text("# Run time of the `triviahg` profile\n## The engine (`benchmarks/engine.py`)\n"
                    "## Notes\n## Notes\n```\n# not a heading\n```\n### [Link](x.md) text\n"
                    '<a id="custom"></a>\n', encoding="utf-8")
    assert github_anchors(page) == {"run-time-of-the-triviahg-profile", "the-engine-benchmarksenginepy",
                                    "notes", "notes-1", "link-text", "custom"}


@pytest.mark.parametrize("path", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_link_anchors_exist(path: Path):
    """A link's ``#anchor`` names a heading of the page it points to (GitHub's anchors)."""
    broken = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or "#" not in target:
                continue
            file, anchor = target.split("#", 1)
            page = path if not file else path.parent / file
            if page.suffix == ".md" and page.exists() and anchor not in github_anchors(page):
                broken.append(f"{path.relative_to(ROOT).as_posix()}:{number}: {target}")
    assert not broken, "links to missing anchors:\n" + "\n".join(broken)

