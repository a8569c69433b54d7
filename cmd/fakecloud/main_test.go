package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

// The committed sample file is exactly what --print-default-data prints, so
// the demo's data cannot drift from DefaultData.
func TestPrintDefaultDataMatchesTheCommittedFile(t *testing.T) {
	var out bytes.Buffer
	if err := run([]string{"--print-default-data"}, &out); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../hack/fakecloud/data.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Error("hack/fakecloud/data.yaml is stale; run go generate ./internal/fakecloud")
	}
}

func TestFlags(t *testing.T) {
	c, err := parseFlags([]string{"--listen", "127.0.0.1:0", "--key-id", "k", "--key-secret", "s", "--alert-token", "t"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := loadData(c)
	if err != nil {
		t.Fatal(err)
	}
	if d.ManagementKey != (fakecloud.ManagementKey{KeyID: "k", KeySecret: "s"}) || d.AlertToken != "t" {
		t.Errorf("credentials not overridden: %+v %q", d.ManagementKey, d.AlertToken)
	}
	if len(d.Alerts) != 2 {
		t.Errorf("default data not used: %d alerts", len(d.Alerts))
	}
	if _, err := parseFlags([]string{"extra"}); err == nil {
		t.Error("stray argument accepted")
	}
	if _, err := loadData(config{dataFile: "does-not-exist.yaml"}); err == nil {
		t.Error("missing data file accepted")
	}
}

func TestServe(t *testing.T) {
	c, err := parseFlags([]string{"--listen", "127.0.0.1:0", "--admin", "--data", "../../hack/fakecloud/data.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	data, err := loadData(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, c, data, pw) }()
	url, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url = strings.TrimSpace(url)

	pipes := url + "/v1/organizations/" + fakecloud.DefaultOrganizationID + "/services/" + fakecloud.DefaultServiceID + "/pipes"
	if got := status(t, http.MethodGet, pipes, "Basic ZmFrZS1rZXktaWQ6ZmFrZS1rZXktc2VjcmV0", ""); got != 200 {
		t.Errorf("pipes: %d", got)
	}
	if got := status(t, http.MethodPut, url+"/_fakecloud/faults/list_pipes", "", `{"status":503,"latency":"10ms","times":1}`); got != 204 {
		t.Errorf("set fault: %d", got)
	}
	if got := status(t, http.MethodGet, pipes, "", ""); got != 503 {
		t.Errorf("faulted pipes: %d", got)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/_fakecloud/calls", http.NoBody)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var calls struct{ Counts map[string]int }
	err = json.NewDecoder(resp.Body).Decode(&calls)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("decoding the call counts: %v", err)
	}
	if calls.Counts["list_pipes"] != 2 {
		t.Errorf("counts %v, want 2 list_pipes", calls.Counts)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
}

func status(t *testing.T, method, url, auth, body string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
