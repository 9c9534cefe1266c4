# Every target installs what it needs into .venv first, so a fresh machine needs only `make`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install test unit lint demo bench soak clean control-plane token-server helm protobuf

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

# The token server of the CNCF Distribution registry (contrib/token-server v2.8.3), built from its Go module
# (tools/token-server) into ~/.cache/kplan/token-server-v2.8.3 (KPLAN_TOKEN_SERVER_DIR overrides): the OCI tests'
# bearer-token authentication. One to two minutes cold on 2 cores; a no-op once built.
token-server:
	tools/token-server/build.sh

# The peer bench/vs_helm.py measures kplan against: Helm v4.3.1 from the Go module proxy (tools/helm) into
# ~/.cache/kplan/helm-v4.3.1 (KPLAN_HELM_DIR overrides); a no-op once built. `make test` builds it too: tests/bench
# runs every benchmark at a tiny size.
helm:
	tools/helm/build.sh

lint: install
	$(BIN)/ruff check engine tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

unit: install
	$(BIN)/pytest -q tests/unit

# A test that fails is run once more on its own before the run fails (the real backend's timing varies with the
# machine's load); the first failures stay in the output above the second run's summary.
test: lint control-plane token-server helm
	$(BIN)/pytest -q -rfE || { echo "--- running the failed tests once more"; $(BIN)/pytest -q -rfE --lf; }

demo: install
	$(BIN)/python -m engine.demo

# Every figure on the dev cluster, then those that apply to a real one on the real control plane too
# (plan.py and instances.py run both backends by themselves).
bench: install control-plane helm
	for b in $(filter-out bench/soak.py bench/faults_soak.py bench/profile.py,$(wildcard bench/*.py)); do $(BIN)/python $$b || exit 1; done
	for b in bench/run_vs_kubectl.py bench/vs_helm.py; do $(BIN)/python $$b --backend real || exit 1; done

# The long soak (tests/soak and tests/e2e/test_soak_*.py are its short form): 10,000 hostile packages, 200
# SIGKILLs of the manager, 20 rounds of API faults and 20 partitions of the leader per backend; prints one JSON object.
soak: install
	$(BIN)/python bench/soak.py --mutants 10000 --budget 7200 --kills 200 --kill-budget 3600 --load 1000 --load-budget 2700 \
		--fault-rounds 20 --partitions 20 --fault-budget 3600

# Regenerates engine/apiserver/protobuf/ from the pinned Kubernetes modules (needs Go; the result is committed).
protobuf: install
	$(BIN)/pip install -q -e '.[protogen]'
	$(BIN)/python tools/protobuf/generate.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache build *.egg-info
