package main

import (
	"testing"
	"time"
)

func TestRateFlag(t *testing.T) {
	tests := []struct {
		in      string
		want    rateFlag
		wantErr bool
	}{
		{in: "10/10s", want: rateFlag{Requests: 10, Per: 10 * time.Second, Burst: 10}},
		{in: "100/1m/10", want: rateFlag{Requests: 100, Per: time.Minute, Burst: 10}},
		{in: "0", want: rateFlag{Requests: -1}},
		{in: "10", wantErr: true},
		{in: "x/10s", wantErr: true},
		{in: "10/soon", wantErr: true},
		{in: "10/10s/0", wantErr: true},
		{in: "-1/10s", wantErr: true},
	}
	for _, tt := range tests {
		var f rateFlag
		err := f.Set(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("%q: error %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && f != tt.want {
			t.Errorf("%q: got %+v, want %+v", tt.in, f, tt.want)
		}
	}
}
