package kubectlplugin

import (
	"k8s.io/apimachinery/pkg/runtime"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// The API version the plugin speaks is chosen here, and only here: the
// other files name these aliases, so that moving the plugin to another
// version of the API is a change of the import above.
type (
	serviceWatch     = swv1.ServiceWatch
	serviceWatchList = swv1.ServiceWatchList
	pipe             = swv1.Pipe
	alertStatus      = swv1.AlertStatus
)

// requestedAtAnnotation asks the manager for a sync; it echoes the value in
// status.lastHandledRequestedAt once that sync is written.
const requestedAtAnnotation = swv1.RequestedAtAnnotation

// Condition types and reasons the plugin reads.
const (
	conditionReady       = swv1.ConditionReady
	conditionReconciling = swv1.ConditionReconciling
	conditionStalled     = swv1.ConditionStalled
	conditionIntervalMet = swv1.ConditionIntervalMet
	reasonRateLimited    = swv1.ReasonRateLimited
)

// resourceName is the resource as kubectl names it in its messages
// (servicewatch.cloud.servicewatch.io/NAME); the group is the same in every
// version.
const resourceName = "servicewatch.cloud.servicewatch.io"

// crdNames are the CRDs migrate works on.
func crdNames() []string { return swv1.CRDNames() }

// addAPIToScheme registers the ServiceWatch types of the version above.
func addAPIToScheme(s *runtime.Scheme) error { return swv1.AddToScheme(s) }
