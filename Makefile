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

GO_TEST_FLAGS ?= -count=1 -timeout=20m

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  %-18s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: ## Generate the CRD and RBAC manifests from the Go types and markers.
	$(CONTROLLER_GEN) rbac:roleName=manager-role crd paths="./api/...;./internal/controller/..." output:crd:artifacts:config=config/crd/bases

.PHONY: generate
generate: ## Generate the DeepCopy methods of the API types.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run go fmt.
	$(GO) fmt ./...

.PHONY: vet
vet: ## Run go vet.
	$(GO) vet ./...

.PHONY: test
test: manifests generate vet envtest ## Run every test against a real kube-apiserver and etcd.
	$(GO) test $(GO_TEST_FLAGS) ./...

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

##@ Build

.PHONY: build
build: manifests generate ## Build the manager binary.
	$(GO) build -o $(BIN)/manager ./cmd/manager

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

##@ Benchmarks

# bench-scale measures bin/manager from this tree as a black box; set
# MANAGER_BEFORE to a second manager binary to measure both, scenario by
# scenario, in one run (the "before" and "after" columns of
# docs/benchmarks.md). SCENARIO picks scenarios (comma-separated).
MANAGER_BEFORE ?=
SCENARIO ?=

.PHONY: bench-scale
bench-scale: demo-build ## Run the black-box scale benchmark (about 15 minutes; twice that with MANAGER_BEFORE).
	@$(GO) build -o $(BIN)/scale ./hack/scale
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
# image, so the committed kustomizations never change.
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
	  echo "- ../../config/default"; \
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
