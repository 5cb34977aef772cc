# orch build targets. `make build` needs only Go; `make test` runs the whole
# suite (as root, see scripts/test.sh); `make bench` runs the API benchmark and, as root, the pod benchmarks
# recorded in docs/benchmarks.md; `make charts` installs real Helm charts (docs/charts.md).
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo v0.1.0-dev)
COMMIT    ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
PKG       := github.com/orch/orch/internal/version
LDFLAGS   := -s -w -X $(PKG).Version=$(VERSION) -X $(PKG).GitCommit=$(COMMIT) -X $(PKG).BuildDate=$(DATE) $(shell scripts/lib/kubectl-ldflags.sh)
BUILD      = CGO_ENABLED=0 $(GO) build $(shell GO='$(GO)' scripts/lib/go-build-flags.sh) -ldflags '$(LDFLAGS)'
OUT       ?= bin

.PHONY: build test unit cross release bench kubectl helm charts cert-manager conformance reliability test-install clean

build:
	$(BUILD) -o $(OUT)/orch .

test:
	./scripts/test.sh

unit:
	$(GO) test -short ./...

cross:
	GOOS=linux GOARCH=amd64 $(BUILD) -o $(OUT)/orch-linux-amd64 .
	GOOS=linux GOARCH=arm64 $(BUILD) -o $(OUT)/orch-linux-arm64 .
	GOOS=linux GOARCH=arm GOARM=7 $(BUILD) -o $(OUT)/orch-linux-arm .

# release builds the release assets of docs/releases.md into $(DIST)/<version>
# (static, stripped binaries for amd64, arm64 and armv7, sha256sum-<arch>.txt,
# the air-gap bundles, install.sh) and points $(DIST)/channels/{stable,latest}
# at it. VERSION=v1.2.3 overrides `git describe`.
DIST ?= dist
release:
	DIST='$(DIST)' GO='$(GO)' ./scripts/release.sh

bench:
	./bench/run.sh

kubectl:
	./scripts/build-kubectl.sh

helm:
	./scripts/build-helm.sh

# charts installs the real charts of $(CHARTS) with the real Helm on a real
# node (as root; builds Helm and the charts' programs from source; results
# in docs/charts.md).
CHARTS ?= ../shared/charts
charts:
	CHARTS=$(abspath $(CHARTS)) $(GO) test -tags charts -count=1 -timeout 30m -v -run TestCharts ./test/e2e/

# cert-manager's programs are built by hand (docs/charts.md): CERT_MANAGER_BIN=<dir>
cert-manager:
	CHARTS=$(abspath $(CHARTS)) CERT_MANAGER_BIN=$(abspath $(CERT_MANAGER_BIN)) $(GO) test -tags charts -count=1 -timeout 30m -v -run TestCertManager ./test/e2e/

# conformance runs the upstream Kubernetes v1.37.1 [Conformance] specs
# (tools/conformance, built from source) on a throw-away cluster of
# scripts/testcluster.sh: a parallel pass, then the [Serial] specs (as
# root; hours; CONFORMANCE_NODES=3 for a server + agents on three nodes;
# results in docs/conformance.md).
CONFORMANCE_NODES ?= 1
conformance:
	CONFORMANCE_NODES=$(CONFORMANCE_NODES) ./scripts/conformance.sh

# reliability runs the fault-injection proof of issue 11 (test/reliability,
# as root): RELIABILITY_SERVERS servers in network namespaces under a client
# load, each fault for RELIABILITY_ROUNDS rounds, histories checked with
# porcupine; the results table goes to $(OUT)/reliability.md (docs/reliability.md).
RELIABILITY_SERVERS ?= 3,5
RELIABILITY_ROUNDS  ?= 10
reliability:
	mkdir -p $(OUT)
	ORCH_RELIABILITY=1 ORCH_RELIABILITY_SERVERS=$(RELIABILITY_SERVERS) ORCH_RELIABILITY_ROUNDS=$(RELIABILITY_ROUNDS) \
		ORCH_RELIABILITY_REPORT=$(abspath $(OUT))/reliability.md \
		$(GO) test -count=1 -timeout 0 -v -run TestFaults ./test/reliability/

# test-install installs `make release` output with scripts/install.sh on
# Debian boxes booted in systemd-nspawn (test/install, as root; a few
# minutes): server, agent, re-run, wrong checksum, air gap, uninstall.
test-install:
	ORCH_TEST_INSTALL=1 $(GO) test -count=1 -timeout 30m -v -run TestSystem ./test/install/

clean:
	rm -rf $(OUT)
