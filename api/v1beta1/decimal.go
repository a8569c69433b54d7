package v1beta1

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Decimal is a JSON number that the cloud sent, such as a memory size of 0.5 GB
// or an alert threshold of 12.25. It is held as text so that Go never rounds it
// through float arithmetic, and it is written back as a JSON number (not a
// string) so that dashboards and jq see a number.
//
// The text is kept in the form the Kubernetes API server stores numbers in
// (shortest round-trip form of a float64, integers without a fraction), so that
// what the operator writes and what it reads back compare equal and an unchanged
// cloud never causes a status write.
//
// +kubebuilder:validation:Type=number
type Decimal string

// MarshalJSON writes the decimal as a bare JSON number.
func (d Decimal) MarshalJSON() ([]byte, error) {
	if d == "" {
		return []byte("null"), nil
	}
	return []byte(d), nil
}

// UnmarshalJSON accepts a JSON number and keeps it in canonical form.
func (d *Decimal) UnmarshalJSON(data []byte) error {
	var n json.Number
	if err := json.Unmarshal(data, &n); err != nil {
		return fmt.Errorf("decimal: %w", err)
	}
	if n == "" { // JSON null
		*d = ""
		return nil
	}
	canonical, err := canonicalNumber(n)
	if err != nil {
		return err
	}
	*d = Decimal(canonical)
	return nil
}

// canonicalNumber renders n the way the API server does after decoding it into
// an int64 or a float64.
func canonicalNumber(n json.Number) (string, error) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return strconv.FormatInt(i, 10), nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return "", fmt.Errorf("decimal: %q is not a number: %w", string(n), err)
	}
	out, err := json.Marshal(f)
	if err != nil {
		return "", fmt.Errorf("decimal: %q cannot be stored: %w", string(n), err)
	}
	return string(out), nil
}
