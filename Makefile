# memlens developer commands.  Each target creates .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test check lint types imports fmt bench snapshots screenshots clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

## Open the app on a fresh temporary copy of the bundled demo vaults.
demo: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[semantic]'
	$(BIN)/memlens demo

## Run the whole suite: lint, types, import contract and tests.
test: $(STAMP)
	$(BIN)/ruff check core tui tests bench
	$(BIN)/ruff format --check core tui tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -n 2 -q

check: test

lint: $(STAMP)
	$(BIN)/ruff check core tui tests bench

types: $(STAMP)
	$(BIN)/mypy

## The import contracts in pyproject.toml: core's layers, no cycles, the core/UI wall.
imports: $(STAMP)
	$(BIN)/lint-imports --no-cache

fmt: $(STAMP)
	$(BIN)/ruff format core tui tests bench
	$(BIN)/ruff check --fix core tui tests bench

## Regenerate SVG snapshots after an intended change of the screens.
snapshots: $(STAMP)
	$(BIN)/python -m pytest tests/tui -q --snapshot-update

## Regenerate screenshots/ (README pictures) from the demo vaults.
## browser.png needs chromium and chromedriver (the browser test takes it).
screenshots: $(STAMP)
	$(BIN)/python -m memlens.tui.screenshots screenshots
	MEMLENS_BROWSER_SCREENSHOT=$(CURDIR)/screenshots/browser.png \
	  $(BIN)/python -m pytest tests/e2e/test_browser.py -q -p no:cacheprovider

## Benchmarks at 1k/10k memories (bench/README.md); BENCH_ARGS="--sizes 100000" for the big one.
## Then the relevance benchmark: judged queries over the test vaults (MRR, nDCG@10, recall@5).
BENCH_ARGS ?=
bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)
	$(BIN)/python -m bench relevance

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache .grimp_cache build *.egg-info
