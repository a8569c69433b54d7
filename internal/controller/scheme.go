package controller

import (
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	swv1 "github.com/servicewatch/servicewatch/api/v1alpha1"
)

// NewScheme returns a scheme with the built-in types and the ServiceWatch
// types: what the manager and the tests talk to the API server with.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := swv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}
