package ratebudget

import (
	"testing"
	"time"
)

func TestParseRateLimit(t *testing.T) {
	tests := []struct {
		in      string
		want    RateLimit
		wantErr bool
	}{
		{in: "10/10s", want: RateLimit{Requests: 10, Per: 10 * time.Second, Burst: 10}},
		{in: "100/1m/10", want: RateLimit{Requests: 100, Per: time.Minute, Burst: 10}},
		{in: "0", want: RateLimit{Requests: -1}},
		{in: "10", wantErr: true},
		{in: "10/10s/5/1", wantErr: true},
		{in: "x/10s", wantErr: true},
		{in: "0/10s", wantErr: true},
		{in: "-1/10s", wantErr: true},
		{in: "10/soon", wantErr: true},
		{in: "10/0s", wantErr: true},
		{in: "10/10s/0", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseRateLimit(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("%q: error %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && got != tt.want {
			t.Errorf("%q: got %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestRateLimitStringRoundTrips(t *testing.T) {
	for _, in := range []string{"0", "10/10s", "100/1m0s/10"} {
		l, err := ParseRateLimit(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := l.String(); got != in {
			t.Errorf("ParseRateLimit(%q).String() = %q", in, got)
		}
	}
}
