# One-command set-up: `make serve` and `make test` each build everything they need on a fresh machine.
SHELL := /bin/bash
VENV := $(CURDIR)/.venv
PYTHON := $(VENV)/bin/python
TORCH_VERSION := 2.11.0
CARGO_ENV := LIBTORCH_USE_PYTORCH=1 VIRTUAL_ENV=$(VENV) PATH="$(VENV)/bin:$$PATH"
HOST ?= 127.0.0.1
PORT ?= 8080
BENCH_LIMITS ?= 10,60
SHARED ?= ../shared
GSET ?= $(SHARED)/data/gset

MDBOOK := target/tools/bin/mdbook

# fmt and clippy, as CI runs them before the tests.
.PHONY: docs setup lint peers mqlib simulators ui-tools ui-screenshots client-tools tnco-peer bench-tnco service-tools fuzz load container-test build serve test verify bench bench-drl bench-mimo bench-cs bench-nphard bench-portfolio bench-tsp bench-orgym bench-ising-policy bench-backends bench-device-envs bench-population bench-apex bench-bridge bench-simulators bench-hterm bench-trading postgres deploy-tools models openapi clean

# Idempotent: skipped when the venv already imports the pinned torch.
setup:
	@if [ -x "$(PYTHON)" ] && "$(PYTHON)" -c 'import torch,sys; sys.exit(0 if torch.__version__.startswith("$(TORCH_VERSION)") else 1)' 2>/dev/null; then \
		echo "setup: torch $(TORCH_VERSION) already in .venv"; \
	else \
		python3 -m venv "$(VENV)" && "$(PYTHON)" -m pip install --quiet "torch==$(TORCH_VERSION)"; \
	fi

# The peers the benchmarks compare against and the fixture recorders use (not needed by `make test`).
peers: setup
	"$(PYTHON)" -m pip install --quiet "stable-baselines3==2.9.2" "gymnasium==1.4.0" "mpe2==1.1.1" "or-gymnasium==0.1.0" \
		"ortools==9.15.6755" "highspy==1.15.1" "elkai==2.0.1" "dwave-samplers==1.8.0"

# MQLib, the Max-Cut and QUBO peer of `bench maxcut`, built from ../shared/peers/mqlib (its own
# Makefile) in a copy under target/, never inside shared/.
mqlib: target/mqlib/bin/MQLib
target/mqlib/bin/MQLib:
	rm -rf target/mqlib && mkdir -p target && cp -r $(SHARED)/peers/mqlib target/mqlib
	$(MAKE) -C target/mqlib -j2 bin/MQLib

# Gymnasium with MuJoCo and PyBullet for `gymnasium:<id>` envs (the bridge, tests/gymnasium_bridge.rs)
# and Stable-Baselines3, the peer of `bench simulators`; idempotent.
simulators: setup
	@"$(PYTHON)" -c 'import importlib.metadata as m, sys; sys.exit(0 if m.version("mujoco") == "4.0.1" and m.version("pybullet-envs-gymnasium") == "0.6.0" and m.version("stable-baselines3") == "2.9.2" else 1)' 2>/dev/null || \
		"$(PYTHON)" -m pip install --quiet "gymnasium[mujoco]==1.4.0" "mujoco==4.0.1" "pybullet==3.2.7" "pybullet-envs-gymnasium==0.6.0" "stable-baselines3==2.9.2"

# The dashboard's browser test (tests/ui_dashboard.rs): Debian's chromium, and playwright-core with
# the pinned uPlot that src/api/ui/vendor/ is a copy of (tests/ui/package-lock.json), idempotent.
ui-tools:
	@command -v chromium >/dev/null 2>&1 || { as_root() { if [ "$$(id -u)" = 0 ]; then "$$@"; else sudo "$$@"; fi; }; \
		as_root apt-get update -qq >/dev/null && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }
	@[ -f tests/ui/node_modules/playwright-core/package.json ] && [ -f tests/ui/node_modules/uplot/package.json ] || \
		(cd tests/ui && npm ci --no-audit --no-fund --loglevel=error)

# Refreshes the book's screenshots (docs/src/images/) from the browser test.
ui-screenshots: build ui-tools
	RLSOLVER_UI_SCREENSHOTS=$(CURDIR)/docs/src/images $(CARGO_ENV) cargo test --release --test ui_dashboard

