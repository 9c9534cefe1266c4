# Every target installs what it needs into .venv first, so a fresh machine needs only `make`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test unit lint demo bench soak clean control-plane protobuf

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test,dev]'
	touch $@

# The real backend: etcd, kube-apiserver, kube-controller-manager and kube-scheduler v1.37.2, built from Go
# modules (tools/kube) into ~/.cache/kplan/kube-v1.37.2 (KPLAN_KUBE_DIR overrides); a no-op once built.
control-plane:
	tools/kube/build.sh

lint: install
	$(BIN)/ruff check engine tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

unit: install
	$(BIN)/pytest -q tests/unit

# A test that fails is run once more on its own before the run fails (the real backend's timing varies with the
# machine's load); the first failures stay in the output above the second run's summary.
test: lint control-plane
	$(BIN)/pytest -q -rfE || { echo "--- running the failed tests once more"; $(BIN)/pytest -q -rfE --lf; }

demo: install
	$(BIN)/python -m engine.demo

bench: install
	for b in $(filter-out bench/soak.py,$(wildcard bench/*.py)); do $(BIN)/python $$b || exit 1; done

# The long soak (tests/soak and tests/e2e/test_soak_kills.py are its short form): 10,000 hostile packages and 200
# SIGKILLs of the manager; prints one JSON object.
soak: install
	$(BIN)/python bench/soak.py --mutants 10000 --budget 7200 --kills 200 --kill-budget 3600 --load 1000 --load-budget 2700

# Regenerates engine/apiserver/protobuf/ from the pinned Kubernetes modules (needs Go; the result is committed).
protobuf: install
	$(BIN)/pip install -q -e '.[protogen]'
	$(BIN)/python tools/protobuf/generate.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache build *.egg-info
