# `make demo` and `make test` work on a fresh clone: each creates .venv and installs logparse.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test check venv browser prometheus reports bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

## demo: ingest the bundled GPUStack-mirror fixture, then print its post-mortem
demo: $(STAMP)
	$(PY) -m logparse ingest fixtures/vllm/gpustack-64k.log --out .demo-out
	$(PY) -m logparse summary fixtures/vllm/gpustack-64k.log

## test: grammar check and the whole suite (installs Debian chromium for the report's browser test and
## Debian prometheus for the export tests)
test: $(STAMP) browser prometheus
	$(PY) -m logparse patterns check
	$(PY) -m pytest -q

check: $(STAMP)
	$(PY) -m logparse patterns check

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

## reports: regenerate reports/ from the GPUStack-mirror fixtures
reports: $(STAMP)
	$(PY) -m logparse.report.examples

## bench: time ingest on a generated 500 MB log next to grep -cE and a naive loop (+ 1, 2, 5 GB memory runs)
bench: $(STAMP)
	$(PY) -m logparse.perf.bench --size 500M --rss-size 1G,2G,5G --out reports/bench.md

clean:
	rm -rf $(VENV) .demo-out .pytest_cache
