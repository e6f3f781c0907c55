# make demo / make test each do all set-up on a fresh machine.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS ?= dev,fast

.PHONY: demo test test-fast install install-full bench clean release-check chromium

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

install: $(STAMP)

# Full set-up for the test suite: core + dev + dask + the CPU torch build that lies on disk + lm/neural extras
# + numba (fast) + MeCab tokenizers (ja, ko).
$(VENV)/.installed-full: $(STAMP)
	$(BIN)/pip install --quiet "torch==2.13.0"
	$(BIN)/pip install --quiet -e ".[dev,dask,lm,neural,fast,ja,ko]"
	# unbabel-comet pins numpy<2 / transformers<5 / torchmetrics<0.11 (see docs/neural.md): its code runs on the
	# versions above, so install it without its pins; its runtime deps are in the neural extra.
	$(BIN)/pip install --quiet --no-deps "unbabel-comet==2.2.7"
	touch $@

install-full: $(VENV)/.installed-full

demo: $(STAMP)
	$(BIN)/xleval demo --out demo-output

# Headless Chromium for the report's browser test (Debian package; skipped when already installed).
chromium:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

test: $(VENV)/.installed-full chromium
	$(BIN)/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" $(PYTEST_ARGS)

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
