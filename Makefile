# make demo / make test each do all set-up on a fresh machine, without root.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS ?= dev,fast
# torch for the lm/neural extras: any release in this range; TORCH_INDEX picks another index when
# the registry's default build is not wanted (e.g. https://download.pytorch.org/whl/cpu, see CONTRIBUTING.md)
TORCH_SPEC ?= torch>=2.6
TORCH_INDEX ?=
# two pytest-xdist workers; tests/conftest.py keeps each test file on one worker (its module fixtures are
# built once) and every torch-based file on the same worker (only that one imports torch)
WORKERS ?= 2
PYTEST := $(BIN)/python -m pytest -q -p no:cacheprovider -n $(WORKERS) --dist loadgroup

.PHONY: demo test test-fast lint install install-full bench clean release-check

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

install: $(STAMP)

# Full set-up for the test suite: core + dev + dask + torch + lm/neural extras + numba (fast) + MeCab
# tokenizers (ja, ko) + SentencePiece (spm: spBLEU). torch comes first so that the extras' torch>=2.1 is
# already satisfied: the torch in the venv if any; else a torch wheel already on this machine (pip's
# find-links, no download; its dependencies come from the registry in the next step); else torch from the
# registry.
$(VENV)/.installed-full: $(STAMP)
	$(BIN)/python -c "import torch" 2>/dev/null \
		|| $(BIN)/pip install --quiet --no-index --no-deps "$(TORCH_SPEC)" 2>/dev/null \
		|| $(BIN)/pip install --quiet $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX)) "$(TORCH_SPEC)"
	$(BIN)/pip install --quiet -e ".[dev,dask,lm,neural,fast,ja,ko,spm,langid]"
	# unbabel-comet pins numpy<2 / transformers<5 / torchmetrics<0.11 (see docs/neural.md): its code runs on the
	# versions above, so install it without its pins; its runtime deps are in the neural extra.
	$(BIN)/pip install --quiet --no-deps "unbabel-comet==2.2.7"
	touch $@

install-full: $(VENV)/.installed-full

demo: $(STAMP)
	$(BIN)/xleval demo --out demo-output

# Lint (on the full install, so mypy sees every extra's packages), then the whole suite (slow tests
# included). The browser test needs Chromium: it skips without it, except under CI=true (.ci/run installs
# Chromium and sets CI=true).
# The budget (issue 38): under 30 minutes of wall time on 2 idle cores from a fresh clone; the last lines
# print the 25 slowest tests and the wall time of lint + suite.
test: $(VENV)/.installed-full
	@start=$$(date +%s); rc=0; \
	$(MAKE) --no-print-directory lint || rc=1; \
	$(PYTEST) --durations=25 $(PYTEST_ARGS) || rc=1; \
	echo "make test: lint + suite took $$(( $$(date +%s) - start )) s of wall time"; exit $$rc

# The suite without slow tests, on the light install (extras that are missing skip their tests).
test-fast: $(STAMP)
	$(PYTEST) -m "not slow" $(PYTEST_ARGS)

# ruff and mypy (configured in pyproject.toml: mypy checks src/xleval; both come with the dev extra, in the
# default EXTRAS and in install-full). Part of `make test`; both always run, then the status is set.
lint: $(STAMP)
	@rc=0; $(BIN)/ruff check src tests benchmarks examples || rc=1; $(BIN)/mypy || rc=1; exit $$rc

bench: $(STAMP)
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

# Build the wheel and sdist (the wheel from the sdist), install the wheel alone in a fresh venv under /tmp,
# and smoke-test it there: --help, demo, calibrate fit/apply on the demo data, no heavy import.
RELEASE_DIR ?= /tmp/xleval-release-check
release-check: $(STAMP)
	rm -rf dist $(RELEASE_DIR)
	$(BIN)/python -m build --outdir dist .
	$(PY) -m venv $(RELEASE_DIR)/venv
	$(RELEASE_DIR)/venv/bin/pip install --quiet dist/xleval-*.whl
	mkdir -p $(RELEASE_DIR)/smoke
	cd $(RELEASE_DIR)/smoke && ../venv/bin/xleval --help >/dev/null
	cd $(RELEASE_DIR)/smoke && ../venv/bin/xleval --version
	# one version source: the wheel's metadata, the installed code and the source tree agree
	cd $(RELEASE_DIR)/smoke && ../venv/bin/python -c 'import importlib.metadata as m, sys, xleval; \
		src = open(sys.argv[1]).read().split("__version__ = ")[1].split()[0].strip(chr(34)); \
		assert m.version("xleval") == xleval.__version__ == src, (m.version("xleval"), xleval.__version__, src)' \
		$(CURDIR)/src/xleval/__init__.py
	cd $(RELEASE_DIR)/smoke && ../venv/bin/xleval demo --out demo >/dev/null
	cd $(RELEASE_DIR)/smoke && ../venv/bin/xleval calibrate fit demo/data.parquet --score metric --by lp -o lgn.json --format json >/dev/null
	cd $(RELEASE_DIR)/smoke && ../venv/bin/xleval calibrate apply lgn.json demo/data.parquet -o calibrated.tsv --format json >/dev/null
	cd $(RELEASE_DIR)/smoke && ../venv/bin/python -c "import pandas as pd; d = pd.read_parquet('demo/data.parquet'); \
		c = pd.read_csv('calibrated.tsv', sep='\t'); assert len(c) == len(d) and c['metric_lgn'].notna().all(), 'smoke'"
	cd $(RELEASE_DIR)/smoke && { ../venv/bin/xleval calibrate fit missing.tsv --score metric -o x.json 2>err.txt; test $$? -eq 2; } \
		&& test "$$(wc -l < err.txt)" -eq 1
	cd $(RELEASE_DIR)/smoke && ../venv/bin/python $(CURDIR)/tests/import_check.py
	@echo "release-check passed: $$(ls dist)"

clean:
	rm -rf $(VENV) build dist *.egg-info demo-output
