package main

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
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

// maxSyncFiles is the most files one periodic sync of this repository may
// visit (issue 38; DEVELOPMENT.md gives the figure): a change that spreads
// the sync over more files fails here, not in a reviewer's count.
const maxSyncFiles = 20

// TestServiceWatchSyncVisitsAtMostMaxSyncFiles walks this repository's own
// sync, as `go run ./hack/syncpath` does from its root.
func TestServiceWatchSyncVisitsAtMostMaxSyncFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("loads the manager's whole program")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := servicewatch
	cfg.dir = root
	files, err := visited(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) > maxSyncFiles {
		t.Errorf("one sync visits %d files, more than %d:\n%s", len(files), maxSyncFiles, strings.Join(slices.Sorted(maps.Keys(files)), "\n"))
	}
}
