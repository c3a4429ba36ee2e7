"""DisentangledQA's retriever (paper 003 §III-B; papers 001–003): topic first, then attribute.

* **Multi-view topic queries** (paper §III-B1): from the question, *entities* (paper: a
  pre-trained NER model), *nouns* (paper: NLTK POS tags NN*) and *n-grams* (paper: NLTK
  ``everygrams``, used with exact matching). No NER/POS models exist offline here, so
  :func:`entity_view` and :func:`noun_view` are rule-based stand-ins: entities = quoted strings and
  runs of capitalised words (not the question's first word, connectors such as *of*/*the*/*de*
  allowed inside); nouns = capitalised words and lower-case content words that are not stopwords,
  common verbs, adverbs in *-ly* or (for words longer than 5 letters) *-ed*/*-ing* forms; n-grams
  (:func:`ngram_view`) = 2..``max_n``-grams that neither start nor end with a stopword and occur
  verbatim in some passage (the exact-match filter, :class:`CorpusNgrams`).
* **Topic retrieval**: every view query is searched with BM25 (top-``topic_k``, paper 50; the
  paper searches Wikipedia *titles* — our passages have none, so their text is searched) and
  the lists are fused by reciprocal rank into the topic pool ``D_q`` (paper: a RoBERTa
  paragraph classifier reranks the union).
* **Masking** (paper Eq. 1, Fig. 5): the mask set ``M_q`` is the words of the topic — paper: the
  titles of ``D_q``; here the words of the question's entity view, stopwords removed — and
  :func:`mask_words` replaces them by ``[M]`` in the question and in every hint.
* **Attribute retrieval** (paper §III-B2): the masked hints of the topic pool's passages are
  embedded with a dense encoder (paper: a fine-tuned Sentence-Transformer; here MiniLM as is) and
  scored by cosine with the masked question; the top-``top_h`` hints (paper: 15 sentences) are
  the evidence. :func:`passages_from_hints` turns hint scores into a passage ranking: primary score
  = sum of the passage's hints' scores among the top-``top_h``, secondary = the mean score of all
  its hints, then the topic-pool order.

The reasoning-strategy classifier and the iterative pseudo-label training of paper 003 need
training data we do not have; they are not reproduced.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..ir.lexical import EmptyQueryError
from ..ir.runs import ids_to_run_list
from ..ir.trec import Run
from ..retrieval.fusion import identity_of, reciprocal_rank_fusion
from .common import MethodResult, MethodSetup, cached_method, method_key, split_sentences

if TYPE_CHECKING:
    from ..llm.embeddings import Embedder

def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words("""
a about above after again against all also am an and any are as at be because been before being below between
both but by can could did do does doing down during each few for from further had has have having he her here
hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of
off on once only or other our ours out over own same she should so some such than that the their theirs them
then there these they this those through to too under until up upon very was we were what when where which
while who whom whose why will with would you your yours known called named usually often also one first
""")
WH_WORDS = _words("what which who whom whose when where why how")
#: frequent verbs of quiz questions (the noun view drops them; no POS tagger offline)
COMMON_VERBS = _words("""
is are was were be been became become becomes made make makes wrote write writes won win wins led lead leads
held hold holds gave give gives took take takes found finds came come comes went go goes used use uses called
call calls known know knows said say says ruled rule rules sent send sends built build builds helped help
helps reveal reveals revealed introduced introduce produced produce worked work works released release covers
cover stands stand stretches stretch measures measure lies lie lying straddles appears appear resembles
resemble forbids forbid opens open hangs hang provided provide invented invent launched launch sealed seal
concluded conclude fell fall died die born says did does do has have had lived live served serve played play
named name
""")
CONNECTORS = _words("of the de da del der di von van la le du al el")

_TOKEN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9'’\-]*[A-Za-z0-9])?")
_QUOTED = re.compile(r"(?:(?<=[\s(])|^)['‘\"“]([^\n]{2,}?)['’\"”](?=[\s,.;:!?)]|$)")


def _strip_possessive(word: str) -> str:
    return re.sub(r"['’]s?$", "", word)


def tokens(text: str) -> list[str]:
    """Word tokens (letters/digits with inner apostrophes and hyphens), possessive ``'s`` stripped."""
    return [w for w in (_strip_possessive(t) for t in _TOKEN.findall(text)) if w]


def entity_view(question: str) -> list[str]:
    """Entity queries: quoted strings, then runs of capitalised words (not the first word of the
    question; lower-case connectors such as *of*/*the*/*de* may join capitalised words). Order of
    appearance; duplicates (same lower-cased tokens) dropped."""
    out = [q.strip() for q in _QUOTED.findall(question)]
    toks = tokens(question)
    i = 1  # the first word is capitalised by grammar
    while i < len(toks):
        if toks[i][0].isupper() and toks[i].lower() not in STOPWORDS | WH_WORDS:
            j = i + 1
            while j < len(toks):
                if toks[j][0].isupper() or toks[j][0].isdigit():
                    j += 1
                elif toks[j].lower() in CONNECTORS and j + 1 < len(toks) and toks[j + 1][0].isupper():
                    j += 2
                else:
                    break
            out.append(" ".join(toks[i:j]))
            i = j
        else:
            i += 1
    kept: dict[str, str] = {}
    for e in out:
        kept.setdefault(" ".join(tokens(e)).lower(), e)
    return list(kept.values())


