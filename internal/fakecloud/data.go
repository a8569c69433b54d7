package fakecloud

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Data is what the fake cloud serves. It is also the format of the data file
// of cmd/fakecloud (YAML or JSON).
//
// Resources are raw JSON objects rather than typed structs, so that tests can
// serve nulls, unknown fields and values of the wrong type.
type Data struct {
	// ManagementKey is the key the management API accepts.
	ManagementKey ManagementKey `json:"managementKey"`
	// MoreManagementKeys are further keys the management API accepts, so
	// that tenants with keys of their own can share one fake.
	MoreManagementKeys []ManagementKey `json:"moreManagementKeys,omitempty"`
	// AlertToken is the token the alert API accepts.
	AlertToken string `json:"alertToken"`
	// MoreAlertTokens are further tokens the alert API accepts.
	MoreAlertTokens []string `json:"moreAlertTokens,omitempty"`
	// Organizations maps organization ID → service ID → service.
	Organizations map[string]map[string]Service `json:"organizations,omitempty"`
	// Alerts maps alert ID → alert object, served as {"data": <object>}.
	Alerts map[string]map[string]any `json:"alerts,omitempty"`
	// AlertShape, when set, serves every alert in that shape of the alert
	// API ("legacy" or "current"), whatever names Alerts uses.
	AlertShape AlertShape `json:"alertShape,omitempty"`
	// AlertListRoute says how the alert API answers its list route;
	// ServiceAlertListRoute how the management API answers a service's.
	// Empty: paged, as today's servers (see AlertListRoute).
	AlertListRoute        AlertListRoute `json:"alertListRoute,omitempty"`
	ServiceAlertListRoute AlertListRoute `json:"serviceAlertListRoute,omitempty"`
}

// ManagementKey is a management API key.
type ManagementKey struct {
	KeyID     string `json:"keyId"`
	KeySecret string `json:"keySecret"`
}

// Service is one service's resources. A nil list is served as [].
type Service struct {
	Pipes                   []map[string]any `json:"pipes,omitempty"`
	ReversePrivateEndpoints []map[string]any `json:"reversePrivateEndpoints,omitempty"`
	// Alerts are the alerts the management API serves for the service (the
	// managed service has no alert host), in the cloud's order.
	Alerts []map[string]any `json:"alerts,omitempty"`
}

// ParseData parses a data file, JSON or YAML. A JSON document keeps every
// number's exact text. YAML numbers pass through float64, so a decimal such
// as 0.10 is served as 0.1: use JSON when the exact text of a decimal
// matters.
func ParseData(b []byte) (Data, error) {
	var d Data
	if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 && trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		if err := dec.Decode(&d); err != nil {
			return Data{}, fmt.Errorf("parse fake cloud data as JSON: %w", err)
		}
		return d, nil
	}
	useNumber := func(dec *json.Decoder) *json.Decoder { dec.UseNumber(); return dec }
	if err := yaml.Unmarshal(b, &d, useNumber); err != nil {
		return Data{}, fmt.Errorf("parse fake cloud data as YAML: %w", err)
	}
	return d, nil
}

// LoadData reads and parses a data file.
func LoadData(path string) (Data, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Data{}, fmt.Errorf("read fake cloud data: %w", err)
	}
	return ParseData(b)
}

// MarshalYAML renders d as the YAML data file.
func (d Data) MarshalYAML() ([]byte, error) {
	b, err := yaml.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("marshal fake cloud data: %w", err)
	}
	return b, nil
}

// clone returns a deep copy of d, so that a caller's later changes to the
// maps it passed in cannot race with requests being served.
func (d Data) clone() Data {
	out := Data{
		ManagementKey:         d.ManagementKey,
		MoreManagementKeys:    append([]ManagementKey(nil), d.MoreManagementKeys...),
		AlertToken:            d.AlertToken,
		MoreAlertTokens:       append([]string(nil), d.MoreAlertTokens...),
		AlertShape:            d.AlertShape,
		AlertListRoute:        d.AlertListRoute,
		ServiceAlertListRoute: d.ServiceAlertListRoute,
	}
	if d.Organizations != nil {
		out.Organizations = make(map[string]map[string]Service, len(d.Organizations))
		for org, svcs := range d.Organizations {
			m := make(map[string]Service, len(svcs))
			for id, s := range svcs {
				m[id] = s.clone()
			}
			out.Organizations[org] = m
		}
	}
	if d.Alerts != nil {
		out.Alerts = make(map[string]map[string]any, len(d.Alerts))
		for id, a := range d.Alerts {
			out.Alerts[id] = cloneObject(a)
		}
	}
	return out
}

func (s Service) clone() Service {
	return Service{Pipes: cloneObjects(s.Pipes), ReversePrivateEndpoints: cloneObjects(s.ReversePrivateEndpoints), Alerts: cloneObjects(s.Alerts)}
}

func cloneObjects(in []map[string]any) []map[string]any {
	if in == nil {
		return nil
	}
	out := make([]map[string]any, len(in))
	for i, o := range in {
		out[i] = cloneObject(o)
	}
	return out
}

func cloneObject(in map[string]any) map[string]any {
	if in == nil {
		return nil
	}
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = cloneValue(v)
	}
	return out
}

// cloneValue deep-copies the container types JSON-like data is built of;
// other values (strings, numbers, booleans) are immutable.
func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneObject(v)
	case []map[string]any:
		return cloneObjects(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneValue(e)
		}
		return out
	case []string:
		return append(make([]string, 0, len(v)), v...)
	default:
		return v
	}
}
