# `make demo` and `make test` work on a fresh clone: each creates .venv and installs logparse.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast check venv core core-bench browser prometheus lnav ray reports bench clean

CORE_SOURCES := core/Cargo.toml core/Cargo.lock $(wildcard core/src/*.rs)
CORE_STAMP := $(VENV)/.core-built

# The virtualenv with logparse installed editable; pip builds the Rust core (core/) with maturin.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP) $(CORE_STAMP)

# Rebuild the compiled core (logparse/_core) when its Rust sources change.
$(CORE_STAMP): $(STAMP) $(CORE_SOURCES)
	$(VENV)/bin/maturin develop --quiet --release --manifest-path core/Cargo.toml --features python
	touch $(CORE_STAMP)

venv: $(CORE_STAMP)
core: $(CORE_STAMP)

# The fleet tests and `make bench`'s fleet line run a local Ray (the `ray` extra, read from
# pyproject.toml so it is written once) and the docs' Dask snippet a local Dask: installed for them
# only, beside the editable logparse (not reinstalled: no core rebuild).
RAY_STAMP := $(VENV)/.ray-installed
$(RAY_STAMP): $(STAMP)
	$(PY) -m pip install --quiet $$($(PY) -c "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['ray']))") 'dask>=2024.1'
	touch $(RAY_STAMP)
ray: $(RAY_STAMP)

## demo: ingest the bundled GPUStack-mirror fixture, then print its post-mortem
demo: $(CORE_STAMP)
	$(PY) -m logparse ingest fixtures/vllm/gpustack-64k.log --out .demo-out
	$(PY) -m logparse summary fixtures/vllm/gpustack-64k.log

## check: formatting, lint, types (Python and Rust) and the grammars' own check
check: $(CORE_STAMP)
	$(VENV)/bin/ruff format --check logparse
	$(VENV)/bin/ruff check logparse
	$(VENV)/bin/mypy
	cd core && cargo fmt --check
	cd core && cargo clippy --quiet --release --all-targets --features python -- -D warnings
	$(PY) -m logparse patterns check

## test-fast: the suite without the tests marked slow (the inner loop; under 2 minutes)
test-fast: $(CORE_STAMP)
	$(PY) -m pytest -q -m "not slow"

## test: every check, the Rust crate's tests and the whole suite (installs Debian chromium for the
## report's browser test and Debian prometheus and lnav for the export tests)
test: check browser prometheus lnav ray
	$(PY) -m logparse.engine.spec core/target/bench
	cd core && cargo test --quiet --release
	$(PY) -m pytest -q

# The HTML report is checked in a real headless browser; install it when missing and possible.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium for the browser test..."; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || echo "chromium could not be installed: the browser test will be skipped"; \
	  else echo "chromium missing and not root: the browser test will be skipped"; fi; }

# `logparse export` is checked with Prometheus's own promtool and server; install them when missing and possible.
prometheus:
	@command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing prometheus for the export tests..."; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq prometheus >/dev/null) \
	      || echo "prometheus could not be installed: the export tests that need it will be skipped"; \
	  else echo "prometheus missing and not root: the export tests that need it will be skipped"; fi; }

# `logparse export lnav` is checked by lnav itself (its format check, its SQL); install it when missing and possible.
lnav:
	@command -v lnav >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing lnav for the export tests..."; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq lnav >/dev/null) \
	      || echo "lnav could not be installed: the export tests that need it will be skipped"; \
	  else echo "lnav missing and not root: the export tests that need it will be skipped"; fi; }

## reports: regenerate reports/ from the GPUStack-mirror fixtures
reports: $(CORE_STAMP)
	$(PY) -m logparse.report.examples

## core-bench: the crate's criterion benches (one line parser, whole ingest on 1 and 2 threads) on the fixtures
core-bench: $(CORE_STAMP)
	$(PY) -m logparse.engine.spec core/target/bench
	cd core && cargo bench --bench ingest

## bench: time ingest on a generated 500 MB log next to grep -cE and a naive loop (+ 1, 2, 5 GB memory runs;
## + the fleet line: 200 small logs on a local Ray vs --jobs 2)
bench: $(CORE_STAMP) $(RAY_STAMP)
	$(PY) -m logparse.perf.bench --size 500M --rss-size 1G,2G,5G --fleet --out reports/bench.md

clean:
	rm -rf $(VENV) .demo-out .pytest_cache
