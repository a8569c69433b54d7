package storagemigration

// This file holds the pure rules of the managed-fields pass (managedfields.go
// writes what they compute): which entries name a version the CRD no longer
// serves, and those entries renamed to its storage version.
//
// The API server converts an object to the version of each of its managed
// fields entries whenever someone applies or updates it. Once a version is
// removed from a CRD, an entry that still names it makes every apply fail
// ("request to convert CR to an invalid group/version",
// kubernetes/kubernetes#111937): GitOps tools stop working on the object.
// Dropping such entries would lose who owns which field, and a GitOps tool
// would then leave behind the fields it stops applying. Where the versions
// share one schema (conversion None, as servicewatch's do), an entry's
// field set is as true of the storage version as of the version it names,
// so the entry is renamed instead, and merged with the manager's own entry
// of that version when it has one.

import (
	"encoding/json"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// staleEntry says whether entry names a version of group that served does
// not accept.
func staleEntry(entry metav1.ManagedFieldsEntry, group string, served func(version string) bool) bool {
	g, v, ok := strings.Cut(entry.APIVersion, "/")
	return ok && g == group && !served(v)
}

// countStaleEntries is how many of entries are stale (staleEntry).
func countStaleEntries(entries []metav1.ManagedFieldsEntry, group string, served func(version string) bool) int {
	n := 0
	for _, e := range entries {
		if staleEntry(e, group, served) {
			n++
		}
	}
	return n
}

// renameStaleEntries returns entries with every stale one (staleEntry)
// naming group/to instead, and how many were stale. A renamed entry that now
// has the identity of another (the same manager, operation and subresource
// and, but for applies, API version: what the API server keys managed fields
// by) is merged into it: the union of their field sets, at the later of
// their times. The order of the other entries is kept. entries itself is not
// changed.
func renameStaleEntries(entries []metav1.ManagedFieldsEntry, group string, served func(version string) bool, to string) ([]metav1.ManagedFieldsEntry, int, error) {
	out := make([]metav1.ManagedFieldsEntry, 0, len(entries))
	at := map[identity]int{} // identity → index in out
	stale := 0
	for _, e := range entries {
		e = *e.DeepCopy()
		if staleEntry(e, group, served) {
			stale++
			e.APIVersion = group + "/" + to
		}
		id := identityOf(e)
		i, seen := at[id]
		if !seen {
			at[id] = len(out)
			out = append(out, e)
			continue
		}
		merged, err := mergeEntries(out[i], e)
		if err != nil {
			return nil, stale, fmt.Errorf("merging the managed fields of %q (%s): %w", e.Manager, e.Operation, err)
		}
		out[i] = merged
	}
	return out, stale, nil
}

// identity is what the API server keys an entry by (its manager
// identifier): applies are one entry per manager whatever the version.
type identity struct {
	manager, operation, apiVersion, subresource string
}

func identityOf(e metav1.ManagedFieldsEntry) identity {
	id := identity{manager: e.Manager, operation: string(e.Operation), apiVersion: e.APIVersion, subresource: e.Subresource}
	if e.Operation == metav1.ManagedFieldsOperationApply {
		id.apiVersion = ""
	}
	return id
}

// mergeEntries is one entry owning the fields of both a and b, at the later
// time.
func mergeEntries(a, b metav1.ManagedFieldsEntry) (metav1.ManagedFieldsEntry, error) {
	fields, err := unionFields(a.FieldsV1, b.FieldsV1)
	if err != nil {
		return a, err
	}
	a.FieldsV1 = fields
	if b.Time != nil && (a.Time == nil || a.Time.Before(b.Time)) {
		a.Time = b.Time
	}
	return a, nil
}

// unionFields is the union of two FieldsV1 sets. Both are trees of JSON
// objects whose keys are path elements ("f:spec", "k:{...}", ".") and whose
// leaves are empty objects, so the union is the deep merge of the trees.
func unionFields(a, b *metav1.FieldsV1) (*metav1.FieldsV1, error) {
	if len(a.GetRawBytes()) == 0 {
		return b, nil
	}
	if len(b.GetRawBytes()) == 0 {
		return a, nil
	}
	var ta, tb map[string]any
	if err := json.Unmarshal(a.GetRawBytes(), &ta); err != nil {
		return nil, fmt.Errorf("reading a field set: %w", err)
	}
	if err := json.Unmarshal(b.GetRawBytes(), &tb); err != nil {
		return nil, fmt.Errorf("reading a field set: %w", err)
	}
	raw, err := json.Marshal(deepMerge(ta, tb))
	if err != nil {
		return nil, fmt.Errorf("writing a field set: %w", err)
	}
	return metav1.NewFieldsV1(string(raw)), nil
}

func deepMerge(a, b map[string]any) map[string]any {
	for k, vb := range b {
		ma, aIsTree := a[k].(map[string]any)
		mb, bIsTree := vb.(map[string]any)
		if aIsTree && bIsTree {
			a[k] = deepMerge(ma, mb)
			continue
		}
		if _, ok := a[k]; !ok {
			a[k] = vb
		}
	}
	return a
}
