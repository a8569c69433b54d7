# servicewatch: build, generate, test.
#
# Everything the targets need is built from Go modules: controller-gen is a
# `tool` of go.mod, and the envtest control plane (kube-apiserver, etcd) is
# built from source by the tools module in hack/envtest. Nothing is downloaded
# as a release binary.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

IMG ?= servicewatch:dev
GO ?= go
CONTROLLER_GEN ?= $(GO) tool controller-gen

BIN := $(CURDIR)/bin
ENVTEST_DIR := $(BIN)/k8s
KUBE_APISERVER := $(ENVTEST_DIR)/kube-apiserver
ETCD := $(ENVTEST_DIR)/etcd
# KUBEBUILDER_ASSETS tells controller-runtime's envtest where the control
# plane binaries are.
export KUBEBUILDER_ASSETS := $(ENVTEST_DIR)

# Locally, go test reuses the result of a package whose code, test files and
# the files and environment variables its tests read have not changed; CI
# (CI=true, as .ci/run sets it) runs every test again.
GO_TEST_FLAGS ?= -timeout=20m $(if $(filter true,$(CI)),-count=1)

# promtool and helm are built from Go modules into bin/, one file per
# version, so a version bump here rebuilds them and nothing is downloaded as a
# release binary. Each is the newest release whose go.mod needs Go <= 1.26.
PROMETHEUS_VERSION ?= v0.316.0
PROMTOOL := $(BIN)/promtool-$(PROMETHEUS_VERSION)
# The Prometheus server of the end-to-end tests, from the same module version
# and build tags as promtool, so a second build reuses most of the first.
PROMETHEUS := $(BIN)/prometheus-$(PROMETHEUS_VERSION)
HELM_VERSION ?= v4.3.1
HELM := $(BIN)/helm-$(HELM_VERSION)
# The chart tests (test/chart, test/monitoring) run this helm.
export HELM

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: ## Generate the CRD and RBAC manifests from the Go types and markers.
	hack/keepmtime.sh config/crd/bases config/rbac -- $(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/...;./internal/controller/...;./internal/accountcontroller/...;./internal/storagemigration/..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: ## Write api/v1alpha1 from api/v1beta1 (one schema, two served versions) and the DeepCopy methods of the API types.
	hack/keepmtime.sh api -- hack/apicopy/copy.sh
	hack/keepmtime.sh api -- $(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run go fmt.
	$(GO) fmt ./...
	cd test/monitoring && $(GO) fmt ./...

.PHONY: vet
vet: ## Run go vet.
	$(GO) vet ./...
	cd test/monitoring && $(GO) vet ./...

# Linted: the main module and test/monitoring. hack/envtest, the other
# module, is a `//go:build tools` file of blank imports: linting it would
# type-check all of Kubernetes to find nothing.
.PHONY: lint
lint: golangci-lint ## Run golangci-lint (linters and formatters of .golangci.yml) over the whole module.
	$(GOLANGCI_LINT) run ./...
	cd test/monitoring && $(GOLANGCI_LINT) run --config ../../.golangci.yml ./...

.PHONY: lint-fix
lint-fix: golangci-lint ## Run golangci-lint and apply the fixes it knows (formatting, imports, misspellings).
	$(GOLANGCI_LINT) run --fix ./...
	cd test/monitoring && $(GOLANGCI_LINT) run --config ../../.golangci.yml --fix ./...

# manifests and generate keep the modification time of a file they rewrite
# unchanged (hack/keepmtime.sh), so that go test's cache still holds the
# packages whose tests read them.
# test/monitoring is a module of its own (it needs Prometheus's PromQL
# parser, whose dependencies the manager should not build with).
.PHONY: test
test: manifests generate vet envtest $(HELM) ## Run every test against a real kube-apiserver and etcd.
	$(GO) test $(GO_TEST_FLAGS) ./...
	cd test/monitoring && $(GO) test $(GO_TEST_FLAGS) ./...

.PHONY: envtest
envtest: $(KUBE_APISERVER) $(ETCD) ## Build kube-apiserver and etcd for envtest into bin/k8s (once).

$(KUBE_APISERVER): hack/envtest/go.mod hack/envtest/go.sum
	@mkdir -p $(ENVTEST_DIR)
	@echo ">> building kube-apiserver from Go modules (first time: several minutes)"
	cd hack/envtest && $(GO) build -trimpath -o $@ k8s.io/kubernetes/cmd/kube-apiserver

$(ETCD): hack/envtest/go.mod hack/envtest/go.sum
	@mkdir -p $(ENVTEST_DIR)
	@echo ">> building etcd from Go modules (first time: a minute or two)"
	cd hack/envtest && $(GO) build -trimpath -o $@ go.etcd.io/etcd/server/v3

##@ Tools

# golangci-lint is installed from Go modules at a pinned version. The binary
# carries the version in its name, so changing the pin builds a new one and
# leaving it alone never rebuilds; bin/golangci-lint links to the pinned one.
# It is not a `tool` of go.mod: its dependencies would clash with ours.
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT_PINNED := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
GOLANGCI_LINT := $(BIN)/golangci-lint

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT_PINNED) ## Build the pinned golangci-lint into bin/ (once per version).
	@if [ "$$(readlink $(GOLANGCI_LINT) 2>/dev/null)" != "$(notdir $(GOLANGCI_LINT_PINNED))" ]; then \
		ln -sfn $(notdir $(GOLANGCI_LINT_PINNED)) $(GOLANGCI_LINT); \
	fi

# Installed into a scratch GOBIN and moved into place, because bin/ is shared
# by every worktree and a half-written binary must never be run.
$(GOLANGCI_LINT_PINNED):
	@echo ">> building golangci-lint $(GOLANGCI_LINT_VERSION) from Go modules (first time: a few minutes)"
	@mkdir -p $(BIN)
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	GOBIN="$$tmp" GOTOOLCHAIN=local $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION); \
	mv -f "$$tmp/golangci-lint" $@