def _is_noun_like(word: str) -> bool:
    low = word.lower()
    if low in STOPWORDS or low in WH_WORDS or low in COMMON_VERBS or len(low) < 3 or low.isdigit():
        return False
    if word[0].isupper():
        return True
    if low.endswith("ly"):
        return False
    return not (len(low) > 5 and (low.endswith("ed") or low.endswith("ing")))


def noun_view(question: str) -> list[str]:
    """Noun queries (rule-based stand-in for POS tags NN/NNS/NNP/NNPS, see the module docstring),
    lower-cased, order of appearance, no duplicates. The question's first word is skipped."""
    out: list[str] = []
    for w in tokens(question)[1:]:
        if _is_noun_like(w) and w.lower() not in out:
            out.append(w.lower())
    return out


class CorpusNgrams:
    """The set of lower-cased token n-grams (n = 1..``max_n``) of a corpus: the exact-match filter
    of the n-gram view (an n-gram is kept only if some passage contains it verbatim)."""

    def __init__(self, texts: Iterable[str], max_n: int = 3) -> None:
        self.max_n = max_n
        self.grams: set[str] = set()
        for t in texts:
            toks = [w.lower() for w in tokens(t)]
            for n in range(1, max_n + 1):
                self.grams.update(" ".join(toks[i:i + n]) for i in range(len(toks) - n + 1))

    def __contains__(self, gram: object) -> bool:
        return gram in self.grams


def ngram_view(
    question: str, max_n: int = 3, keep: Callable[[str], bool] | CorpusNgrams | None = None
) -> list[str]:
    """Lower-cased n-grams of the question for n = 2..``max_n`` that neither start nor end with a
    stopword or question word, kept when ``keep`` accepts them (a :class:`CorpusNgrams` or a
    predicate; ``None`` keeps all). Unigrams are the noun view's job."""
    toks = [w.lower() for w in tokens(question)]
    stop = STOPWORDS | WH_WORDS
    out: list[str] = []
    for n in range(2, max_n + 1):
        for i in range(len(toks) - n + 1):
            g = toks[i:i + n]
            if g[0] in stop or g[-1] in stop:
                continue
            gram = " ".join(g)
            if gram in out:
                continue
            if keep is None or (gram in keep if isinstance(keep, CorpusNgrams) else keep(gram)):
                out.append(gram)
    return out


def query_views(question: str, views: Sequence[str] = ("entities", "nouns", "ngrams"), max_n: int = 3,
                keep: Callable[[str], bool] | CorpusNgrams | None = None) -> dict[str, list[str]]:
    """The multi-view query set of one question: ``{"entities": [...], "nouns": [...], "ngrams":
    [...], "question": [question]}`` restricted to ``views``."""
    makers = {"entities": lambda: entity_view(question), "nouns": lambda: noun_view(question),
              "ngrams": lambda: ngram_view(question, max_n, keep), "question": lambda: [question]}
    unknown = [v for v in views if v not in makers]
    if unknown:
        raise ValueError(f"unknown view(s) {unknown}; choose from {sorted(makers)}")
    return {v: makers[v]() for v in views}


MASK = "[M]"


def mask_set(question: str) -> set[str]:
    """The mask words ``M_q``: lower-cased words of the question's entity view, stopwords removed."""
    return {w.lower() for e in entity_view(question) for w in tokens(e)} - STOPWORDS - CONNECTORS


def mask_words(text: str, words: Iterable[str], token: str = MASK) -> str:
    """Replace every word of ``text`` whose lower-cased, possessive-stripped form is in ``words``
    by ``token``; a run of masks separated only by white space becomes one mask. Punctuation and
    other words are kept as they are."""
    words = {w.lower() for w in words}
    if not words:
        return text
    masked = _TOKEN.sub(
        lambda m: token if _strip_possessive(m.group(0)).lower() in words else m.group(0), text
    )
    esc = re.escape(token)
    return re.sub(rf"{esc}(?:\s+{esc})+", token, masked)


def passages_from_hints(hint_scores: Mapping[str, float], units: Mapping[str, Sequence[str]], top_h: int = 15,
                        order: Sequence[str] = ()) -> list[tuple[str, float]]:
    """Rank the passages of ``units`` (pid → its hints) from hint scores: primary = sum of the
    scores of its hints among the ``top_h`` best hints; secondary = mean score of its hints; then
    position in ``order`` (then pid). Returns ``(pid, score)`` best first with rank-based scores
    n, n − 1, …, 1 (so that a TREC file written from it keeps the order)."""
    best = sorted(hint_scores, key=lambda h: (-hint_scores[h], h))[:top_h]
    top = {h: hint_scores[h] for h in best}
    pos = {p: i for i, p in enumerate(order)}
    keyed = []
    for pid, hs in units.items():
        hs = list(dict.fromkeys(hs))
        primary = sum(top.get(h, 0.0) for h in hs)
        secondary = sum(hint_scores.get(h, 0.0) for h in hs) / max(1, len(hs))
        keyed.append((pid, primary, secondary))
    keyed.sort(key=lambda x: (-x[1], -x[2], pos.get(x[0], len(pos)), x[0]))
    return ids_to_run_list([pid for pid, _, _ in keyed])