# What the Python-client tests need (tests/python_client.rs, tests/python_dimod.rs,
# tests/python_package.rs): the generator, dimod, dwave-preprocessing (dimod's composites), pytest
# and httpx, and the package in
# clients/python installed editable, idempotent.
client-tools: setup
	@"$(PYTHON)" -c 'import importlib.metadata as m, sys; sys.exit(0 if m.version("openapi-python-client") == "0.29.1" else 1)' 2>/dev/null || \
		"$(PYTHON)" -m pip install --quiet "openapi-python-client==0.29.1"
	@"$(PYTHON)" -c 'import importlib.metadata as m, sys; sys.exit(0 if m.version("dimod") == "0.12.23" else 1)' 2>/dev/null || \
		"$(PYTHON)" -m pip install --quiet "dimod==0.12.23"
	@"$(PYTHON)" -c 'import importlib.metadata as m, sys; sys.exit(0 if m.version("pytest") == "9.2.0" and m.version("httpx") == "0.28.1" and m.version("dwave-preprocessing") == "0.6.11" else 1)' 2>/dev/null || \
		"$(PYTHON)" -m pip install --quiet "pytest==9.2.0" "httpx==0.28.1" "dwave-preprocessing==0.6.11"
	@"$(PYTHON)" -c 'import rlsolver, sys; sys.exit(0 if rlsolver.__file__.startswith("$(CURDIR)/clients/python/") else 1)' 2>/dev/null || \
		"$(PYTHON)" -m pip install --quiet --no-deps -e clients/python

# cotengra and opt_einsum: the scorer of tests/tensor_network.rs and, with kahypar and optuna, the
# peer of `bench tnco` (benches/peers/cotengra_peer.py), idempotent.
tnco-peer: setup
	@"$(PYTHON)" -c 'import importlib.metadata as m, sys; sys.exit(0 if m.version("cotengra") == "0.8.3" and m.version("kahypar") == "1.3.7" else 1)' 2>/dev/null || \
		"$(PYTHON)" -m pip install --quiet "opt_einsum==3.4.0" "cotengra==0.8.3" "kahypar==1.3.7" "optuna==5.0.0"

# The Kubernetes schema validator of tests/deploy.rs (bundles the API schemas: nothing downloads
# at test time), idempotent.
deploy-tools: setup
	@"$(PYTHON)" -c 'import importlib.metadata as m, sys; sys.exit(0 if m.version("kubernetes-validate") == "1.37.0" else 1)' 2>/dev/null || \
		"$(PYTHON)" -m pip install --quiet "kubernetes-validate==1.37.0"

# Schemathesis for `make fuzz` (and verify); wrk comes from Debian (apt-get install wrk).
service-tools: setup
	@"$(PYTHON)" -c 'import importlib.metadata as m, sys; sys.exit(0 if m.version("schemathesis") == "4.32.5" else 1)' 2>/dev/null || \
		"$(PYTHON)" -m pip install --quiet "schemathesis==4.32.5"

# No 5xx, no schema violations and no accepted invalid request from schemathesis against a live
# server (2 minutes; `make test` runs 60 s of it).
fuzz: build service-tools
	bash benches/service/fuzz.sh

# wrk load figures -> benches/load-report.md
load: build
	bash benches/service/load.sh

# Builds the Dockerfile with buildah and checks the server inside the image (needs root, buildah,
# podman, debootstrap; ~40 minutes the first time on 2 cores). In verify, not in CI.
container-test:
	bash benches/service/container-test.sh

# A PostgreSQL server on loopback for tests/store.rs (Debian's package; root or sudo); prints the URL
# for RLSOLVER_TEST_DATABASE_URL (the tests' default). CI runs it before `make test`.
postgres:
	bash .ci/postgres.sh

build: setup
	$(CARGO_ENV) cargo build --release

serve: build
	./target/release/rlsolver serve --host $(HOST) --port $(PORT)

lint: setup
	cargo fmt --check
	$(CARGO_ENV) cargo clippy --release --all-targets -- -D warnings

# The API's contract first (60 s of schemathesis against the built server: no 5xx, every response
# as documented, invalid requests refused), then every test.
# The book (docs/src, mdBook from crates.io, pinned) into target/book; broken chapters fail it.
docs:
	@[ -x "$(MDBOOK)" ] && "$(MDBOOK)" --version | grep -q "v0.4.52" || cargo install mdbook --version 0.4.52 --locked --root target/tools
	"$(MDBOOK)" build docs

test: setup client-tools tnco-peer deploy-tools simulators ui-tools service-tools build docs
	MAX_TIME=60 bash benches/service/fuzz.sh
	$(CARGO_ENV) cargo test --release