##@ Monitoring

# remove_all_sd leaves Prometheus's service discoveries out of promtool: rule
# tests need none, and one of them depends on a module version the module
# proxy does not serve. go install runs in a scratch GOBIN and the binary is
# moved into place, so a build that is cut short leaves nothing half-written.
$(PROMTOOL):
	@echo ">> building promtool $(PROMETHEUS_VERSION) from Go modules (first time: a few minutes)"
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	GOBIN="$$tmp" $(GO) install -tags remove_all_sd github.com/prometheus/prometheus/cmd/promtool@$(PROMETHEUS_VERSION); \
	mkdir -p $(BIN); mv "$$tmp/promtool" $@

$(PROMETHEUS):
	@echo ">> building prometheus $(PROMETHEUS_VERSION) from Go modules (first time: a few minutes)"
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	GOBIN="$$tmp" $(GO) install -tags remove_all_sd github.com/prometheus/prometheus/cmd/prometheus@$(PROMETHEUS_VERSION); \
	mkdir -p $(BIN); mv "$$tmp/prometheus" $@

$(HELM):
	@echo ">> building helm $(HELM_VERSION) from Go modules (first time: a few minutes)"
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	GOBIN="$$tmp" $(GO) install helm.sh/helm/v4/cmd/helm@$(HELM_VERSION); \
	mkdir -p $(BIN); mv "$$tmp/helm" $@

.PHONY: promtool
promtool: $(PROMTOOL) ## Build promtool into bin/.

.PHONY: helm
helm: $(HELM) ## Build helm into bin/.

.PHONY: test-rules
test-rules: $(PROMTOOL) ## Check the alerting rules and run their promtool unit tests (config/prometheus/rules_test.yaml).
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(GO) run ./hack/promrules < config/prometheus/rules.yaml > "$$tmp/rules.yaml"; \
	cp config/prometheus/rules_test.yaml "$$tmp/"; \
	$(PROMTOOL) check rules "$$tmp/rules.yaml"; \
	cd "$$tmp" && $(PROMTOOL) test rules rules_test.yaml

##@ Helm chart

