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
