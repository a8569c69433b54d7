package storagemigration

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const group = "cloud.servicewatch.io"

func servedV1beta1(v string) bool { return v == "v1beta1" }

func at(minute int) *metav1.Time {
	t := metav1.NewTime(time.Date(2026, 11, 27, 12, minute, 0, 0, time.UTC))
	return &t
}

func fields(raw string) *metav1.FieldsV1 { return metav1.NewFieldsV1(raw) }

func entry(manager string, op metav1.ManagedFieldsOperationType, version, subresource string, minute int, raw string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{
		Manager: manager, Operation: op, APIVersion: group + "/" + version, Subresource: subresource,
		Time: at(minute), FieldsType: "FieldsV1", FieldsV1: fields(raw),
	}
}

func TestRenameStaleEntries(t *testing.T) {
	const (
		spec   = `{"f:spec":{"f:interval":{}}}`
		labels = `{"f:metadata":{"f:labels":{"f:team":{}}}}`
		status = `{"f:status":{"f:pipes":{}}}`
	)
	apply, update := metav1.ManagedFieldsOperationApply, metav1.ManagedFieldsOperationUpdate
	for _, tt := range []struct {
		name      string
		in, want  []metav1.ManagedFieldsEntry
		wantStale int
	}{{
		name: "entries of served versions stay as they are",
		in:   []metav1.ManagedFieldsEntry{entry("gitops", apply, "v1beta1", "", 1, spec)},
		want: []metav1.ManagedFieldsEntry{entry("gitops", apply, "v1beta1", "", 1, spec)},
	}, {
		name:      "an apply of an unserved version now names the storage version, owning the same fields",
		in:        []metav1.ManagedFieldsEntry{entry("gitops", apply, "v1alpha1", "", 1, spec), entry("servicewatch", update, "v1beta1", "status", 2, status)},
		want:      []metav1.ManagedFieldsEntry{entry("gitops", apply, "v1beta1", "", 1, spec), entry("servicewatch", update, "v1beta1", "status", 2, status)},
		wantStale: 1,
	}, {
		name: "a manager's updates in both versions become one entry owning both field sets, at the later time",
		in: []metav1.ManagedFieldsEntry{
			entry("kubectl-edit", update, "v1alpha1", "", 5, labels),
			entry("gitops", apply, "v1beta1", "", 1, spec),
			entry("kubectl-edit", update, "v1beta1", "", 3, spec),
		},
		want: []metav1.ManagedFieldsEntry{
			entry("kubectl-edit", update, "v1beta1", "", 5, `{"f:metadata":{"f:labels":{"f:team":{}}},"f:spec":{"f:interval":{}}}`),
			entry("gitops", apply, "v1beta1", "", 1, spec),
		},
		wantStale: 1,
	}, {
		name: "the same manager's status and main-resource entries stay apart",
		in: []metav1.ManagedFieldsEntry{
			entry("servicewatch", update, "v1alpha1", "status", 1, status),
			entry("servicewatch", update, "v1beta1", "", 2, labels),
		},
		want: []metav1.ManagedFieldsEntry{
			entry("servicewatch", update, "v1beta1", "status", 1, status),
			entry("servicewatch", update, "v1beta1", "", 2, labels),
		},
		wantStale: 1,
	}, {
		name: "another group's versions are not ours to judge",
		in: []metav1.ManagedFieldsEntry{{
			Manager: "other", Operation: update, APIVersion: "example.com/v1alpha1", Time: at(1), FieldsType: "FieldsV1", FieldsV1: fields(labels),
		}},
		want: []metav1.ManagedFieldsEntry{{
			Manager: "other", Operation: update, APIVersion: "example.com/v1alpha1", Time: at(1), FieldsType: "FieldsV1", FieldsV1: fields(labels),
		}},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			before := deepCopy(tt.in)
			got, stale, err := renameStaleEntries(tt.in, group, servedV1beta1, "v1beta1")
			if err != nil {
				t.Fatal(err)
			}
			if stale != tt.wantStale {
				t.Errorf("stale = %d, want %d", stale, tt.wantStale)
			}
			if stale != countStaleEntries(tt.in, group, servedV1beta1) {
				t.Errorf("renameStaleEntries found %d stale entries, countStaleEntries %d", stale, countStaleEntries(tt.in, group, servedV1beta1))
			}
			if !equal(t, got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", show(t, got), show(t, tt.want))
			}
			if !reflect.DeepEqual(tt.in, before) {
				t.Errorf("renameStaleEntries changed its input:\n%s", show(t, tt.in))
			}
		})
	}
}

func TestRenameStaleEntriesRefusesAFieldSetItCannotRead(t *testing.T) {
	update := metav1.ManagedFieldsOperationUpdate
	in := []metav1.ManagedFieldsEntry{
		entry("kubectl-edit", update, "v1alpha1", "", 1, `not json`),
		entry("kubectl-edit", update, "v1beta1", "", 2, `{"f:spec":{}}`),
	}
	if _, _, err := renameStaleEntries(in, group, servedV1beta1, "v1beta1"); err == nil || !strings.Contains(err.Error(), `"kubectl-edit"`) {
		t.Errorf("renameStaleEntries = %v, want an error naming the manager", err)
	}
}

func deepCopy(in []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	out := make([]metav1.ManagedFieldsEntry, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}

// equal compares entries with their field sets as JSON values, not bytes.
func equal(t *testing.T, a, b []metav1.ManagedFieldsEntry) bool {
	t.Helper()
	return show(t, a) == show(t, b)
}

func show(t *testing.T, entries []metav1.ManagedFieldsEntry) string {
	t.Helper()
	var lines []string
	for _, e := range entries {
		var set any
		if err := json.Unmarshal(e.FieldsV1.GetRawBytes(), &set); err != nil {
			t.Fatal(err)
		}
		canonical, err := json.Marshal(set)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Join([]string{e.Manager, string(e.Operation), e.APIVersion, e.Subresource, e.Time.UTC().Format(time.RFC3339), string(canonical)}, " "))
	}
	return strings.Join(lines, "\n")
}