CHART := charts/servicewatch
# What the chart ships from config/, as copies a test keeps equal (Helm
# templates cannot read files outside the chart).
CHART_FILES := \
	config/crd/bases/cloud.servicewatch.io_servicewatches.yaml=crd.yaml \
	config/crd/bases/cloud.servicewatch.io_clustercloudaccounts.yaml=crd-clustercloudaccounts.yaml \
	config/rbac/account_secrets_role.yaml=rbac/account_secrets_role.yaml \
	config/rbac/role.yaml=rbac/role.yaml \
	config/rbac/leader_election_role.yaml=rbac/leader_election_role.yaml \
	config/rbac/metrics_auth_role.yaml=rbac/metrics_auth_role.yaml \
	config/rbac/metrics_reader_role.yaml=rbac/metrics_reader_role.yaml \
	config/rbac/servicewatch_editor_role.yaml=rbac/servicewatch_editor_role.yaml \
	config/rbac/servicewatch_viewer_role.yaml=rbac/servicewatch_viewer_role.yaml \
	config/prometheus/rules.yaml=rules.yaml \
	config/grafana/servicewatch.json=servicewatch.json

.PHONY: chart-sync
chart-sync: manifests ## Copy the CRD, RBAC rules, alerting rules and dashboard of config/ into the chart's files/.
	@for pair in $(CHART_FILES); do \
		src="$${pair%%=*}"; dst="$(CHART)/files/$${pair#*=}"; \
		mkdir -p "$$(dirname "$$dst")"; cp "$$src" "$$dst"; \
	done