# The heavy proofs (training to return thresholds), one at a time so timings are not shared.
verify: setup client-tools tnco-peer deploy-tools simulators ui-tools
	$(CARGO_ENV) cargo test --release
	$(MAKE) fuzz
	$(MAKE) container-test
	$(CARGO_ENV) cargo test --release -- --ignored --test-threads=1 --nocapture

bench: build
	./target/release/rlsolver bench maxcut --instances $(GSET) --time-limit $(BENCH_LIMITS) --output benches/maxcut-report.md

# Env throughput and time to threshold, ours next to gymnasium and Stable-Baselines3 (same script).
bench-drl: build peers
	./target/release/rlsolver bench drl --python "$(PYTHON)" --seeds 0,1,2 --output benches/drl-report.md

# Regenerates every shipped policy in models/ (each manifest records its exact command).
models: build
	for kn in 8 4; do for p in 10 100; do \
		./target/release/rlsolver train-policy mimo --users $$kn --antennas $$kn --power $$p --steps 3000 --out models; \
	done; done
	./target/release/rlsolver train-policy compressive_sensing --measurements 50 --unknowns 100 --steps 4000 --batch 64 --learning-rate 0.005 --out models
	./target/release/rlsolver train-policy tensor_network --steps 1500 --learning-rate 0.01 --seed 0 --out models
	./target/release/rlsolver train-policy ising --steps 2400 --seed 0 --out models
	./target/release/rlsolver train-policy orgym --env Knapsack-v0 --steps 60000 --seed 0 --out models
	./target/release/rlsolver train-policy orgym --env Knapsack-v1 --steps 40000 --seed 0 --out models
	./target/release/rlsolver train-policy orgym --env Knapsack-v2 --steps 40000 --seed 0 --out models
	./target/release/rlsolver train-policy orgym --env Knapsack-v3 --steps 1000000 --seed 0 --out models
	for v in 0 2; do ./target/release/rlsolver train-policy orgym --env BinPacking-v$$v --steps 100000 --seed 0 --out models; done
	./target/release/rlsolver train-policy orgym --env BinPacking-v4 --steps 1000000 --seed 0 --out models
	for v in 1 3 5; do ./target/release/rlsolver train-policy orgym --env BinPacking-v$$v --steps 300000 --seed 0 --out models; done
	./target/release/rlsolver train-policy orgym --env Newsvendor-v0 --steps 200000 --seed 0 --out models
	for v in 0 1; do ./target/release/rlsolver train-policy orgym --env InvManagement-v$$v --steps 300000 --seed 0 --out models; done
	./target/release/rlsolver train-policy orgym --env PortfolioOpt-v0 --steps 300000 --seed 0 --out models
	for v in 0 1; do ./target/release/rlsolver train-policy orgym --env VMPacking-v$$v --steps 300000 --seed 0 --out models; done
	./target/release/rlsolver train-policy orgym --env VehicleRouting-v0 --steps 300000 --seed 0 --out models
	./target/release/rlsolver train-policy orgym --env TSP-v0 --steps 100000 --seed 0 --out models
	./target/release/rlsolver train-policy orgym --env TSP-v1 --steps 60000 --seed 0 --out models

# The classical NP-hard sets with proven optima -> benches/nphard-report.md, then the sections against
# CP-SAT and HiGHS at 10 s and 1 s -> benches/*-peers*-report.md, knapsack-classes*-report.md (~2 hours).
bench-nphard: build peers
	./target/release/rlsolver bench nphard --instances ../shared/data/nphard --time-limit 1,10,60 --seeds 0,1,2 --output benches/nphard-report.md
	./target/release/rlsolver bench nphard --instances ../shared/data/nphard --only knapsack-classes --time-limit 10 --seeds 0,1,2 --python "$(PYTHON)" --output benches/knapsack-classes-report.md
	./target/release/rlsolver bench nphard --instances ../shared/data/nphard --only knapsack-ranges --time-limit 10 --seeds 0,1,2 --output benches/knapsack-ranges-report.md
	./target/release/rlsolver bench nphard --instances ../shared/data/nphard --only set-cover-peers --time-limit 10 --seeds 0,1,2 --python "$(PYTHON)" --output benches/set-cover-peers-report.md
	./target/release/rlsolver bench nphard --instances ../shared/data/nphard --only knapsack-classes --time-limit 1 --seeds 0,1,2 --python "$(PYTHON)" --output benches/knapsack-classes-1s-report.md
	./target/release/rlsolver bench nphard --instances ../shared/data/nphard --only set-cover-peers --time-limit 1 --seeds 0,1,2 --python "$(PYTHON)" --output benches/set-cover-peers-1s-report.md
	./target/release/rlsolver bench nphard --instances ../shared/data/nphard --only graph-peers --time-limit 10 --seeds 0,1,2 --python "$(PYTHON)" --output benches/graph-peers-report.md
	./target/release/rlsolver bench nphard --instances ../shared/data/nphard --only graph-peers --time-limit 1 --seeds 0,1,2 --python "$(PYTHON)" --output benches/graph-peers-1s-report.md

