# Entry points. `make demo` and `make test` work on a fresh Debian 12 machine with root.
BUILD_DIR ?= build
FUZZ_DIR ?= build-fuzz
BUILD_TYPE ?= RelWithDebInfo
PYTEST ?= /usr/bin/python3 -m pytest
# Benchmark and load scripts import the test support package tests/mpctest.
PYTHON := PYTHONPATH=$(CURDIR)/tests /usr/bin/python3
FUZZ_SECONDS ?= 4
FUZZ_LONG_SECONDS ?= 600
STORM_ARGS ?=
SOAK_ARGS ?=
FUZZERS := fuzz_bristol fuzz_client_request fuzz_client_reply fuzz_peer_message fuzz_settings

.PHONY: all deps build test unit-test integration-test fuzz-build fuzz-short fuzz demo bench bench-links storm soak soak-deviating soak-deviations clean \
  packages packages-upgrade packages-check ansible-venv lint-ansible rollout-test

all: build

deps:
	@tools/install-deps

build: deps
	@cmake -G Ninja -B $(BUILD_DIR) -S . -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) >/dev/null
	@ninja -C $(BUILD_DIR)

unit-test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j 2

# Includes the rollout test's short form (tests/integration/rollout/test_rollout_containers.py:
# booted containers; it skips, naming what is missing, without root, nspawn or cgroups).
integration-test: build ansible-venv
	MPC_BUILD_DIR=$(abspath $(BUILD_DIR)) MPC_ANSIBLE_VENV=$(abspath $(ANSIBLE_VENV)) $(PYTEST) -q --durations=15 \
	  -m "not long" tests/integration

test: unit-test fuzz-short integration-test

# The full forms of the integration tests whose short forms run in `make test` (marked long:
# every server deviating or down in turn where `make test` takes one).
test-long: build
	MPC_BUILD_DIR=$(abspath $(BUILD_DIR)) $(PYTEST) -q --durations=15 -m long tests/integration

fuzz-build: deps
	@CC=clang CXX=clang++ cmake -G Ninja -B $(FUZZ_DIR) -S . -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DMPC_BUILD_TESTS=OFF -DMPC_BUILD_FUZZERS=ON \
	  -DCMAKE_C_FLAGS="-fsanitize=address,undefined,fuzzer-no-link" \
	  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined,fuzzer-no-link" >/dev/null
	@ninja -C $(FUZZ_DIR) $(FUZZERS)

# A short run of every fuzzer (part of `make test`); `make fuzz` runs them long.
fuzz-short: fuzz-build
	@tools/run-fuzzers $(FUZZ_DIR) $(FUZZ_SECONDS) $(FUZZERS)

fuzz: fuzz-build
	@tools/run-fuzzers $(FUZZ_DIR) $(FUZZ_LONG_SECONDS) $(FUZZERS)

demo: build
	@tools/demo $(BUILD_DIR)

bench: build
	@$(PYTHON) tests/bench/run_bench.py --build-dir $(BUILD_DIR) --out docs/benchmarks
	@$(PYTHON) tests/bench/data_plane_bench.py --build-dir $(BUILD_DIR) --out docs/benchmarks
	@$(PYTHON) tests/bench/core_scaling_bench.py --build-dir $(BUILD_DIR) --out docs/benchmarks
	@$(PYTHON) tests/bench/active_bench.py --build-dir $(BUILD_DIR) --out docs/benchmarks
	@$(PYTHON) tests/bench/two_server_bench.py --build-dir $(BUILD_DIR) --out docs/benchmarks
	@$(PYTHON) tests/bench/kdc_bench.py --build-dir $(BUILD_DIR) --out docs/benchmarks
	@$(PYTHON) tests/bench/kdc_user_bench.py --build-dir $(BUILD_DIR) --out docs/benchmarks
	@$(PYTHON) tests/bench/degraded_bench.py --build-dir $(BUILD_DIR) --out docs/benchmarks
	@$(PYTHON) tests/bench/metrics_bench.py --build-dir $(BUILD_DIR) --out docs/benchmarks
	@$(PYTHON) tests/bench/benchmarks_page.py