# Value sets the chart is linted, rendered and tested with.
CHART_VALUES := $(wildcard $(CHART)/ci/*-values.yaml)

.PHONY: helm-lint
helm-lint: $(HELM) ## Lint the chart and render it with each value set of charts/servicewatch/ci.
	$(HELM) lint --strict $(CHART)
	@for v in $(CHART_VALUES); do \
		echo ">> helm lint and template with $$v"; \
		$(HELM) lint --strict $(CHART) -f "$$v" >/dev/null; \
		$(HELM) template servicewatch $(CHART) --namespace servicewatch-system -f "$$v" >/dev/null; \
	done

DEMO_KUBECONFIG ?= $(BIN)/demo.kubeconfig

# --take-ownership: the demo installed the CRD itself; the release adopts it,
# as it would on a cluster where config/crd was applied before.
.PHONY: helm-install
helm-install: $(HELM) ## Install or upgrade the chart into the cluster of bin/demo.kubeconfig (run `make demo` first), namespace servicewatch-system.
	$(HELM) upgrade --install servicewatch $(CHART) --kubeconfig $(DEMO_KUBECONFIG) \
		--namespace servicewatch-system --create-namespace --take-ownership $(HELM_INSTALL_FLAGS)

##@ Build

.PHONY: build
build: manifests generate ## Build the manager binary.
	$(GO) build -o $(BIN)/manager ./cmd/manager

# The kubectl plugin: kubectl runs bin/kubectl-servicewatch as `kubectl
# servicewatch` once it is on the PATH (or `go install ./cmd/kubectl-servicewatch`).
.PHONY: plugin
plugin: ## Build the kubectl plugin into bin/kubectl-servicewatch.
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(GO) build -trimpath -ldflags "-s -w" -o "$$tmp/kubectl-servicewatch" ./cmd/kubectl-servicewatch; \
	mkdir -p $(BIN); mv -f "$$tmp/kubectl-servicewatch" $(BIN)/kubectl-servicewatch

.PHONY: run
run: manifests generate ## Run the manager against the cluster in ~/.kube/config.
	$(GO) run ./cmd/manager

##@ Demo

# GO_PROGRESS turns the package list of `go build -v` into a progress line
# every 100 packages, so a first build that takes minutes shows it is moving.
GO_PROGRESS := awk '/^>>/ { print; fflush(); next } { n++; if (n % 100 == 0) { printf "   ... %d packages compiled (now %s)\n", n, $$0; fflush() } } END { if (n) printf "   ... %d packages compiled\n", n }'

.PHONY: demo-build
demo-build: ## Build the control plane (first run: minutes), the manager, the fake cloud and the demo into bin/.
	@if [ ! -x $(KUBE_APISERVER) ] || [ ! -x $(ETCD) ]; then \
		echo ">> first run: building kube-apiserver and etcd from Go modules into bin/k8s; this takes several minutes on 2 cores"; \
		GOFLAGS="$${GOFLAGS:-} -v" $(MAKE) --no-print-directory envtest 2>&1 | $(GO_PROGRESS); \
	fi
	@echo ">> building manager, fakecloud and demo into bin/ (first run: a minute or two)"
	@$(GO) build -v -o $(BIN)/ ./cmd/manager ./cmd/fakecloud ./hack/demo 2>&1 | $(GO_PROGRESS)

.PHONY: demo
demo: demo-build ## Run the operator against a local control plane and the fake cloud until Ctrl-C.
	@$(BIN)/demo

.PHONY: demo-check
demo-check: demo-build ## Run the demo non-interactively: exit 0 only if the sample becomes Ready with the expected counts.
	@$(BIN)/demo --check

##@ End to end

# make test-e2e builds a one-node cluster on this machine and runs test/e2e
# against it (see DEVELOPMENT.md, "Test on a real cluster"): it needs root, apt and
# about 4 GB of disk. The node's components are built from Go modules by the
# tools module hack/e2e/k8s, in one go build, into a directory named after
# the Kubernetes version pinned there: changing the pin builds them again,
# nothing else does. kube-apiserver and etcd are envtest's (bin/k8s).
E2E_K8S_VERSION := $(shell awk '{ for (i = 1; i < NF; i++) if ($$i == "k8s.io/kubernetes" && $$(i+1) ~ /^v/) { print $$(i+1); exit } }' hack/e2e/k8s/go.mod)
E2E_K8S_BIN := $(BIN)/e2e/k8s-$(E2E_K8S_VERSION)
E2E_K8S_COMMANDS := kubelet kube-controller-manager kube-scheduler kube-proxy kubectl
# Debian packages the node runs on.
E2E_PACKAGES := containerd runc containernetworking-plugins iptables conntrack buildah curl

.PHONY: e2e-packages
e2e-packages: ## Install the Debian packages the end-to-end cluster needs (apt-get; once).
	@missing=""; for p in $(E2E_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo ">> apt-get install$$missing"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

.PHONY: e2e-k8s
e2e-k8s: $(E2E_K8S_BIN)/.built ## Build kubelet, kube-controller-manager, kube-scheduler, kube-proxy and kubectl into bin/e2e (once per version).

# One go build for all five (link time dominates: about 10 minutes cold on 2
# cores), into a scratch directory moved into place when complete.
$(E2E_K8S_BIN)/.built: hack/e2e/k8s/go.mod hack/e2e/k8s/go.sum
	@echo ">> building $(E2E_K8S_COMMANDS) $(E2E_K8S_VERSION) from Go modules (first time: about 10 minutes)"
	@mkdir -p $(BIN)/e2e; tmp=$$(mktemp -d $(BIN)/e2e/k8s-build.XXXXXX); trap 'rm -rf "$$tmp"' EXIT; \
	v=$(E2E_K8S_VERSION); minor=$${v#v*.}; minor=$${minor%%.*}; \
	cd hack/e2e/k8s && GOTOOLCHAIN=local $(GO) build -trimpath -o "$$tmp/" \
		-ldflags "-s -w -X k8s.io/component-base/version.gitVersion=$$v -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$$minor -X k8s.io/component-base/version.gitTreeState=clean" \
		$(addprefix k8s.io/kubernetes/cmd/,$(E2E_K8S_COMMANDS)); \
	rm -rf $(E2E_K8S_BIN); mv "$$tmp" $(E2E_K8S_BIN); touch $@

.PHONY: test-e2e
test-e2e: e2e-packages envtest e2e-k8s $(HELM) $(PROMETHEUS) ## Build the images and a one-node cluster, run test/e2e against it, tear it all down (root; see DEVELOPMENT.md).
	K8S_BIN=$(E2E_K8S_BIN) ENVTEST_BIN=$(ENVTEST_DIR) HELM=$(HELM) PROMETHEUS=$(PROMETHEUS) E2E_DIR=$(BIN)/e2e hack/e2e/run.sh

##@ Benchmarks

# bench-scale measures bin/manager from this tree as a black box; set
# MANAGER_BEFORE to a second manager binary to measure both, scenario by
# scenario, in one run (the "before" and "after" columns of
# docs/benchmarks.md). SCENARIO picks scenarios (comma-separated).
MANAGER_BEFORE ?=
SCENARIO ?=

.PHONY: bench-scale
bench-scale: demo-build ## Run the black-box scale benchmark (about 25 minutes; twice that with MANAGER_BEFORE).
	@$(GO) build -o $(BIN)/scale ./test/scale
	@$(BIN)/scale $(if $(MANAGER_BEFORE),--before $(MANAGER_BEFORE)) $(if $(SCENARIO),--scenario $(SCENARIO))

##@ Deployment

# KUBECTL is any kubectl with kustomize built in (v1.14+).
KUBECTL ?= kubectl

.PHONY: install
install: manifests ## Install the CRD into the cluster of the current kubeconfig.
	$(KUBECTL) kustomize config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests ## Remove the CRD, and with it every ServiceWatch, from the cluster.
	$(KUBECTL) kustomize config/crd | $(KUBECTL) delete --ignore-not-found -f -

# deploy renders config/default through an overlay under bin/ that sets the
# image, so the committed kustomizations never change. The path to
# config/default is relative to where bin/ really is, which is elsewhere when
# bin/ is a symlink (a git worktree sharing another checkout's bin/).
.PHONY: deploy
deploy: manifests ## Deploy the operator with image IMG to the cluster of the current kubeconfig.
	@mkdir -p $(BIN)/deploy
	@img='$(IMG)'; name="$$img"; tag=""; digest=""; \
	case "$$img" in \
		*@*) name="$${img%@*}"; digest="$${img#*@}" ;; \
		*) last="$${img##*/}"; if [[ "$$last" == *:* ]]; then name="$${img%:*}"; tag="$${img##*:}"; fi ;; \
	esac; \
	{ echo "# Generated by make deploy; do not edit."; \
	  echo "apiVersion: kustomize.config.k8s.io/v1beta1"; \
	  echo "kind: Kustomization"; \
	  echo "resources:"; \
	  echo "- $$(realpath --relative-to="$$(realpath $(BIN)/deploy)" $(CURDIR)/config/default)"; \
	  echo "images:"; \
	  echo "- name: servicewatch"; \
	  echo "  newName: $$name"; \
	  if [ -n "$$tag" ]; then echo "  newTag: \"$$tag\""; fi; \
	  if [ -z "$$tag" ] && [ -z "$$digest" ]; then echo "  newTag: latest"; fi; \
	  if [ -n "$$digest" ]; then echo "  digest: $$digest"; fi; \
	} > $(BIN)/deploy/kustomization.yaml
	$(KUBECTL) kustomize $(BIN)/deploy | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: ## Remove the operator, its RBAC and the CRD (and every ServiceWatch) from the cluster.
	$(KUBECTL) kustomize config/default | $(KUBECTL) delete --ignore-not-found -f -

.PHONY: docker-build
docker-build: ## Build the manager's container image IMG (needs Docker or a compatible CLI).
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the manager's container image IMG.
	$(CONTAINER_TOOL) push $(IMG)

CONTAINER_TOOL ?= docker

##@ Documentation

CRD_REF_DOCS ?= $(GO) tool crd-ref-docs

.PHONY: docs
docs: ## Generate docs/api.md, the spec and status reference, from the Go types.
	$(CRD_REF_DOCS) --source-path=./api --config=hack/api-docs/config.yaml --renderer=markdown --output-path=docs/api.md --log-level=WARN

.PHONY: docs-check
docs-check: ## Fail when docs/api.md is not what `make docs` generates.
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(CRD_REF_DOCS) --source-path=./api --config=hack/api-docs/config.yaml --renderer=markdown --output-path="$$tmp/api.md" --log-level=WARN; \
	if ! diff -u docs/api.md "$$tmp/api.md"; then echo "docs/api.md is stale: run make docs" >&2; exit 1; fi
