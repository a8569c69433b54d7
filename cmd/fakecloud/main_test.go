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
	"github.com/servicewatch/servicewatch/internal/fakecloud/fakecloudtest"
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
	if want := len(fakecloud.DefaultData().Alerts); len(d.Alerts) != want {
		t.Errorf("default data not used: %d alerts, want %d", len(d.Alerts), want)
	}
	if _, err := parseFlags([]string{"extra"}); err == nil {
		t.Error("stray argument accepted")
	}
	if _, err := loadData(config{dataFile: "does-not-exist.yaml"}); err == nil {
		t.Error("missing data file accepted")
	}
}

func TestServe(t *testing.T) {
	url, cancel, done := startServe(t, "--listen", "127.0.0.1:0", "--admin", "--data", "../../hack/fakecloud/data.yaml")

	pipes := url + pipesPath
	if got := status(t, http.MethodGet, pipes, fakecloudtest.BasicAuth, ""); got != 200 {
		t.Errorf("pipes: %d", got)
	}
	if got := status(t, http.MethodPut, url+"/_fakecloud/faults/list_pipes", "", `{"status":503,"latency":"10ms","times":1}`); got != 204 {
		t.Errorf("set fault: %d", got)
	}
	if got := status(t, http.MethodGet, pipes, "", ""); got != 503 {
		t.Errorf("faulted pipes: %d", got)
	}
	var calls struct{ Counts map[string]int }
	if err := json.Unmarshal(fakecloudtest.Do(t, http.MethodGet, url+"/_fakecloud/calls", "", "").Body, &calls); err != nil {
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

// pipesPath is where the default service's pipes are listed.
const pipesPath = "/v1/organizations/" + fakecloud.DefaultOrganizationID + "/services/" + fakecloud.DefaultServiceID + "/pipes"

// startServe runs serve with the flags args until cancel, and returns the
// URL it printed and the channel its result arrives on.
func startServe(t *testing.T, args ...string) (url string, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	c, err := parseFlags(args)
	if err != nil {
		t.Fatal(err)
	}
	data, err := loadData(c)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pr, pw := io.Pipe()
	result := make(chan error, 1)
	go func() { result <- serve(ctx, c, data, pw) }()
	url, err = bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(url), cancel, result
}

func status(t *testing.T, method, url, auth, body string) int {
	t.Helper()
	return fakecloudtest.Do(t, method, url, auth, body).Status
}

func TestBudgetFlag(t *testing.T) {
	tests := []struct {
		value   string
		want    fakecloud.Budget
		wantErr bool
	}{
		{"10/10s", fakecloud.Budget{Requests: 10, Window: 10 * time.Second}, false},
		{"100/1m", fakecloud.Budget{Requests: 100, Window: time.Minute}, false},
		{"0", fakecloud.Budget{}, false},
		{"10", fakecloud.Budget{}, true},
		{"-1/10s", fakecloud.Budget{}, true},
		{"10/0s", fakecloud.Budget{}, true},
		{"10/soon", fakecloud.Budget{}, true},
	}
	for _, tt := range tests {
		var f budgetFlag
		err := f.Set(tt.value)
		if (err != nil) != tt.wantErr || (err == nil && fakecloud.Budget(f) != tt.want) {
			t.Errorf("Set(%q) = %+v, %v; want %+v, error %v", tt.value, f, err, tt.want, tt.wantErr)
		}
	}
}

func TestBudgetPhase(t *testing.T) {
	c, err := parseFlags([]string{"--management-budget", "10/10s", "--budget-phase", "2.5s"})
	if err != nil {
		t.Fatal(err)
	}
	if b := c.managementBudget.budget(c.budgetPhase, c.budgetPhaseGiven); b.Phase != 2500*time.Millisecond {
		t.Errorf("phase %v, want the given 2.5s", b.Phase)
	}
	if b := c.alertBudget.budget(c.budgetPhase, c.budgetPhaseGiven); b != (fakecloud.Budget{}) {
		t.Errorf("alert budget %+v, want none", b)
	}
	for range 20 {
		if b := c.managementBudget.budget(0, false); b.Phase < 0 || b.Phase >= 10*time.Second {
			t.Fatalf("random phase %v outside the window", b.Phase)
		}
	}
	if _, err := parseFlags([]string{"--budget-phase", "-1s"}); err == nil {
		t.Error("negative phase accepted")
	}
}

func TestServeEnforcesBudgetAndLatency(t *testing.T) {
	// Windows start half an hour from now, so all calls fall into one.
	phase := time.Duration(time.Now().UnixNano()%int64(time.Hour)) + 30*time.Minute
	url, cancel, done := startServe(t, "--listen", "127.0.0.1:0", "--management-budget", "2/1h", "--budget-phase", phase.String(), "--latency", "50ms")
	pipes := url + pipesPath
	begin := time.Now()
	var got []int
	for range 3 {
		got = append(got, status(t, http.MethodGet, pipes, fakecloudtest.BasicAuth, ""))
	}
	if got[0] != 200 || got[1] != 200 || got[2] != 429 {
		t.Errorf("statuses %v, want 200 200 429 under a budget of 2 per hour", got)
	}
	if elapsed := time.Since(begin); elapsed < 100*time.Millisecond {
		t.Errorf("two answered calls took %v, want at least 2 × 50ms of latency", elapsed)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}
