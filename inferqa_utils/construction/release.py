"""Dataset releases: a complete build, written once by the construction code, shipped, and read by
every later run through the QUIT loader — as the QUIT authors release their dataset (paper 000 §3:
splits whose ``subsets`` hold every labeler's generated answer per subset-permutation, a corpus,
the expanded answer pools) and everyone starts from the release.

A release folder holds:

* the QUIT shape :func:`~inferqa_utils.sources.quit.load_quit` reads — ``train.json``, ``dev.json``,
  ``test.json``, ``corpus/corpus.jsonl`` — plus our TREC ``qrels/<split>.qrels`` and
  ``distractors.json`` (questions whose passages are in the corpus only);
* what the analyses need and the paper's release lacks: ``construction/*.csv`` (every question's
  fate and drop reason, every hint's convergence and whether it was kept, the closed-book answers
  of the parametric filter, the answer-pool expansions and guard refusals, difficulty, Table 1),
  ``verification.json`` (the human decisions applied), and the answer-containing control corpus
  ``control/corpus.jsonl`` with its pooled LLM relevance judgments ``control/judgments.tsv``;
* ``manifest.json``: the parameters, each model's sha256, the code commit, per construction step
  the seconds and the LLM calls and tokens, the counts, and every file's sha256.

:func:`write_release` writes a release atomically (a new folder swapped in at the end), so a
``git diff`` of the folder shows exactly what a change of code or model did to the dataset.
:func:`verify_release` checks a release before anything reads it; :func:`install_release` puts it
where notebooks 02–07 read a dataset (``build/datasets/<name>``). :func:`sample_config` and
:func:`agreement` rebuild a seeded sample of a release's questions from the source and compare
the fresh labels with the released ones (per-passage agreement and Cohen's κ, intervals over
questions).
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..core.atomic import staged_dir
from ..core.config import PATHS, SEED, root_relative
from ..core.errors import DataFormatError, InferQAError
from ..core.fingerprint import sha256_file
from ..ir.datamodel import Dataset
from ..ir.textnorm import exact_match, normalize_answer
from ..ir.trec import read_qrels
from ..sources.quit import load_quit
from ..stages import CONTROL_CORPUS, control_texts
from .leakage import LeakageFilter
from .passages import n_subset_permutations

if TYPE_CHECKING:
    from .build_config import BuildConfig, BuildResult

#: layout version of a release folder; readers refuse other versions
RELEASE_SCHEMA = 1
MANIFEST = "manifest.json"
SPLIT_FILES = ("train.json", "dev.json", "test.json")
CONTROL_JUDGMENTS = "control/judgments.tsv"
JUDGMENT_COLUMNS = ["corpus", "qid", "pid", "label", "answer", "source"]
#: build outputs copied into ``construction/`` (those present)
CONSTRUCTION_TABLES = (
    "questions.csv", "hints.csv", "parametric.csv", "pool_expansions.csv", "guard_refusals.csv",
    "difficulty.csv", "leakage_agreement.csv", "table1.csv",
)


class ReleaseError(InferQAError):
    """A release folder that is missing, of another layout, or fails its checks."""


def release_folder(spec: str | os.PathLike[str]) -> Path:
    """The folder of a release: a dataset name (``embedded`` → ``data/embedded/release``, where
    the release command writes it) or a path."""
    text = str(spec)
    if os.sep not in text and "/" not in text and not Path(text).is_dir():
        return PATHS.data / text / "release"
    return Path(spec)


def read_manifest(folder: str | os.PathLike[str]) -> dict[str, Any]:
    folder = Path(folder)
    path = folder / MANIFEST
    if not path.is_file():
        raise ReleaseError(f"{folder} is not a dataset release: no {MANIFEST} (make one with "
                           "`python -m inferqa_utils release --profile NAME`)")
    try:
        m = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise DataFormatError(path, f"invalid JSON ({e})") from None
    if not isinstance(m, dict) or m.get("schema") != RELEASE_SCHEMA:
        raise DataFormatError(
            path,
            f"release layout {m.get('schema') if isinstance(m, dict) else None!r}; this "
            f"code reads layout {RELEASE_SCHEMA}",
            field="schema",
        )
    return m


# --------------------------------------------------------------------------------------- writing
def _relative(obj: Any) -> Any:
    """``obj`` with absolute paths under the repository root made relative (a release names no
    machine's folders)."""
    root = str(PATHS.root) + os.sep
    if isinstance(obj, dict):
        return {(_relative(k) if isinstance(k, str) else k): _relative(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_relative(v) for v in obj]
    if isinstance(obj, str) and obj.startswith(root):
        return obj[len(root):]
    return obj


def write_release(
    build_folder: str | os.PathLike[str],
    out: str | os.PathLike[str],
    manifest: Mapping[str, Any],
    control_corpus: Mapping[str, str] | None = None,
    judgments: pd.DataFrame | None = None,
    decisions: Mapping[str, Any] | None = None,
    readme: str = "",
    licence: str | os.PathLike[str] | None = None,
) -> Path:
    """Write the release of the build in ``build_folder`` (an export of
    :func:`~inferqa_utils.construction.build.build_dataset`) to ``out``, atomically: everything is
    written to a new folder beside ``out`` that replaces ``out`` only once complete (an
    interrupted write leaves ``out`` as it was). ``manifest`` holds what only the caller knows
    (profile, command, models, step costs); the build's own manifest, the counts and every
    file's sha256 are added here. ``licence``: the source's licence file, copied as ``LICENSE``
    (a release derived from TriviaHG ships with its MIT licence)."""
    build_folder, out = Path(build_folder), Path(out)
    build_manifest = json.loads((build_folder / "manifest.json").read_text(encoding="utf-8"))
    with staged_dir(out) as tmp:
        for split in SPLIT_FILES:
            if (build_folder / split).exists():
                shutil.copy2(build_folder / split, tmp / split)
        for sub in ("corpus", "qrels"):
            shutil.copytree(build_folder / sub, tmp / sub)
        if (build_folder / "distractors.json").exists():
            shutil.copy2(build_folder / "distractors.json", tmp / "distractors.json")
        (tmp / "construction").mkdir()
        for name in CONSTRUCTION_TABLES:
            if (build_folder / name).exists():
                shutil.copy2(build_folder / name, tmp / "construction" / name)
        (tmp / "verification.json").write_text(json.dumps(dict(decisions or {}), ensure_ascii=False, indent=1,
                                                          sort_keys=True) + "\n", encoding="utf-8")
        if control_corpus:
            (tmp / "control").mkdir()
            with open(tmp / CONTROL_CORPUS, "w", encoding="utf-8") as fh:
                for pid, text in control_corpus.items():
                    fh.write(json.dumps({"id": pid, "contents": text}, ensure_ascii=False) + "\n")
            if judgments is not None:
                j = judgments.reindex(columns=JUDGMENT_COLUMNS).sort_values(
                    ["corpus", "qid", "pid"], kind="stable"
                )
                j.to_csv(tmp / CONTROL_JUDGMENTS, sep="\t", index=False)
        if readme:
            (tmp / "README.md").write_text(readme, encoding="utf-8")
        if licence is not None:
            shutil.copy2(licence, tmp / "LICENSE")
        files = {str(p.relative_to(tmp)): sha256_file(p) for p in sorted(tmp.rglob("*")) if p.is_file()}
        full = {
            "schema": RELEASE_SCHEMA,
            **dict(manifest),
            "build": _relative(build_manifest),
            "files": files,
        }
        (tmp / MANIFEST).write_text(json.dumps(full, indent=1, ensure_ascii=False, default=str) + "\n",
                                    encoding="utf-8")
    return out


# ------------------------------------------------------------------------------ reading, checks
def verify_release(folder: str | os.PathLike[str]) -> list[str]:
    """What is wrong with a release (empty: nothing). Checks, in order: the manifest's layout; every
    listed file present with its recorded sha256 (an edited file is named); the splits load as QUIT;
    qrels only name corpus passages, labels in {0, 1, 2}; every question of a labelled split has a
    label for each of its passages and a generated answer by each labeler for each; no hint of a
    question names its gold answer (our leakage filter); every control judgment names a known
    question and passage. Problems are listed, at most five per kind."""
    folder = Path(folder)
    m = read_manifest(folder)
    problems: list[str] = []
    for rel, digest in (m.get("files") or {}).items():
        p = folder / rel
        if not p.is_file():
            problems.append(f"{rel}: missing")
        elif sha256_file(p) != digest:
            problems.append(
                f"{rel}: sha256 differs from the manifest (the file was changed after the release was made)"
            )
    if problems:
        return problems
    try:
        ds = _load(folder, m)
    except InferQAError as e:
        return [str(e)]
    build = m.get("build") or {}
    params = build.get("parameters") or {}
    per_q = n_subset_permutations(int(params.get("k_hints", 5)))
    labelers = list(params.get("labelers") or [])
    labelled = build.get("labelled_splits")
    kinds: dict[str, list[str]] = {}

    def problem(kind: str, text: str) -> None:
        kinds.setdefault(kind, []).append(text)

    for qid, labs in ds.qrels.items():
        for pid, lab in labs.items():
            if pid not in ds.passages:
                problem("qrels", f"qrels of {qid} name {pid!r}, which is not in the corpus")
            if lab not in (0, 1, 2):
                problem("labels", f"{qid} {pid}: label {lab} outside {{0, 1, 2}}")
    own: dict[str, list[str]] = {}
    for p in ds.passages.values():
        own.setdefault(p.qid, []).append(p.pid)
    leak = LeakageFilter()
    for split, qids in ds.splits.items():
        is_labelled = labelled is None or split in labelled
        for qid in qids:
            q = ds.questions[qid]
            mine = own.get(qid, [])
            if len(mine) != per_q:
                problem("passages", f"{qid}: {len(mine)} passages, expected {per_q}")
            labs = ds.qrels.get(qid, {})
            if set(labs) != set(mine):
                problem("labels", f"{qid}: {len(labs)} labels for {len(mine)} own passages")
            if is_labelled:
                for pid in mine:
                    gens = ds.generations.get(pid) or {}
                    if any(not isinstance(gens.get(lab), str) for lab in labelers):
                        problem("generations", f"{qid} {pid}: no generated answer by {labelers}")
            gold = q.meta.get("gold_answers") or q.answers[:1]
            leaks = leak.find(gold, q.hint_texts)
            if leaks:
                problem("leakage", f"{qid}: hint {leaks[0].hint_index} names the answer ({leaks[0].ngram!r})")
    judgments = read_judgments(folder)
    if judgments is not None:
        control = _control_ids(folder)
        for row in judgments.itertuples():
            if row.qid not in ds.questions:
                problem("judgments", f"judgment of unknown question {row.qid!r}")
            elif row.pid not in ds.passages and row.pid not in control:
                problem("judgments", f"{row.qid}: judged passage {row.pid!r} is in neither corpus")
            elif row.label not in (1, 2):
                problem("judgments", f"{row.qid} {row.pid}: judgment label {row.label} outside {{1, 2}}")
    for kind, items in kinds.items():
        problems += items[:5] + ([f"… and {len(items) - 5} more {kind} problems"] if len(items) > 5 else [])
    return problems


def _load(folder: Path, manifest: Mapping[str, Any]) -> Dataset:
    name = str(manifest.get("name") or folder.name)
    ds = load_quit(folder, name=name)
    for split in ds.splits:
        f = folder / "qrels" / f"{split}.qrels"
        if not f.is_file():
            raise ReleaseError(f"{folder}: qrels/{split}.qrels is missing")
        ds.qrels.update(read_qrels(f))
    build = manifest.get("build") or {}
    ds.meta.update({"built": build, "labelled_splits": build.get("labelled_splits"), "release": str(folder)})
    return ds


def load_release(spec: str | os.PathLike[str], verify: bool = True) -> Dataset:
    """A release as a :class:`Dataset` (labels from its qrels), after :func:`verify_release`
    (a release with problems raises :class:`ReleaseError` listing them)."""
    folder = release_folder(spec)
    m = read_manifest(folder)
    if verify:
        problems = verify_release(folder)
        if problems:
            raise ReleaseError(f"the release in {folder} fails its checks:\n- " + "\n- ".join(problems))
    return _load(folder, m)


def read_judgments(folder: str | os.PathLike[str]) -> pd.DataFrame | None:
    """The release's pooled control judgments (``control/judgments.tsv``), or None."""
    path = Path(folder) / CONTROL_JUDGMENTS
    if not path.is_file():
        return None
    j = pd.read_csv(
        path,
        sep="\t",
        dtype={"qid": str, "pid": str, "answer": str, "corpus": str, "source": str},
        keep_default_na=False,
    )
    missing = [c for c in JUDGMENT_COLUMNS if c not in j.columns]
    if missing:
        raise DataFormatError(path, f"missing columns {missing}")
    j["label"] = j["label"].astype(int)
    return j


def _control_ids(folder: Path) -> set[str]:
    return set(control_texts(folder))


def installed_release(ds: Dataset) -> Path | None:
    """The installed copy of the release a built dataset came from (None: built here)."""
    folder = ds.meta.get("folder")
    rel = (ds.meta.get("built") or {}).get("release")
    return Path(folder) if folder and rel else None


# ---------------------------------------------------------------------------------- installing
def install_release(spec: str | os.PathLike[str], name: str, overwrite: bool = False,
                    log: Callable[[str], None] = print) -> Path:
    """Put a verified release where notebooks 02–07 read a dataset, ``build/datasets/<name>``
    (their loader, :func:`~inferqa_utils.construction.store.load_built`, is the QUIT loader).
    The same release already there is reused; a build or another release there is replaced
    only with ``overwrite`` (else :class:`~inferqa_utils.construction.export_build.BuildConflictError`)."""
    from .export_build import BuildConflictError

    folder = release_folder(spec)
    load_release(folder)  # verified before anything is written
    digest = sha256_file(folder / MANIFEST)
    target = PATHS.datasets / name
    existing = target / "manifest.json"
    if existing.is_file():
        try:
            old = json.loads(existing.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            old = {}
        if (old.get("release") or {}).get("manifest_sha256") == digest:
            log(f"{target} holds this release already ({root_relative(folder)}): reusing it")
            return target
        what = (f"release {old['release'].get('folder')}" if old.get("release")
                else f"a build with fingerprint {old.get('fingerprint')}")
        if not overwrite:
            raise BuildConflictError(
                f"{target} holds {what}, not the release {root_relative(folder)}. To keep it, choose "
                "another dataset_name; to replace it, pass overwrite=True"
            )
        log(f"replacing {what} in {target} with the release {root_relative(folder)}")
    m = read_manifest(folder)
    with staged_dir(target) as tmp:
        shutil.copytree(folder, tmp, dirs_exist_ok=True)
        (tmp / MANIFEST).unlink()
        installed = {
            **(m.get("build") or {}),
            "release": {
                "folder": root_relative(folder),
                "manifest_sha256": digest,
                "name": m.get("name"),
                "code": m.get("code"),
                "created": m.get("created"),
                "control": (m.get("parameters") or {}).get("control"),
            },
        }
        (tmp / "manifest.json").write_text(json.dumps(installed, indent=1, default=str), encoding="utf-8")
    log(f"installed the release {root_relative(folder)} into {target}")
    return target




# --------------------------------------------------------------------- sample rebuild, agreement
def sample_questions(ds: Dataset, n: int, split: str = "test", seed: int = SEED) -> list[str]:
    """A seeded sample of ``n`` questions of ``split`` (the split's order kept)."""
    qids = list(ds.splits.get(split, []))
    if n >= len(qids):
        return qids
    keep = set(random.Random(f"{seed}:release-sample").sample(qids, n))
    return [q for q in qids if q in keep]


def sample_source(ds: Dataset, source: str) -> tuple[str, str]:
    """Where a sample of release ``ds`` is rebuilt from, and why: its ``source`` when this machine has
    it; for a named shared source that is absent (TriviaHG without ``../shared/data``), the release's
    own QUIT-shaped files (``quit:<release folder>``): the questions, answers and kept hints the
    build started from its source with, read again through every step."""
    from ..sources import source_absent

    if source_absent(source):
        folder = ds.meta.get("release") or ds.meta.get("folder")
        return (f"quit:{folder}", f"the source {source!r} is not on this machine (set INFERQA_SHARED_DATA): "
                                  "the sample is rebuilt from the release's own questions and kept hints")
    return source, f"rebuilt from the source {source!r}"


def sample_config(ds: Dataset, qids: list[str], name: str, split: str = "test",
                  source: str | None = None) -> BuildConfig:
    """The release's own build parameters, restricted to ``qids`` (their split fixed to the
    release's), rebuilt from the source end to end (``source`` replaces the release's, see
    :func:`sample_source`): convergence is judged again by the LLM (``convergence_stored=False``),
    the corpus holds the sample's passages only. Output under ``build/datasets/<name>`` (its own
    label checkpoint)."""
    from .build_config import BuildConfig

    params = {k: v for k, v in ((ds.meta.get("built") or {}).get("parameters") or {}).items()
              if k not in ("output_dir", "verification_file")}
    if source is not None:
        params["source"] = source
    changes: dict[str, Any] = dict(
        questions=list(qids),
        fixed_splits={q: split for q in qids},
        corpus_all_source=False,
        convergence_stored=False,
        label_splits=[split],
        name=name, max_questions=None, n_train=None, n_test=None,
    )
    folder = ds.meta.get("folder") or ds.meta.get("release")
    if folder and (Path(folder) / "verification.json").is_file():  # the decisions the release applied
        changes["verification_file"] = str(Path(folder) / "verification.json")
    return BuildConfig.from_manifest(params, **changes)


@dataclass
class Agreement:
    """A sample rebuilt from the source beside the release (:func:`agreement`)."""

    #: one row per sample question: kept hints, parametric, pool, label counts on both sides
    questions: pd.DataFrame
    #: one row per passage compared (same text on both sides): both labels and answers
    passages: pd.DataFrame
    #: measure, value, lo, hi, n — passage agreement (%), Cohen's κ, label-2 counts, …
    summary: pd.DataFrame

    @property
    def disagreements(self) -> pd.DataFrame:
        return self.passages[~self.passages["agree"]]


def agreement(sample: BuildResult, release: Dataset, seed: int = SEED) -> Agreement:
    """Compare the sample rebuild with the release, question by question: whether the same hints
    were kept, the parametric decision, the answer pool, and the label of every passage whose text
    is the same on both sides (a passage id names hint positions, so texts are matched, not ids).
    Passage agreement and Cohen's κ get 95 % intervals from resampling questions
    (:func:`~inferqa_utils.measure.uncertainty.clustered_ci`)."""
    from ..measure.uncertainty import clustered_ci, cohen_kappa

    new = sample.dataset
    par = (
        set(sample.parametric.loc[sample.parametric["correct"].astype(bool), "qid"])
        if len(sample.parametric)
        else set()
    )
    qrows, prows = [], []
    reasons = dict(zip(sample.questions["qid"], sample.questions["reason"], strict=True))
    for qid in sample.config.questions or []:
        rq, nq = release.questions.get(qid), new.questions.get(qid)
        row = {"qid": qid, "in release": rq is not None, "rebuilt": nq is not None}
        if rq is None or nq is None:
            qrows.append(
                {
                    **row,
                    "note": f"not rebuilt: {reasons.get(qid, '')}" if nq is None else "not in the release",
                }
            )
            continue
        by_text = {p.text: p for p in release.passages_of(qid)}
        rgold = {normalize_answer(a) for a in rq.answers}
        ngold = {normalize_answer(a) for a in nq.answers}
        compared = 0
        for p in new.passages_of(qid):
            rp = by_text.get(p.text)
            if rp is None:
                continue
            compared += 1
            rl, nl = release.qrels.get(qid, {}).get(rp.pid), new.qrels.get(qid, {}).get(p.pid)
            prows.append(
                {
                    "qid": qid,
                    "pid": rp.pid,
                    "passage": p.text,
                    "release label": rl,
                    "rebuilt label": nl,
                    "release answers": " | ".join((release.generations.get(rp.pid) or {}).values()),
                    "rebuilt answers": " | ".join((new.generations.get(p.pid) or {}).values()),
                    "agree": rl == nl,
                }
            )
        qrows.append({**row, "same kept hints": rq.hint_texts == nq.hint_texts, "parametric now": qid in par,
                      "passages compared": compared,
                      "release label 2": sum(v == 2 for v in release.qrels.get(qid, {}).values()),
                      "rebuilt label 2": sum(v == 2 for v in new.qrels.get(qid, {}).values()),
                      "same answer pool": rgold == ngold,
                      "pool only in release": " | ".join(sorted(rgold - ngold)),
                      "pool only rebuilt": " | ".join(sorted(ngold - rgold)), "note": ""})
    qdf, pdf = pd.DataFrame(qrows), pd.DataFrame(prows, columns=["qid", "pid", "passage", "release label",
                                                                 "rebuilt label", "release answers",
                                                                 "rebuilt answers", "agree"])
    summary = []
    if len(pdf):
        clusters = [g for _, g in pdf.groupby("qid", sort=False)]

        def agree(cs: list[pd.DataFrame]) -> float:
            return 100 * sum(int(c["agree"].sum()) for c in cs) / sum(len(c) for c in cs)

        def kappa(cs: list[pd.DataFrame]) -> float:
            both = pd.concat(cs)
            return cohen_kappa(list(both["release label"]), list(both["rebuilt label"]))

        for measure, stat in (("passage agreement (%)", agree), ("Cohen's kappa", kappa)):
            ci = clustered_ci(clusters, stat, seed=seed)
            summary.append({"measure": measure, "value": round(ci.value, 4), "lo": round(ci.lo, 4),
                            "hi": round(ci.hi, 4), "n": len(pdf), "questions": ci.n})
    rebuilt = qdf[qdf.get("rebuilt", pd.Series(dtype=bool)).astype(bool)] if len(qdf) else qdf
    for measure, col in (("questions with the same kept hints", "same kept hints"),
                         ("questions parametric now", "parametric now"),
                         ("questions with the same answer pool", "same answer pool")):
        if col in rebuilt:
            summary.append(
                {
                    "measure": measure,
                    "value": int(rebuilt[col].astype(bool).sum()),
                    "lo": None,
                    "hi": None,
                    "n": len(rebuilt),
                    "questions": len(qdf),
                }
            )
    for measure, col in (
        ("label-2 passages, release", "release label"),
        ("label-2 passages, rebuilt", "rebuilt label"),
    ):
        summary.append(
            {
                "measure": measure,
                "value": int((pdf[col] == 2).sum()) if len(pdf) else 0,
                "lo": None,
                "hi": None,
                "n": len(pdf),
                "questions": len(qdf),
            }
        )
    return Agreement(
        qdf, pdf, pd.DataFrame(summary, columns=["measure", "value", "lo", "hi", "n", "questions"])
    )


def quit_rule_differences(ds: Dataset) -> list[tuple[str, str, int, int]]:
    """Passages of labelled questions whose released label differs from the label a QUIT user
    computes from the release (2 iff some labeler's generated answer is in the answer pool,
    SQuAD-normalised; :func:`~inferqa_utils.sources.quit.load_quit`): ``(qid, pid, ours, quit)``.
    They exist where an answer guard refused an answer for one passage (e.g. copied from that
    passage) that the judge accepted for another, so it is in the pool."""
    labelers = list(((ds.meta.get("built") or {}).get("parameters") or {}).get("labelers") or [])
    out = []
    for qid, labs in ds.qrels.items():
        q = ds.questions.get(qid)
        if q is None:
            continue
        for pid, lab in labs.items():
            gens = ds.generations.get(pid) or {}
            if not gens:
                continue
            quit_label = (
                2 if any(exact_match(gens.get(m, ""), q.answers) for m in labelers if gens.get(m)) else 1
            )
            if lab in (1, 2) and quit_label != lab:
                out.append((qid, pid, lab, quit_label))
    return out


def released_judgments(ds: Dataset) -> pd.DataFrame | None:
    """The pooled control judgments shipped with the release a built dataset was installed from
    (notebook 02 reuses them and judges only what they lack), or None."""
    folder = installed_release(ds)
    return read_judgments(folder) if folder is not None else None
