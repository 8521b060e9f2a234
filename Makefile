# Developer tasks (GNU make), run from the repository root after the README's Quick start
# (the venv in .venv with the dev extras). `make help` lists them.
#
#   make test         the fast lane: unit and in-memory client tests, SQLite only, in parallel
#   make test-all     the whole suite, both backends, end-to-end and browser (what CI runs)
#   make lint         ruff check, ruff format --check, mypy (bigmind and bench), lint-imports
#   make fix          ruff check --fix, ruff format
#   make bench-quick  every benchmark at a tiny size (what CI runs after the tests)

VENV ?= .venv
PY := $(VENV)/bin/python
RUFF := $(VENV)/bin/ruff
MYPY := $(VENV)/bin/mypy
CODE := bigmind src tests bench
# Deselected from the fast lane: processes, real clients, large data, the browser.
FAST := not slow and not e2e and not browser

.DEFAULT_GOAL := help
.PHONY: help test test-all lint fix bench-quick

help:
	@sed -n 's/^#   make /make /p' $(firstword $(MAKEFILE_LIST))

test:
	$(PY) -m pytest -n auto --backend sqlite -m "$(FAST)"

# The README's test command (.ci/run runs it verbatim), with CI's screenshot folder.
test-all:
	SCREENSHOT_DIR="$(CURDIR)/.artifacts/screenshots" $(PY) -m pytest -n auto

lint:
	$(RUFF) check $(CODE)
	$(RUFF) format --check $(CODE)
	$(MYPY)
	$(VENV)/bin/lint-imports

fix:
	$(RUFF) check --fix $(CODE)
	$(RUFF) format $(CODE)

bench-quick:
	$(PY) bench/run.py --quick
