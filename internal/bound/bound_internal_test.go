package bound

import (
	"testing"
	"time"
	"unsafe"
)

type item struct {
	ID     *string
	Labels map[string]string
	Tags   []string
	At     time.Time
	Any    any
}

// GoSize counts a value's own size and what it points to, not the shared
// location of a time, nor the unused capacity of a slice.
func TestGoSize(t *testing.T) {
	id := "abcd"
	const (
		strSize   = int(unsafe.Sizeof(""))
		itemSize  = int(unsafe.Sizeof(item{}))
		emptySize = itemSize
	)
	tests := []struct {
		name string
		v    item
		want int
	}{
		{"empty", item{}, emptySize},
		{"a pointed-to string", item{ID: &id}, itemSize + strSize + len(id)},
		{"a map", item{Labels: map[string]string{"k": "vv"}}, itemSize + MapBytes(1, strSize, strSize) + len("k") + len("vv")},
		{"a slice by its length", item{Tags: append(make([]string, 0, 100), "x")}, itemSize + strSize + 1},
		{"a time", item{At: time.Now()}, itemSize},
		{"an interface", item{Any: "xyz"}, itemSize + strSize + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GoSize(&tt.v); got != tt.want {
				t.Errorf("GoSize = %d, want %d", got, tt.want)
			}
		})
	}
}

// A list of many empty items costs far more decoded than its JSON.
func TestGoSizeOfTinyItems(t *testing.T) {
	items := make([]item, 1000)
	if got, json := GoSize(&items), len(`{}`)*len(items); got < 10*json {
		t.Errorf("1,000 empty items cost %d bytes decoded, want well over their %d bytes of JSON", got, json)
	}
}
