package alerts_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/servicewatch/servicewatch/internal/alerts"
	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// managed is the route key of a management API list of service svc read
// with key.
func managed(key, svc string) alerts.RouteKey {
	creds := cloudapi.NewBasicCredentials("id-"+key, "secret-"+key)
	src := cloudapi.AlertSource{API: cloudapi.APIManagement, BaseURL: "https://api.example.com", Key: creds, OrganizationID: "org", ServiceID: svc}
	return alerts.RouteOf(src, cloudapi.DigestOf(creds))
}

// alertHost is the route key of the alert API's list read with token.
func alertHost(token string) alerts.RouteKey {
	src := cloudapi.AlertSource{API: cloudapi.APIAlert, BaseURL: "https://alerts.example.com", Token: cloudapi.NewBearerToken(token)}
	return alerts.RouteOf(src, cloudapi.DigestOf(src.Token))
}

// Routes remembers per key whether it lists: a key is tried with the list
// until it says it has none, then read one by one until retryAfter has
// passed since it last said so, and tried again, so that an upgraded
// server is noticed; Mode says which way and since when.
func TestRoutesRememberWhichHostsList(t *testing.T) {
	start := time.Date(2026, time.November, 27, 0, 0, 0, 0, time.UTC)
	now := start
	r := alerts.NewRoutes(func() time.Time { return now }, 10*time.Minute)
	a, b := alertHost("t"), managed("k", "svc")
	type step struct {
		after time.Duration // since start
		do    func(alerts.RouteKey)
		host  alerts.RouteKey
		use   bool
		mode  string
		since time.Duration
	}
	steps := []step{
		{0, nil, a, true, alerts.ModeList, -1},
		{0, r.NoList, a, false, alerts.ModeOneByOne, 0},
		{0, nil, b, true, alerts.ModeList, -1},
		{9 * time.Minute, nil, a, false, alerts.ModeOneByOne, 0},
		{10 * time.Minute, nil, a, true, alerts.ModeOneByOne, 0},
		{10 * time.Minute, r.NoList, a, false, alerts.ModeOneByOne, 0},
		{19 * time.Minute, nil, a, false, alerts.ModeOneByOne, 0},
		{20 * time.Minute, r.Listed, a, true, alerts.ModeList, 20 * time.Minute},
		{25 * time.Minute, r.Listed, a, true, alerts.ModeList, 20 * time.Minute},
		{25 * time.Minute, r.Listed, b, true, alerts.ModeList, 25 * time.Minute},
	}
	for i, s := range steps {
		now = start.Add(s.after)
		if s.do != nil {
			s.do(s.host)
		}
		wantSince := time.Time{}
		if s.since >= 0 {
			wantSince = start.Add(s.since)
		}
		mode, since := r.Mode(s.host)
		if use := r.UseList(s.host); use != s.use || mode != s.mode || !since.Equal(wantSince) {
			t.Errorf("step %d (%v, %+v): UseList %v, Mode %s since %v; want %v, %s since %v", i, s.after, s.host, use, mode, since, s.use, s.mode, wantSince)
		}
	}
}

// "No list route" is remembered for everything that decided it: a host
// that answered one credential, or one service of the management API, so
// says nothing of another credential's or another service's list on the
// same host, nor of the other API at the same URL. Before, the memory was
// keyed by API and URL alone, and one tenant's answer switched the list
// off for every tenant of the host.
func TestRoutesKeepEachCredentialAndServiceApart(t *testing.T) {
	at := time.Date(2026, time.November, 27, 0, 0, 0, 0, time.UTC)
	r := alerts.NewRoutes(func() time.Time { return at }, 10*time.Minute)
	r.NoList(managed("tenant", "missing"))
	r.NoList(alertHost("tenant"))
	for _, tt := range []struct {
		name string
		key  alerts.RouteKey
		use  bool
	}{
		{"the key and service that answered", managed("tenant", "missing"), false},
		{"the same key, another service", managed("tenant", "other"), true},
		{"another key, the same service", managed("victim", "missing"), true},
		{"another key and service", managed("victim", "svc"), true},
		{"another organization", func() alerts.RouteKey { k := managed("tenant", "missing"); k.OrganizationID = "org2"; return k }(), true},
		{"the token that answered", alertHost("tenant"), false},
		{"another token on the same alert host", alertHost("victim"), true},
		{"the same token at another URL", func() alerts.RouteKey { k := alertHost("tenant"); k.URL += "/v2"; return k }(), true},
	} {
		if use := r.UseList(tt.key); use != tt.use {
			t.Errorf("%s: UseList %v, want %v", tt.name, use, tt.use)
		}
	}
}

// A tenant that answers list calls with ever new credentials, URLs or
// services does not grow the memory without bound: answers not given
// again within retryAfter are dropped, and past MaxRoutes the one given
// longest ago goes first, the newest answers kept.
func TestRoutesAreBounded(t *testing.T) {
	start := time.Date(2026, time.November, 27, 0, 0, 0, 0, time.UTC)
	now := start
	r := alerts.NewRoutes(func() time.Time { return now }, 10*time.Minute)
	victim := managed("victim", "svc")
	r.NoList(victim)
	const extra = 50
	for i := range alerts.MaxRoutes + extra {
		now = start.Add(time.Duration(i+1) * time.Millisecond)
		r.NoList(alertHost(fmt.Sprint("churn-", i)))
	}
	if n := r.Len(); n != alerts.MaxRoutes {
		t.Errorf("%d answers kept after %d distinct ones, want %d", n, alerts.MaxRoutes+1+extra, alerts.MaxRoutes)
	}
	if r.UseList(alertHost(fmt.Sprint("churn-", alerts.MaxRoutes+extra-1))) {
		t.Error("the newest answer was dropped")
	}
	if r.UseList(alertHost("churn-0")) == false || r.UseList(victim) == false {
		t.Error("the answers given longest ago are still kept past MaxRoutes")
	}

	now = now.Add(10*time.Minute + time.Second)
	r.Listed(managed("later", "svc"))
	if n := r.Len(); n != 1 {
		t.Errorf("%d answers kept once all but one are older than retryAfter, want 1", n)
	}
}

// Watches of many hosts share one Routes: concurrent use is safe (run
// with -race) and each key keeps its own answer.
func TestRoutesAreSafeForConcurrentUse(t *testing.T) {
	at := time.Date(2026, time.November, 27, 0, 0, 0, 0, time.UTC)
	r := alerts.NewRoutes(func() time.Time { return at }, time.Minute)
	var wg sync.WaitGroup
	for i := range 8 {
		host := alertHost(fmt.Sprint("token-", i%2))
		wg.Go(func() {
			for range 100 {
				if i%2 == 0 {
					r.Listed(host)
				} else {
					r.NoList(host)
				}
				r.UseList(host)
				r.Mode(host)
			}
		})
	}
	wg.Wait()
	if m, _ := r.Mode(alertHost("token-0")); m != alerts.ModeList {
		t.Errorf("token-0 reads %s", m)
	}
	if m, _ := r.Mode(alertHost("token-1")); m != alerts.ModeOneByOne || r.UseList(alertHost("token-1")) {
		t.Errorf("token-1 reads %s", m)
	}
}