def _search(retriever: Any, query: str, k: int) -> list[str]:
    try:
        return [p for p, _ in retriever.search({"q": query}, k).get("q", [])]
    except EmptyQueryError:
        return []


@dataclass(frozen=True)
class DisentangledParams:
    """The parameters of a disentangled run (module docstring; ``paper:`` the seed paper's value)."""

    #: whether the topic stage runs; ``False``: every passage is a candidate (paper Table VI "w/o topic
    #: retriever")
    use_topic: bool = True
    #: the topic query views
    views: Sequence[str] = ("entities", "nouns", "ngrams")
    #: longest n-gram of the n-gram view
    max_n: int = 3
    #: BM25 depth per view query (paper: 50)
    topic_k: int = 50
    #: passages of the fused topic pool
    topic_pool: int = 100
    #: evidence hints kept (paper: 15 sentences)
    top_h: int = 15
    #: passages of the run per question
    depth: int = 100


def disentangled_run(questions: Mapping[str, str], corpus: Mapping[str, str], retriever: Any,
                     embedder: Embedder, units_of: Callable[[str], Sequence[str]] | None = None,
                     params: DisentangledParams = DisentangledParams(),
                     ngrams: CorpusNgrams | None = None) -> tuple[Run, dict[str, Any]]:
    """The disentangled retriever (module docstring). ``retriever``: BM25 with ``search``;
    ``units_of(pid)``: the hints of a passage (default: its sentences); ``ngrams``: the corpus's
    n-grams when already counted (default: counted here when the n-gram view is used)."""
    use_topic, views, max_n, topic_k = params.use_topic, params.views, params.max_n, params.topic_k
    topic_pool, top_h, depth = params.topic_pool, params.top_h, params.depth
    units_of = units_of or (lambda pid: split_sentences(corpus[pid]))
    if use_topic and ngrams is None and "ngrams" in views:
        ngrams = CorpusNgrams(corpus.values(), max_n)
    run: Run = {}
    details: dict[str, Any] = {}
    for qid, q in questions.items():
        info: dict[str, Any] = {}
        if use_topic:
            vq = query_views(q, views, max_n, ngrams)
            info["views"] = vq
            lists = [_search(retriever, text, topic_k) for v in views for text in vq[v]]
            lists = [x for x in lists if x] or [_search(retriever, q, topic_k)]
            fused = reciprocal_rank_fusion([{"q": [(p, 0.0) for p in x]} for x in lists], k=topic_pool)
            pool = [p for p, _ in fused.get("q", [])]
        else:
            pool = list(corpus)
        words = mask_set(q)
        q_masked = mask_words(q, words)
        units = {pid: [h.strip() for h in units_of(pid) if h.strip()] for pid in pool}
        hints = list(dict.fromkeys(h for hs in units.values() for h in hs))
        scores: dict[str, float] = {}
        if hints:
            qv = embedder.encode([q_masked], role="query", progress=False)[0]
            hv = embedder.encode([mask_words(h, words) for h in hints], role="passage", progress=False)
            scores = {h: float(s) for h, s in zip(hints, hv @ qv, strict=True)}
        run[qid] = passages_from_hints(scores, units, top_h, pool)[:depth]
        best = sorted(scores, key=lambda h: (-scores[h], h))[:min(top_h, 5)]
        info.update({"mask_words": sorted(words), "masked_question": q_masked, "topic_pool": len(pool),
                     "top_hints": [[mask_words(h, words), round(scores[h], 4)] for h in best]})
        details[qid] = info
    return run, details


VERSION = 1


def disentangled_method(name: str, setup: MethodSetup, retriever: Any, embedder: Embedder,
                        units_of: Callable[[str], Sequence[str]] | None = None,
                        **params: Any) -> MethodResult:
    """:func:`disentangled_run` over the questions of ``setup`` as one cached method run
    (``params``: fields of :class:`DisentangledParams` by keyword; the run's key names the ones
    given, the others take their defaults)."""

    questions, corpus = setup.questions, setup.corpus
    p = DisentangledParams(**params)
    key = method_key(name, corpus, questions, VERSION, retriever=getattr(retriever, "name", "?"),
                     retriever_identity=identity_of(retriever), embedder=embedder.identity,
                     **{k: list(v) if isinstance(v, tuple) else v for k, v in params.items()})
    return cached_method(name, setup.out_dir, key,
                         lambda: disentangled_run(questions, corpus, retriever, embedder, units_of, p),
                         len(questions))
