//go:build tools

// Package tools pins the node and control-plane commands that
// `make test-e2e` builds for its one-node cluster (kube-apiserver and etcd
// come from hack/envtest, shared with the envtest suites). A module of its
// own, so that neither the operator's module nor hack/envtest carries the
// kubelet's dependencies.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
