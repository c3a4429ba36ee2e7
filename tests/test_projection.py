"""Projecting a run's time on this host (inferqa_utils.record.projection): hand-checked projections from a
written reference record, the rate cache, and the probe on a real engine."""

from __future__ import annotations

import json

import pytest

from inferqa_utils.record import projection

REFERENCE = {
    "commit": "abc1234", "date": "2026-11-27T10:00:00+00:00",
    "machine": {"cpus": 2, "cpu_model": "AMD EPYC"},
    "rates": {"big": {"prefill_tok_s": 40.0, "decode_tok_s": 10.0},
              "small": {"prefill_tok_s": 80.0, "decode_tok_s": 20.0}},
    "notebooks": {
        # floor on the reference: 4000/40 + 100/10 + 800/80 = 120 s; model seconds 150 → efficiency 1.25
        "03_reranking": {"seconds": 200.0, "llm": {
            "big": {"evaluated": 4000, "generated": 100, "seconds": 100.0},
            "small": {"evaluated": 800, "generated": 0, "seconds": 50.0}}},
        "02_retrieval": {"seconds": 30.0, "llm": {}},
    },
}


def test_projection_scales_tokens_by_this_hosts_rates_and_the_rest_by_its_slowdown():
    host = {"big": {"prefill_tok_s": 20.0, "decode_tok_s": 5.0},  # half the reference rates
            "small": {"prefill_tok_s": 80.0, "decode_tok_s": 20.0}}  # the same
    got = projection.project(REFERENCE, host)
    # 03: floor here 4000/20 + 100/5 + 800/80 = 230 s × 1.25 = 287.5; the 50 s outside the models ×
    # slowdown mean(40/20, 80/80) = 1.5 → 75 s
    assert got["03_reranking"] == pytest.approx(287.5 + 75.0)
    assert got["02_retrieval"] == pytest.approx(30.0 * 1.5)
    assert projection.project(REFERENCE, REFERENCE["rates"])["03_reranking"] == pytest.approx(200.0)
    assert list(projection.project(REFERENCE, host, ["02_retrieval"])) == ["02_retrieval"]
    # a warm start replays the model calls: only the 50 s outside the models × 1.5
    warm = projection.project(REFERENCE, host, replayed=True)
    assert warm == {"03_reranking": pytest.approx(75.0), "02_retrieval": pytest.approx(45.0)}
    announced = projection.Projection("p", REFERENCE, host, list(warm), replayed=True).announce()
    assert "a warm start" in announced[-2]


def test_projection_announces_a_slow_host_and_gives_an_eta(tmp_path, monkeypatch):
    monkeypatch.setenv(projection.RATES_ENV, str(tmp_path / "rates.json"))
    path = tmp_path / "reference.json"
    path.write_text(json.dumps({"profiles": {"p": REFERENCE}}), encoding="utf-8")
    host = {"big": {"prefill_tok_s": 20.0, "decode_tok_s": 5.0},
            "small": {"prefill_tok_s": 40.0, "decode_tok_s": 10.0}}
    lines: list[str] = []
    p = projection.start("p", ["02_retrieval", "03_reranking"], lines.append, reference_path=path,
                         measure=lambda m: dict(host[m]))
    text = "\n".join(lines)
    assert "slower than the reference host (0.50× its prefill rate)" in text
    assert ("big: prefill 20.0 tok/s, decode 5.0 tok/s (0.50× and 0.50× the reference host's 40.0 / 10.0)"
            in text)
    assert "the reference host (2 CPUs, AMD EPYC, commit abc1234, 2026-11-27) took 4 min" in text
    projected = projection.minutes(p.per_notebook["03_reranking"])
    assert p.before("03_reranking", 2, 2).endswith(f"projected {projected}")
    after = p.after("02_retrieval", 61.0)
    left = projection.minutes(p.per_notebook["03_reranking"])  # only the notebooks left, not every one
    assert f"done in 61.0 s (projected 60 s); 1 left, projected {left}, ETA" in after
    assert left != projection.minutes(p.total)
    p.after("03_reranking", 400.0)
    s = p.summary()
    assert s["actual_s"] == 461.0
    assert s["projected_s"] == pytest.approx(sum(p.per_notebook.values()), abs=0.1)
    assert p.closing()[0].startswith("[inferqa] projected ")


def test_no_record_no_measurement(tmp_path):
    lines: list[str] = []

    def refuse(model):
        raise AssertionError("nothing to project: no rates are measured")

    p = projection.start("nobody", ["00_quickstart"], lines.append, reference_path=tmp_path / "none.json",
                         measure=refuse)
    assert p.per_notebook == {} and "no recorded run of profile 'nobody'" in lines[0]
    assert p.closing() == []


def test_rates_are_measured_once_per_host_and_model(tmp_path, monkeypatch):
    """The real probe on SmolLM2, then the cache: a second call measures nothing."""
    monkeypatch.setenv(projection.RATES_ENV, str(tmp_path / "rates.json"))
    lines: list[str] = []
    first = projection.host_rates(["smollm2-135m"], lines.append)
    r = first["smollm2-135m"]
    assert r["prefill_tok_s"] > 0 and r["decode_tok_s"] > 0 and r["chunk"] == projection.PROBE["chunk"]
    assert "measured smollm2-135m on this host" in lines[0]

    def refuse(model):
        raise AssertionError(f"{model} was measured again")

    again = projection.host_rates(["smollm2-135m"], lines.append, refuse)
    assert again == first and len(lines) == 1


def test_minutes():
    assert [projection.minutes(s) for s in (40, 89.6, 119, 150, 3599, 4320)] == [
        "40 s", "90 s", "119 s", "2 min", "1 h 00 min", "1 h 12 min"]


def test_reference_from_run_keeps_each_notebooks_seconds_and_llm_use():
    """A reference record from a run manifest and its LLM cost log: per notebook its seconds and, per
    model that made calls, the tokens evaluated and generated and the seconds inside it."""
    manifest = {"run_id": "r1", "git": {"commit": "c" * 40}, "finished": "2026-11-29T05:00:00",
                "timings_s": {"02_retrieval": 60.0, "03_reranking": 120.0, "total": 180.0}}
    log = [{"stage": "03_reranking", "model": "big", "model_calls": 4, "prompt_tokens": 800,
            "generated_tokens": 40, "seconds": 30.0},
           {"stage": "03_reranking", "model": "small", "model_calls": 0, "prompt_tokens": 0,
            "generated_tokens": 0, "seconds": 0.0}]
    ref = projection.reference_from_run(manifest, log, {"big": {"prefill_tok_s": 40.0, "decode_tok_s": 10.0,
                                                               "measured": "x"}})
    assert (ref["run"], ref["commit"], ref["date"]) == ("r1", "c" * 40, "2026-11-29T05:00:00")
    assert ref["rates"] == {"big": {"prefill_tok_s": 40.0, "decode_tok_s": 10.0}}
    assert ref["notebooks"] == {"02_retrieval": {"seconds": 60.0, "llm": {}},
                                "03_reranking": {"seconds": 120.0, "llm": {"big": {
                                    "evaluated": 800, "generated": 40, "seconds": 30.0}}}}
