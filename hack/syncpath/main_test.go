package main

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"
)

// TestVisitedFollowsInterfacesToTheProgramsImplementations walks a small
// module: a call through an interface the module declares reaches both of its
// implementations in the program (one in the followed package, followed
// further; one in another package, counted at its file only), while a call
// through error, a test file's fake and a package the program does not link
// are not counted.
func TestVisitedFollowsInterfacesToTheProgramsImplementations(t *testing.T) {
	dir, err := filepath.Abs("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	files, err := visited(config{dir: dir, program: []string{"./cmd/prog"}, follow: "ctl", roots: []string{"Reconcile"}})
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(maps.Keys(files))
	want := []string{
		"ctl/cached.go",       // the implementation in the followed package
		"ctl/cachedhelper.go", // ... whose insides are followed
		"ctl/ctl.go",          // the root
		"ctl/helper.go",       // a static call in the followed package
		"impl/impl.go",        // the implementation in another package
		"impl/other.go",       // a static call into another package
	}
	if !slices.Equal(got, want) {
		t.Errorf("visited %q, want %q", got, want)
	}
}

// TestVisitedWantsEachRoot fails a walk whose root is missing, rather than
// count nothing.
func TestVisitedWantsEachRoot(t *testing.T) {
	dir, err := filepath.Abs("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := visited(config{dir: dir, program: []string{"./cmd/prog"}, follow: "ctl", roots: []string{"Reconcile", "gone"}}); err == nil {
		t.Error("a missing root gave no error")
	}
}