# Contraction orders on the Sycamore networks and generated circuits, ours next to cotengra and
# opt_einsum (same command, same machine) -> benches/tnco-report.md (~15 minutes).
bench-tnco: build tnco-peer
	./target/release/rlsolver bench tnco --instances ../shared/data/tnco --time-limit 10,60 --python "$(PYTHON)" --output benches/tnco-report.md

bench-portfolio: build
	./target/release/rlsolver bench portfolio --instances ../shared/data/portfolio --time-limit 5 --seeds 0,1,2 --output benches/portfolio-report.md

bench-tsp: build peers
	./target/release/rlsolver bench tsp --instances ../shared/data/nphard/tsp --time-limit 1,10 --seeds 0,1,2 --generated E2000,C3000,E4000 --python "$(PYTHON)" --output benches/tsp-report.md

# OR-Gym policies against their references (ORGYM_EPISODES unseen episodes per row, default and
# changed parameters) and env throughput against or-gymnasium -> benches/orgym-report.md. Most
# of its time is the 500-item knapsack policies' rows; the README says how long a run took.
ORGYM_EPISODES ?= 1000
bench-orgym: build peers
	./target/release/rlsolver bench orgym --episodes $(ORGYM_EPISODES) --python "$(PYTHON)" --output benches/orgym-report.md

bench-cs: build
	./target/release/rlsolver bench cs --time-limit 2 --output benches/cs-report.md

bench-ising-policy: build
	./target/release/rlsolver bench ising-policy --instances ../shared/data/gset --time-limit 1 --output benches/ising-policy-report.md

bench-backends: build
	./target/release/rlsolver bench backends --instances ../shared/data/gset --time-limit 1,10 --seeds 0,1,2 --device cpu --output benches/backends-cpu-report.md

bench-population: build
	./target/release/rlsolver bench population --seeds 0,1,2 --workers 2 --timing-workers 1,2 --output benches/population-report.md

bench-apex: build
	./target/release/rlsolver bench apex --seeds 0,1,2 --rollouts 1,2,4 --updates 5000 --output benches/apex-report.md

# The Gymnasium bridge against gymnasium's own vector envs -> benches/bridge-report.md
bench-bridge: build simulators
	./target/release/rlsolver bench bridge --python $(PYTHON) --output benches/bridge-report.md

# Our SAC/TD3/PPO through the bridge against SB3 on MuJoCo and PyBullet, full budgets (hours on a
# few cores; SIM_SCALE=0.1 for a quick look; SIM_FLAGS=--side-by-side runs both sides at once,
# one torch thread each) -> benches/simulators-report.md
SIM_SCALE ?= 1
SIM_FLAGS ?=
bench-simulators: build simulators
	./target/release/rlsolver bench simulators --python $(PYTHON) --seeds 0,1,2 --steps-scale $(SIM_SCALE) $(SIM_FLAGS) --output benches/simulators-report.md

# The H-term study: SAC and TD3 on Hopper-v5 with lambda 0, 0.01, 0.1, 1 over 5 seeds (SIM_SCALE as above)
bench-hterm: build simulators
	./target/release/rlsolver bench simulators --only Hopper-v5 --h-term-lambdas 0.01,0.1,1 --seeds 0,1,2,3,4 --steps-scale $(SIM_SCALE) --output benches/hterm-report.md

# PPO and SAC on StockTrading-v0 against buy-and-hold and mean-variance, out-of-sample -> benches/trading-report.md
bench-trading: build
	./target/release/rlsolver bench trading --seeds 0,1,2 --output benches/trading-report.md

bench-device-envs: build
	./target/release/rlsolver bench device-envs --device cpu --seeds 0,1,2 --output benches/device-envs-cpu-report.md

bench-mimo: build
	./target/release/rlsolver bench mimo --instances ../shared/data/mimo --time-limit 1 --output benches/mimo-report.md

openapi: build
	./target/release/rlsolver openapi > openapi/openapi.json

clean:
	cargo clean
