package cloudapi

import (
	"strings"
	"testing"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
	"github.com/servicewatch/servicewatch/internal/cloudapi/slim"
)

// A list of empty objects is cut by count, not only by bytes: each item
// counts at least slim.MinItemCharge against the budget, so status never holds a
// quarter of a million empty pipes.
func TestTinyItemsCountTheLeastCharge(t *testing.T) {
	items := strings.Repeat(`{},`, 999) + `{}`
	l, err := decodeBytes(decodePipes, []byte(`{"status":200,"result":[`+items+`]}`), ListOptions[swv1.Pipe]{KeepBytes: 10 * slim.MinItemCharge})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 10 || l.Total != 1000 {
		t.Errorf("kept %d of %d empty items, want 10 of 1000", len(l.Items), l.Total)
	}
}

// A caller's charge (the controller's: an item's size as a Go value) counts
// when it is more than the item's JSON.
func TestTheCallersChargeCounts(t *testing.T) {
	items := strings.Repeat(`{},`, 999) + `{}`
	opts := ListOptions[swv1.Pipe]{KeepBytes: 10_000, Charge: func(*swv1.Pipe) int { return 1000 }}
	l, err := decodeBytes(decodePipes, []byte(`{"status":200,"result":[`+items+`]}`), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 10 || l.Total != 1000 {
		t.Errorf("kept %d of %d empty items charged 1,000 bytes each in 10,000, want 10 of 1000", len(l.Items), l.Total)
	}
}
