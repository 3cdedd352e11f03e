# Two entry points: `make run` (the app) and `make test` (the suite).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8501

# The store, queue and search suites, each test on its own database of a throwaway
# PostgreSQL server (tests/postgres.py; needs Debian's postgresql package).
PG_SUITES := tests/test_postgres.py tests/test_store.py tests/test_jobs.py \
	tests/test_generation.py tests/test_freshness.py tests/test_index_cache.py \
	tests/test_integration.py tests/test_crash_recovery.py tests/test_concurrency.py \
	tests/test_duplicates.py tests/test_clusters.py tests/test_bad_input.py \
	tests/test_ray_embed.py tests/test_judgements.py tests/test_migration_judgements.py \
	tests/test_fusion.py

.PHONY: run test test-slow test-postgres lint bench worker clean-venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@

# serve.py: the pages of app.py behind the login door (searchapp/web/), as one ASGI app.
# It answers to loopback names only unless SEARCHAPP_ALLOWED_HOSTS says more, believes
# X-Forwarded-For only from SEARCHAPP_TRUSTED_PROXIES (uvicorn's default, 127.0.0.1, is
# replaced there), and looks nothing up outside (.streamlit/config.toml: browser.serverAddress).
# OMP_WAIT_POLICY=PASSIVE: torch's threads sleep instead of spinning between queries, so the
# app's searches do not fight the worker and Streamlit for the cores (benchmarks/ui_latency.py:
# the app's search p50 69 -> 37 ms at 100,000 documents). Set it yourself to override.
run: $(VENV)/.installed
	OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-PASSIVE} $(BIN)/streamlit run serve.py --server.address $(HOST) --server.port $(PORT) \
		--server.headless true --browser.gatherUsageStats false

worker: $(VENV)/.installed
	$(BIN)/searchapp worker

# The suite's files are shared out over TEST_WORKERS processes (pytest-xdist), a file's tests
# on one of them so its module fixtures (a served app, a trained model) are built once: on
# CI's 2 cores the suite spends much of its time waiting on servers, browsers and workers.
TEST_WORKERS ?= 2

test: lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

test-slow: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -m slow

test-postgres: $(VENV)/.installed-dev
	SEARCHAPP_TEST_DATABASE=postgres $(BIN)/python -m pytest $(PG_SUITES)

# ruff, then the layer rules of docs/architecture.md (.importlinter): a lower layer that
# imports a higher one, or a module outside ui/ that imports streamlit, fails here.
lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-logo

clean-venv:
	rm -rf $(VENV)
