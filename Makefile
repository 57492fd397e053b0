# The two commands of the README: `make demo` and `make test`. Each builds .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# torch first and pinned: the CPU build on local disk, never a multi-GB CUDA download.
# Everything else at the exact versions of constraints.txt (pyproject.toml has ranges).
$(VENV)/.installed: pyproject.toml constraints.txt $(wildcard adapters/*/pyproject.toml) | $(BIN)/python
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]' \
		-e adapters/langchain -e adapters/langgraph -e adapters/llama-index-memory \
		-e adapters/llama-index-retrievers -e adapters/llama-index-tools
	# a benchmark peer (benchmarks/peers/langchain_pg.py): it caps pgvector (the Python
	# package) below 0.4 while we need 0.5; it only uses pgvector.sqlalchemy.Vector, which
	# 0.5 still has, so it goes in without its dependency list (the rest are in [dev]).
	$(BIN)/python -m pip install --quiet --no-deps langchain-postgres==0.0.19
	touch $@

demo: $(VENV)/.installed
	$(BIN)/hindsight-tools demo

test: $(VENV)/.installed
	$(BIN)/ruff check hindsight_tools tests benchmarks adapters notebooks
	$(BIN)/mypy
	$(BIN)/python -m pytest

lint: $(VENV)/.installed
	$(BIN)/ruff check hindsight_tools tests benchmarks adapters notebooks
	$(BIN)/mypy
