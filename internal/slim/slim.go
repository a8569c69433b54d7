package slim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/servicewatch/servicewatch/internal/bound"
)

// OmittedField is the JSON member of an item where slimming counts what it
// left out, by JSON path.
const OmittedField = "omitted"

// WholeMember counts 1 in the omitted record for a member of an item left out
// whole, when the item is cut down to its identity.
const wholeMember = 1

// Shape says how items of one type are slimmed: Identity are the top-level
// JSON members an item keeps when nothing more of it fits.
type Shape struct {
	Identity []string
}

// Pipes, Endpoints and Alerts are the shapes of the status lists: what a
// user needs to see of every item, whatever else is cut.
var (
	Pipes     = Shape{Identity: []string{"id", "name", "state", "sourceKind"}}
	Endpoints = Shape{Identity: []string{"id", "description", "type", "status"}}
	Alerts    = Shape{Identity: []string{"id", "error", "name", "state"}}
)

// Item returns item cut so that bound.Charge of it is at most target: as is
// when it fits; else with every list in it cut to its first k entries for the
// largest k that fits; else its identity alone (which may still not fit: the
// caller then drops it whole). The result's omitted record counts what was
// left out. item is not changed.
func Item[T any](item *T, target int, shape Shape) (T, error) {
	whole := bound.Charge(item)
	if whole <= target {
		return *item, nil
	}
	tree, err := toTree(item)
	if err != nil {
		return *item, err
	}
	best, err := build[T](tree, 0)
	if err != nil || bound.Charge(&best) > target {
		return bare[T](tree, shape) // not even every list emptied fits
	}
	return largestFit(tree, best, whole, target)
}

// largestFit is tree with its lists cut to the largest k whose charge fits
// target (the charge grows with k; k = 0 fits, as none, and the whole item,
// of charge whole, does not). The first guess assumes the charge grows
// evenly with k: most items then take two builds, not a bisection's many.
func largestFit[T any](tree map[string]any, none T, whole, target int) (T, error) {
	best, lo, hi := none, 0, longestList(tree) // lo fits, hi does not
	fits := func(k int) (bool, error) {
		got, err := build[T](tree, k)
		if err != nil {
			return false, err
		}
		if bound.Charge(&got) > target {
			return false, nil
		}
		best = got
		return true, nil
	}
	base := bound.Charge(&none)
	guess := lo + (target-base)*(hi-lo)/max(1, whole-base)
	for _, probe := range []int{guess, guess + 1} { // the guess, then just past it: often the end
		if hi-lo <= 1 {
			break
		}
		probe = min(max(probe, lo+1), hi-1)
		ok, err := fits(probe)
		if err != nil {
			return none, err
		}
		if !ok {
			hi = probe
			break
		}
		lo = probe
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := fits(mid)
		if err != nil {
			return none, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return best, nil
}

// toTree reads item's JSON as generic values, numbers kept as written.
func toTree[T any](item *T) (map[string]any, error) {
	raw, err := json.Marshal(item)
	if err != nil {
		return nil, fmt.Errorf("encode item: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree map[string]any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("decode item: %w", err)
	}
	return tree, nil
}

// build is tree with every list cut to k entries, the cuts added to its
// omitted record, read back as a T.
func build[T any](tree map[string]any, k int) (T, error) {
	omitted := previousOmitted(tree)
	cut, _ := cutLists(tree, "", k, omitted).(map[string]any) // a map stays a map
	return withOmitted[T](cut, omitted)
}

// bare is tree's identity members alone, every other member counted as left
// out whole.
func bare[T any](tree map[string]any, shape Shape) (T, error) {
	omitted := previousOmitted(tree)
	kept := map[string]any{}
	for name, v := range tree {
		switch {
		case slices.Contains(shape.Identity, name):
			kept[name] = v
		case name != OmittedField:
			omitted[name] += wholeMember
		}
	}
	return withOmitted[T](kept, omitted)
}

// previousOmitted is a copy of what an earlier slimming of the item left out,
// so that slimming a slimmed item again adds up.
func previousOmitted(tree map[string]any) map[string]int64 {
	out := map[string]int64{}
	if prev, ok := tree[OmittedField].(map[string]any); ok {
		for path, n := range prev {
			if num, ok := n.(json.Number); ok {
				v, _ := num.Int64()
				out[path] = v
			}
		}
	}
	return out
}

// cutLists copies v with every list cut to k entries, counting under path
// (lists within lists by path[].member) what it left out.
func cutLists(v any, path string, k int, omitted map[string]int64) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for name, member := range v {
			if path == "" && name == OmittedField {
				continue
			}
			out[name] = cutLists(member, join(path, name), k, omitted)
		}
		return out
	case []any:
		n := min(len(v), k)
		if len(v) > n {
			omitted[path] += int64(len(v) - n)
		}
		out := make([]any, n)
		for i := range n {
			out[i] = cutLists(v[i], path+"[]", k, omitted)
		}
		return out
	default:
		return v
	}
}

// join is the JSON path of member name under path.
func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// longestList is the length of the longest list in v, at any depth.
func longestList(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		for _, member := range v {
			n = max(n, longestList(member))
		}
	case []any:
		n = len(v)
		for _, entry := range v {
			n = max(n, longestList(entry))
		}
	}
	return n
}

// withOmitted reads tree, with omitted as its omitted record, back as a T.
func withOmitted[T any](tree map[string]any, omitted map[string]int64) (T, error) {
	var out T
	if len(omitted) > 0 {
		tree[OmittedField] = omitted
	}
	raw, err := json.Marshal(tree)
	if err != nil {
		return out, fmt.Errorf("encode slimmed item: %w", err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("decode slimmed item: %w", err)
	}
	return out, nil
}

// Describe says what slimming left out of one item, for a condition: "pipe
// p-42: 3950 source.postgres.tableMappings, 2 otherFields left out", the
// paths in order; "" when nothing was.
func Describe(noun, id string, omitted map[string]int32) string {
	if len(omitted) == 0 {
		return ""
	}
	paths := slices.Sorted(maps.Keys(omitted))
	parts := make([]string, len(paths))
	for i, path := range paths {
		parts[i] = fmt.Sprintf("%d %s", omitted[path], path)
	}
	return fmt.Sprintf("%s %s: %s left out", noun, bound.Cut(id, 64), strings.Join(parts, ", "))
}
