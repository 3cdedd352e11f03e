# Two entry points: `make run` (the app) and `make test` (the suite).
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8501

.PHONY: run test test-slow lint bench worker clean-venv

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -r requirements.txt
	$(BIN)/pip install -q --no-deps -e .
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed
	$(BIN)/pip install -q -r requirements-dev.txt
	touch $@

run: $(VENV)/.installed
	$(BIN)/streamlit run app.py --server.address $(HOST) --server.port $(PORT) \
		--server.headless true --browser.gatherUsageStats false

worker: $(VENV)/.installed
	$(BIN)/searchapp worker

test: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

test-slow: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -m slow

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .

clean-venv:
	rm -rf $(VENV)
