// Package v1beta1 contains the API types of the cloud.servicewatch.io group,
// in the version the API server stores.
//
// It is the one place the schema is written: api/v1alpha1, still served
// for the manifests written before v1beta1, is a copy of it made by
// `make generate` (hack/apicopy/copy.sh). Both versions have the same
// schema, so the CRD converts between them with no webhook (conversion:
// None), and an object reads the same in either. A change that v1alpha1
// objects could not round-trip through needs a new version and a webhook.
//
// +kubebuilder:object:generate=true
// +groupName=cloud.servicewatch.io
package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of every type in this package.
	GroupVersion = schema.GroupVersion{Group: "cloud.servicewatch.io", Version: "v1beta1"}

	// SchemeBuilder registers the types of this package with a runtime.Scheme.
	// It is apimachinery's builder, not controller-runtime's, so that
	// importing the API types pulls in no controller machinery.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the types of this package to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// addKnownTypes registers every root type of this package, with the meta
// types (ListOptions and the like) that clients send alongside them.
func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(GroupVersion, &ServiceWatch{}, &ServiceWatchList{}, &ClusterCloudAccount{}, &ClusterCloudAccountList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)
	return nil
}

// CRDNames are the names of the group's CustomResourceDefinitions, which the
// storage migration works on: the manager's at start, and
// `kubectl servicewatch migrate`.
func CRDNames() []string {
	return []string{"servicewatches." + GroupVersion.Group, "clustercloudaccounts." + GroupVersion.Group}
}
