package storagemigration

import (
	"errors"
	"slices"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestPlanFor(t *testing.T) {
	status := &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}}
	for _, c := range []struct {
		name     string
		versions []apiextensionsv1.CustomResourceDefinitionVersion
		stored   []string
		want     plan
		wantErr  error
	}{{
		name: "the previous release: v1alpha1 alone",
		versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1alpha1", Served: true, Storage: true, Subresources: status}},
		stored: []string{"v1alpha1"},
		want:   plan{group: "g", storage: "v1alpha1", served: []string{"v1alpha1"}, subresourceStatus: true},
	}, {
		name: "just upgraded: objects may still be v1alpha1",
		versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1alpha1", Served: true, Subresources: status},
			{Name: "v1beta1", Served: true, Storage: true, Subresources: status}},
		stored: []string{"v1alpha1", "v1beta1"},
		want:   plan{group: "g", storage: "v1beta1", served: []string{"v1alpha1", "v1beta1"}, rewrite: true, subresourceStatus: true},
	}, {
		name: "migrated",
		versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1alpha1", Served: true, Subresources: status},
			{Name: "v1beta1", Served: true, Storage: true, Subresources: status}},
		stored: []string{"v1beta1"},
		want:   plan{group: "g", storage: "v1beta1", served: []string{"v1alpha1", "v1beta1"}, subresourceStatus: true},
	}, {
		name: "storedVersions in another order still names an old version",
		versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1alpha1", Served: true},
			{Name: "v1beta1", Served: true, Storage: true}},
		stored: []string{"v1beta1", "v1alpha1"},
		want:   plan{group: "g", storage: "v1beta1", served: []string{"v1alpha1", "v1beta1"}, rewrite: true},
	}, {
		name: "a storage version without /status is written as a whole",
		versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1alpha1", Served: false, Subresources: status},
			{Name: "v1beta1", Served: true, Storage: true}},
		stored: []string{"v1alpha1", "v1beta1"},
		want:   plan{group: "g", storage: "v1beta1", served: []string{"v1beta1"}, rewrite: true},
	}, {
		name: "no storage version",
		versions: []apiextensionsv1.CustomResourceDefinitionVersion{
			{Name: "v1alpha1", Served: true}},
		wantErr: errNoStorageVersion,
	}} {
		t.Run(c.name, func(t *testing.T) {
			crd := &apiextensionsv1.CustomResourceDefinition{
				Spec:   apiextensionsv1.CustomResourceDefinitionSpec{Group: "g", Versions: c.versions},
				Status: apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: c.stored},
			}
			got, err := planFor(crd)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("error %v, want %v", err, c.wantErr)
			}
			if err != nil {
				return
			}
			if got.group != c.want.group || got.storage != c.want.storage || !slices.Equal(got.served, c.want.served) ||
				got.rewrite != c.want.rewrite || got.subresourceStatus != c.want.subresourceStatus {
				t.Errorf("plan %+v, want %+v", got, c.want)
			}
		})
	}
}
