# The two entry points of scorekit (see README): `make demo` and `make test`.
# Everything is installed into .venv from PyPI and crates.io; nothing by hand.

VENV    ?= .venv
PYTHON  ?= python3
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.deps-installed

.PHONY: demo test build deps rust-test py-test bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q "maturin>=1.5,<2" numpy numba rapidfuzz pydantic scipy \
	    pytest hypothesis jiwer zss apted networkx biopython
	touch $(STAMP)

deps: $(STAMP)

# One release build of the compiled core, installed into .venv (editable).
build: deps
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
	    $(VENV)/bin/maturin develop --release --quiet

rust-test:
	cargo test --release -p scorekit-kernels --quiet

py-test: build
	$(PY) -m pytest -q tests

# Main job: score the sample corpus shipped inside the package.
demo: build
	$(PY) -m scorekit demo

# Every test: Rust kernel tests, then pytest (each kernel test runs on both backends).
test: build rust-test py-test

# Side-by-side benchmarks against the peers (results go to benches/RESULTS*.md by hand).
bench: build
	$(PY) -m pip install -q asv
	$(PY) benches/compare_strings.py
	$(PY) benches/bench_trees.py
	$(PY) benches/bench_sequences.py
	$(PY) benches/bench_graphs.py

clean:
	rm -rf target $(VENV) python/scorekit/_core*.so
