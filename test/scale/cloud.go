package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/servicewatch/servicewatch/internal/fakecloud"
)

const (
	defaultOrg     = fakecloud.DefaultOrganizationID
	defaultService = fakecloud.DefaultServiceID
)

// cloudData is the fake's default data (a realistic service with four pipes
// and two alerts) with the tenants' keys and tokens accepted as well.
func cloudData(tenants []tenant) fakecloud.Data {
	d := fakecloud.DefaultData()
	org := d.Organizations[defaultOrg]
	for i := range distinctServices {
		org[distinctService(i)] = org[defaultService]
	}
	for _, t := range tenants {
		d.MoreManagementKeys = append(d.MoreManagementKeys, fakecloud.ManagementKey{KeyID: t.key.id, KeySecret: t.key.secret})
		d.MoreAlertTokens = append(d.MoreAlertTokens, t.token)
	}
	return d
}

// distinctServices is how many services, each a copy of the default one,
// the fake cloud serves besides it: one per watch of the largest scenario.
const distinctServices = 1000

// distinctService is the ID of the i-th of them.
func distinctService(i int) string {
	return fmt.Sprintf("5e5e5e5e-0000-4000-8000-%012d", i)
}

func writeCloudData(path string, d fakecloud.Data) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// cloudAdmin drives a running fake cloud through its admin API.
type cloudAdmin struct {
	url  string
	http *http.Client
}

// call is one entry of the fake's call log, as its admin API serves it.
type call struct {
	Operation      fakecloud.Operation
	Path           string
	ServiceID      string
	AlertID        string
	KeyFingerprint string
	Time           time.Time
	Status         int
}

// calls returns the fake's whole call log.
func (a cloudAdmin) calls(ctx context.Context) ([]call, error) {
	var out struct{ Log []call }
	if err := a.do(ctx, http.MethodGet, "calls", nil, &out); err != nil {
		return nil, err
	}
	return out.Log, nil
}

// setData replaces the data the fake serves.
func (a cloudAdmin) setData(ctx context.Context, d fakecloud.Data) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return a.do(ctx, http.MethodPut, "data", b, nil)
}

// setFault sets a fault on one operation.
func (a cloudAdmin) setFault(ctx context.Context, op fakecloud.Operation, f fakecloud.Fault) error {
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return a.do(ctx, http.MethodPut, "faults/"+string(op), b, nil)
}

func (a cloudAdmin) do(ctx context.Context, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, a.url+fakecloud.AdminPrefix+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("fake cloud admin %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return fmt.Errorf("fake cloud admin %s %s: %s: %s", method, path, resp.Status, msg)
	}
	if out == nil {
		return nil
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// fingerprint is how the fake's call log names a tenant's management key.
func (k keyPair) fingerprint() string {
	return fakecloud.ManagementKey{KeyID: k.id, KeySecret: k.secret}.Fingerprint()
}

// newAdminHTTPClient is for the admin API only: its call log of a long run
// can take a moment to serve.
func newAdminHTTPClient() *http.Client { return &http.Client{Timeout: time.Minute} }
