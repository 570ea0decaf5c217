# ZeroNF: the two commands are `make demo` and `make test`.
BUILD ?= build
PY := .venv/bin/python
BENCH ?=
FUZZ_S ?= 60
SOAK_S ?= 600
FUZZ_BUILD ?= build-fuzz
ASAN_BUILD ?= build-asan
FUZZ_TARGETS := flow_parse dpi_parse flowmon routes ctl_json oft_key ofp_msgs nsh \
	firewall ratelimit nat maglev

.PHONY: all setup build demo test unit pytest bench dpi-report clean fuzz \
	sanitize schema k8s test-cluster crds

all: build

setup:
	@scripts/setup.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD)

build: setup $(BUILD)/build.ninja
	ninja -C $(BUILD)

# schema/control.json and the method reference of docs/control-protocol.md,
# generated from the manager's command registry (a test checks them).
schema: build
	$(PY) scripts/gen_schema.py --build $(BUILD)

demo: build
	$(PY) scripts/demo.py --build $(BUILD)

unit: build
	meson test -C $(BUILD) --print-errorlogs

pytest: build
	ZERONF_BUILD="$(abspath $(BUILD))" $(PY) -m pytest -q tests

# The envtest layer's API server and etcd (scripts/k8s-build.sh apiserver:
# ~12 min of compiling on a cold cache) build at nice 19 while pytest runs,
# in the CPU time pytest's system tests leave idle; its output is in
# $(BUILD)/k8s-build.log, and a failed pytest stops it.
test: build
	meson test -C $(BUILD) --print-errorlogs
	@setsid nice -n 19 scripts/k8s-build.sh apiserver \
	    > "$(BUILD)/k8s-build.log" 2>&1 & kb=$$!; \
	ZERONF_BUILD="$(abspath $(BUILD))" $(PY) -m pytest -q -ra tests || \
	    { rc=$$?; kill -- -$$kb 2>/dev/null; wait $$kb; exit $$rc; }; \
	echo "waiting for scripts/k8s-build.sh apiserver ($(BUILD)/k8s-build.log)"; \
	wait $$kb || { cat "$(BUILD)/k8s-build.log"; exit 1; }
	cd k8s && $(GO) vet ./... && { test -z "$$($(GOFMT) -l .)" || \
	    { $(GOFMT) -l . ; echo "gofmt: not formatted (gofmt -w k8s)"; exit 1; }; }
	cd k8s && ZERONF_ENVTEST=1 $(GO) test ./...
	$(MAKE) --no-print-directory sanitize
	$(MAKE) --no-print-directory fuzz FUZZ_S=5

# ZeroNF's Kubernetes pieces (k8s/: Go, as that ecosystem's are), static,
# into $(BUILD)/k8s: what the cluster's images are made of.
GO ?= /usr/local/go/bin/go
GOFMT ?= /usr/local/go/bin/gofmt
k8s: build
	cd k8s && CGO_ENABLED=0 $(GO) build -trimpath -o "$(abspath $(BUILD))/k8s/" ./cmd/...

# The CRDs (k8s/config/crd) and deep copies, generated from the API types
# (k8s/api/v1alpha1), and the operator's role (k8s/config/rbac, from its
# markers) by controller-gen; a test checks they are current.
crds:
	cd k8s && $(GO) tool controller-gen object paths=./api/... \
	    crd:crdVersions=v1 output:crd:dir=config/crd
	cd k8s && $(GO) tool controller-gen rbac:roleName=zeronf-operator \
	    paths=./operator/... output:rbac:dir=config/rbac/operator
	cd k8s && $(GO) tool controller-gen rbac:roleName=zeronf-node \
	    paths=./nodeagent/... output:rbac:dir=config/rbac/node

# A real Kubernetes cluster on this machine (scripts/cluster.sh, upstream
# binaries built by scripts/k8s-build.sh) and ZeroNF on it: up for the
# tests, down after them, nothing left (docs/kubernetes.md).
test-cluster: k8s
	@scripts/setup.sh --cluster
	scripts/k8s-build.sh
	ZERONF_CLUSTER_TESTS=1 ZERONF_BUILD="$(abspath $(BUILD))" $(PY) -m pytest -q -ra tests/cluster

# libFuzzer targets (fuzz/), clang with AddressSanitizer and UBSan, each
# for FUZZ_S seconds on a corpus seeded from real traffic (fuzz/run.py).
fuzz: setup
	@test -f $(FUZZ_BUILD)/build.ninja || CC=clang meson setup $(FUZZ_BUILD) \
	    -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false \
	    -Dbuildtype=debugoptimized
	ninja -C $(FUZZ_BUILD) $(addprefix fuzz/zn-fuzz-,$(FUZZ_TARGETS)) \
	    tests/unit/zn-unit
	$(PY) fuzz/run.py --build "$(abspath $(FUZZ_BUILD))" --seconds $(FUZZ_S)

# The C unit tests and a packet/system subset on an ASan+UBSan build
# (tests/sanitize.sh says how DPDK processes run under it).
sanitize: setup
	@test -f $(ASAN_BUILD)/build.ninja || meson setup $(ASAN_BUILD) \
	    -Db_sanitize=address,undefined -Db_lundef=false \
	    -Dbuildtype=debugoptimized
	ninja -C $(ASAN_BUILD)
	tests/sanitize.sh "$(abspath $(ASAN_BUILD))"

bench: build
	@scripts/setup.sh --bench
	@case "$(BENCH)" in ""|k8s) $(MAKE) --no-print-directory k8s && \
	    scripts/setup.sh --cluster && scripts/k8s-build.sh ;; esac
	ZERONF_BUILD="$(abspath $(BUILD))" SOAK_S=$(SOAK_S) $(PY) bench/run.py $(if $(BENCH),--only $(BENCH))

# make dpi-report PCAP=in.pcap OUT=flows.out: the capture through a manager
# and the dpi NF; its flow report in ndpiReader's -w format.
dpi-report: build
	@test -n "$(PCAP)" -a -n "$(OUT)" || { echo "usage: make dpi-report PCAP=in.pcap OUT=flows.out"; exit 2; }
	ZERONF_BUILD="$(abspath $(BUILD))" $(PY) scripts/dpi_report.py "$(PCAP)" "$(OUT)"

clean:
	rm -rf $(BUILD)
