# The two entry points of scorekit (see README): `make demo` and `make test`.
# Everything is installed into .venv from PyPI and crates.io; nothing by hand.
# `make demo` installs only the runtime dependencies; `make test` adds the `test` extra
# (the oracles and Numba), `make bench`/`make bench-asv` the `bench` extra (pyproject.toml).

VENV    ?= .venv
PYTHON  ?= python3
PY      := $(VENV)/bin/python
MATURIN := $(VENV)/bin/maturin
# Extras of pyproject.toml installed with the build (set per target below).
EXTRAS  :=

.PHONY: demo test build browser lint rust-test py-test core-check bench bench-asv clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(MATURIN): | $(PY)
	$(PY) -m pip install -q "maturin>=1.5,<2"

# One release build of the compiled core, installed into .venv (editable) with the runtime
# dependencies and $(EXTRAS).
build: | $(MATURIN)
	VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
	    $(MATURIN) develop --release --quiet $(if $(EXTRAS),--extras $(EXTRAS))

# Kernel unit tests (with the hand-written SIMD paths, then with SCOREKIT_SIMD=off: the portable
# ones), and a compile check of the cargo-fuzz targets (docs/fuzzing.md) so that they
# keep up with the kernels' API; running them needs cargo-fuzz and is done by hand.
rust-test:
	cargo test --release -p scorekit-kernels --quiet
	SCOREKIT_SIMD=off cargo test --release -p scorekit-kernels --quiet
	cargo check --quiet --manifest-path fuzz/Cargo.toml

py-test: EXTRAS := test
py-test: build browser
	$(PY) -m pytest -q tests

# The gates every change passes: Rust formatting and clippy (warnings are errors), ruff with the rule
# set of pyproject.toml, and the compiled module's stub checked against the build (mypy's stubtest).
lint: EXTRAS := test
lint: build
	cargo fmt --all --check
	cargo clippy --release --workspace --all-targets --features pyo3/extension-module --quiet -- -D warnings
	$(VENV)/bin/ruff check python tests benches
	$(PY) -m mypy.stubtest scorekit._core

# The backend switch holds: a representative slice of the suite under the Numba backend with the
# compiled module replaced by a recorder (the run fails if anything took a name from it), then with
# its import blocked (tests/core_check.py).
CORE_SLICE := tests/test_facade.py tests/test_text.py tests/test_strings.py tests/test_agents_metrics.py \
	tests/test_agents_reliability.py tests/test_spans.py tests/test_anls.py tests/test_trees_api.py \
	tests/test_qe_signals.py tests/test_qe_calibrate.py tests/test_fields.py tests/test_ged_typed_graph.py
core-check: EXTRAS := test
core-check: build
	SCOREKIT_BACKEND=numba SCOREKIT_CORE_CHECK=poison $(PY) -m pytest -q -p no:cacheprovider $(CORE_SLICE)
	SCOREKIT_CORE_CHECK=blocked $(PY) -m pytest -q -p no:cacheprovider -W ignore::RuntimeWarning $(CORE_SLICE)

# The report tests load pages in headless Chromium (Debian's package), and print PDFs with WeasyPrint,
# which loads Debian's Pango and needs a font; the CJK screenshot check needs a CJK font (Noto CJK):
# installed here when missing and this runs as root (CI, the project's machines); otherwise say how
# to get them.
REPORT_DEBS := chromium libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core fonts-noto-cjk
browser:
	@{ command -v chromium >/dev/null 2>&1 && ldconfig -p | grep -q 'libpangoft2-1.0.so.0' \
	   && fc-list 2>/dev/null | grep -q . && fc-list :lang=zh 2>/dev/null | grep -q .; } || { \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(REPORT_DEBS) >/dev/null; \
	    else \
	        echo "make test needs chromium, Pango and fonts (one with CJK) for the report checks: sudo apt-get install $(REPORT_DEBS) (or set SCOREKIT_SKIP_BROWSER=1)"; exit 1; \
	    fi; }

# Main job: score the sample corpus shipped inside the package (needs no extra), and write its
# report, one self-contained HTML page, under target/ (ignored by git).
demo: build
	mkdir -p target/demo
	$(PY) -m scorekit demo --html target/demo/scorekit-demo.html

# Every test: Rust kernel tests, then pytest (each kernel test runs on both backends).
test: EXTRAS := test
test: build lint rust-test py-test core-check

# Side-by-side benchmarks against the peers (results go to benches/RESULTS*.md by hand).
bench: EXTRAS := bench
bench: build
	$(PY) benches/compare_strings.py
	$(PY) benches/bench_trees.py
	$(PY) benches/bench_sequences.py
	$(PY) benches/bench_graphs.py

# The asv suites (benches/asv_suites, asv.conf.json), once each, against the build in .venv.
bench-asv: EXTRAS := bench
bench-asv: build
	$(VENV)/bin/asv machine --yes
	$(VENV)/bin/asv run --python=same --quick --show-stderr

clean:
	rm -rf target $(VENV) python/scorekit/_core*.so
