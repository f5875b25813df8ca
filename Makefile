# make demo / make test work on a fresh clone: each creates .venv and installs the project.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test venv bench reports clean check

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) -m logparse ingest fixtures/vllm/gpustack-64k.log --out .demo-out

test: $(STAMP)
	$(PY) -m logparse patterns check
	$(PY) -m pytest -q

check: $(STAMP)
	$(PY) -m logparse patterns check

clean:
	rm -rf $(VENV) .demo-out .pytest_cache
