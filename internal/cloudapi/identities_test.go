package cloudapi_test

import (
	"bufio"
	"context"
	"fmt"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/bound"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// A service of 1,500 Postgres pipes of about 1.5 kB each is over the status
// budget even with every pipe slimmed to 1 KiB, but not with pipes cut to
// their identities: the list call keeps every pipe, by id, name, state and
// source kind, rather than dropping whole pipes from the end.
func TestListKeepsEveryIdentityThatFits(t *testing.T) {
	const n = 1500
	url, _ := serveList(t, hugeList{name: "medium_pipes", write: func(w *bufio.Writer) {
		_, _ = w.WriteString(hugeEnvelope)
		for i := range n {
			if i > 0 {
				_ = w.WriteByte(',')
			}
			_, _ = fmt.Fprintf(w, `{"id":"p-%05d","name":"orders %d","state":"Running","source":{"postgres":{"host":"db","tableMappings":[`, i, i)
			for m := range 22 {
				if m > 0 {
					_ = w.WriteByte(',')
				}
				_, _ = fmt.Fprintf(w, `{"sourceTable":"table_%05d","targetTable":"public_table_%05d"}`, m, m)
			}
			_, _ = w.WriteString(`]}}}`)
		}
		_, _ = w.WriteString(`]}`)
	}})
	list, err := newClient(cloudapi.Options{}).ListPipes(context.Background(), url, testCreds, orgID, svcID,
		cloudapi.ListOptions[swv1.Pipe]{KeepBytes: statusBudget, Charge: bound.GoSize[swv1.Pipe]})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != n || list.Total != n {
		t.Fatalf("kept %d of %d pipes; want all %d, by identity", len(list.Items), list.Total, n)
	}
	bare := 0
	for i, p := range list.Items {
		if want := fmt.Sprintf("p-%05d", i); p.ID == nil || *p.ID != want || p.Name == nil || *p.State != "Running" || p.SourceKind == nil || *p.SourceKind != "postgres" {
			t.Fatalf("pipe %d: %+v; want %s with its name, state and source kind", i, p, want)
		}
		if p.Source == nil && p.Omitted["source"] == 1 {
			bare++
		}
	}
	if charged := bound.Charge(&list.Items); bare == 0 || charged > statusBudget {
		t.Errorf("%d pipes cut to their identity, the list charged %d; want some, within %d", bare, charged, statusBudget)
	}
}