# The engine with every link between servers shaped to a rate and a round trip
# (tests/bench/links_bench.py, through mpc-link-emulator).
bench-links: build
	@$(PYTHON) tests/bench/links_bench.py --build-dir $(BUILD_DIR) --out docs/benchmarks
	@$(PYTHON) tests/bench/benchmarks_page.py

# Login storms, stock krb5kdc against the protected KDC (tests/load/storm.py); the short
# form runs in `make test` (tests/integration/kdc/test_storm.py).
storm: build
	@$(PYTHON) tests/load/storm.py compare --build-dir $(BUILD_DIR) --out docs/benchmarks $(STORM_ARGS)

# Minutes of logins against the protected KDC with one engine server restarted midway.
soak: build
	@$(PYTHON) tests/load/storm.py soak --build-dir $(BUILD_DIR) --out docs/benchmarks $(SOAK_ARGS)
	@$(PYTHON) tests/bench/benchmarks_page.py

# The same with each engine server deviating in every job for a while instead of down.
soak-deviating: build
	@$(PYTHON) tests/load/storm.py soak --build-dir $(BUILD_DIR) --out docs/benchmarks \
	  --deviate and-share-bit=2,auth2-step=0,garbled-table-bits=300000 $(SOAK_ARGS)
	@$(PYTHON) tests/bench/benchmarks_page.py

# One storm per fault hook of the test server, each server deviating with it in turn.
soak-deviations: build
	@$(PYTHON) tests/load/deviations.py --build-dir $(BUILD_DIR) --out docs/benchmarks $(SOAK_ARGS)
	@$(PYTHON) tests/bench/benchmarks_page.py

# Debian packages mpc-server and mpc-kdc-plugin in $(BUILD_DIR)/packages (packaging/).
packages: build
	@packaging/build-debs $(BUILD_DIR) $(BUILD_DIR)/packages

# The same packages at a higher version (VERSION+upgrade1), which rollout-test upgrades to.
packages-upgrade: build
	@packaging/build-debs $(BUILD_DIR) $(BUILD_DIR)/packages-upgrade +upgrade1

# Installs the packages into a scratch Debian 12 root (debootstrap, cached under
# $(BUILD_DIR)/debian-cache) and runs them there; needs root and the Debian mirror.
packages-check: packages
	@packaging/check-install $(BUILD_DIR)/packages $(BUILD_DIR)/debian-cache

# ansible-lint from PyPI in a virtual environment under $(BUILD_DIR); the lint itself is offline.
ANSIBLE_VENV ?= $(BUILD_DIR)/ansible-venv
ansible-venv: deps
	@test -x $(ANSIBLE_VENV)/bin/ansible-lint || \
	  { /usr/bin/python3 -m venv $(ANSIBLE_VENV) && \
	    $(ANSIBLE_VENV)/bin/pip install -q -r ansible/requirements-lint.txt; }

lint-ansible: ansible-venv
	@cd ansible && PATH=$(abspath $(ANSIBLE_VENV))/bin:$$PATH ANSIBLE_HOME=$(abspath $(BUILD_DIR))/ansible-home \
	  $(abspath $(ANSIBLE_VENV))/bin/ansible-lint --offline

# The roles run by ansible-playbook against four systemd-nspawn containers (three engine
# servers, a KDC) booted from a Debian 12 image cached under $(BUILD_DIR), then logins
# checked there, then every procedure of docs/operations.md (packaging/rollout-test; its short
# form runs in `make test`). Needs root and, for the first image, the mirror.
rollout-test: packages packages-upgrade ansible-venv
	@MPC_ANSIBLE_VENV=$(abspath $(ANSIBLE_VENV)) nice -n 10 packaging/rollout-test $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR) $(FUZZ_DIR)
