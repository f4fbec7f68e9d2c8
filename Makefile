# One entry point. `make demo` runs the main job, `make test` runs every check; both set up
# everything themselves (virtualenv, Python dependencies, release build of the extension).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
# Build artefacts live outside the clone so that a fresh clone rebuilds warm.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/polars-poly/target
DEPS_STAMP := $(VENV)/.deps-installed

.PHONY: demo test venv build rust-test rust-lint py-test py-lint docs bench bench-smoke clean wheel wheel-test

demo: build
	$(PY) -m polars_poly demo

test: build rust-test rust-lint py-lint py-test docs wheel-test

$(PY):
	python3 -m venv $(VENV)

$(DEPS_STAMP): pyproject.toml | $(PY)
	@echo "installing Python dependencies into $(VENV) ..."
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet "maturin>=1.8,<2" "polars>=2,<3" pyarrow numpy scipy tqdm \
		pytest hypothesis scikit-learn ruff mypy mmh3 vowpalwabbit matplotlib \
		"dask[distributed,dataframe]" sphinx myst-parser furo
	touch $@

venv: $(DEPS_STAMP)

# maturin develop compiles the extension in release mode and installs it (editable) into .venv;
# its output goes to a log, shown only when the build fails.
BUILD_LOG := $(VENV)/build.log

build: $(DEPS_STAMP)
	@echo "building the extension (release; 10-15 min cold on 2 cores, seconds when warm) ..."
	@VIRTUAL_ENV=$(abspath $(VENV)) PATH=$(abspath $(VENV))/bin:$$PATH \
		$(VENV)/bin/maturin develop --release --quiet > $(BUILD_LOG) 2>&1 \
		|| { cat $(BUILD_LOG); exit 1; }

rust-test:
	cargo test --lib --tests --quiet

rust-lint:
	cargo fmt --check
	cargo clippy --lib --tests --benches --examples --quiet -- -D warnings
	cargo clippy --lib --features python --quiet -- -D warnings

py-lint: $(DEPS_STAMP)
	$(VENV)/bin/ruff check python tests benches
	$(VENV)/bin/ruff format --check python tests benches
	$(VENV)/bin/mypy

py-test: $(DEPS_STAMP)
	$(PY) -m pytest -q

# The documentation site (docs/*.md and the API reference from the docstrings); warnings fail.
docs: $(DEPS_STAMP)
	$(VENV)/bin/sphinx-build -W --keep-going -q -b html docs docs/_build/html

# The wheel (abi3, CPython >= 3.11) in dist/, and a smoke test of every public entry point in a
# fresh virtual environment holding only the wheel and its runtime dependencies.
WHEEL_VENV := $(HOME)/.cache/polars-poly/wheel-venv

wheel: $(DEPS_STAMP)
	rm -rf dist
	$(VENV)/bin/maturin build --release --quiet --out dist

wheel-test: wheel
	rm -rf $(WHEEL_VENV)
	python3 -m venv $(WHEEL_VENV)
	$(WHEEL_VENV)/bin/python -m pip install --quiet dist/*.whl
	cd /tmp && $(WHEEL_VENV)/bin/python $(abspath tests/wheel/smoke.py)

# The criterion benches, then the maintained suite behind docs/benchmarks.md (benches/suite;
# hours at full size). `make bench-smoke` runs the suite at tiny sizes: a check, not numbers.
bench: build
	cargo bench
	$(PY) -m benches.suite

bench-smoke: build
	$(PY) -m benches.suite --smoke

clean:
	rm -rf $(VENV)
