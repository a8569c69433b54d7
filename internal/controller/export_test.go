package controller

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// NewTestReconciler is a reconciler outside any manager, whose background
// reads live in ctx, for tests that drive its steps one by one.
func NewTestReconciler(ctx context.Context, c client.Client, reader client.Reader, cloud Cloud, metrics *Metrics) *ServiceWatchReconciler {
	r := &ServiceWatchReconciler{Client: c, APIReader: reader, Cloud: cloud, Metrics: metrics, baseCtx: ctx}
	r.defaults()
	return r
}

// StartSync runs what a reconcile of a due watch runs, and returns how long
// it was told to wait (0 when the sync started).
func (r *ServiceWatchReconciler) StartSync(ctx context.Context, watch *swv1.ServiceWatch) time.Duration {
	versions := r.secretVersions(ctx, watch)
	return r.start(ctx, watch, triggerOf(watch, versions), versions).RequeueAfter
}
