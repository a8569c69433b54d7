package lenient

import (
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

func TestReadInt(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want int64
		ok   bool
	}{
		{`3`, 3, true}, {`"3"`, 3, true}, {`2.0`, 2, true}, {`1e3`, 1000, true}, {`-4`, -4, true},
		{`2.5`, 0, false}, {`"x"`, 0, false}, {`true`, 0, false}, {`1e400`, 0, false},
		{`99999999999999999999`, 0, false},
	} {
		if got, ok := readInt([]byte(tt.raw)); got != tt.want || ok != tt.ok {
			t.Errorf("readInt(%s) = %d, %v; want %d, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
}

func TestReadMillicoresTakesQuantities(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want int64
		ok   bool
	}{
		{`500`, 500, true}, {`"500m"`, 500, true}, {`"2"`, 2, true}, {`"2k"`, 2_000_000, true},
		{`"0.5m"`, 0, false}, {`"500x"`, 0, false}, {`"1e3m"`, 0, false},
	} {
		if got, ok := readMillicores([]byte(tt.raw)); got != tt.want || ok != tt.ok {
			t.Errorf("readMillicores(%s) = %d, %v; want %d, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
}

func TestReadGigabytesTakesQuantities(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		want swv1.Decimal
		ok   bool
	}{
		{`4`, "4", true}, {`"0.5"`, "0.5", true}, {`"500M"`, "0.5", true}, {`"2Gi"`, "2.147483648", true},
		{`"lots"`, "", false}, {`[]`, "", false},
	} {
		if got, ok := readGigabytes([]byte(tt.raw)); got != tt.want || ok != tt.ok {
			t.Errorf("readGigabytes(%s) = %q, %v; want %q, %v", tt.raw, got, ok, tt.want, tt.ok)
		}
	}
}

func TestReadBoolAndString(t *testing.T) {
	for raw, want := range map[string]bool{`true`: true, `"FALSE"`: false, `" true "`: true} {
		if got, ok := readBool([]byte(raw)); !ok || got != want {
			t.Errorf("readBool(%s) = %v, %v", raw, got, ok)
		}
	}
	if _, ok := readBool([]byte(`1`)); ok {
		t.Error("readBool(1) is a boolean")
	}
	for raw, want := range map[string]string{`"a"`: "a", `12`: "12", `false`: "false"} {
		if got, ok := readString([]byte(raw)); !ok || got != want {
			t.Errorf("readString(%s) = %q, %v", raw, got, ok)
		}
	}
	if _, ok := readString([]byte(`{}`)); ok {
		t.Error("readString({}) is a string")
	}
}
