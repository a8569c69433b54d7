// Package layout keeps rules of the repository's shape that a reader relies
// on and that moving code sideways cannot satisfy.
package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines is the most lines a hand-written production file may hold:
// a file a reader can hold in mind. A package grows by files with one job
// each, never by a cap on its folder, which only rewards moving code into
// new folders.
const maxFileLines = 800

// TestNoProductionFileIsTooLong: see maxFileLines. Tests, generated files
// (zz_generated.*, api/v1alpha1, which make generate copies) and other
// modules' vendored trees are not held to it.
func TestNoProductionFileIsTooLong(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "bin" || rel == ".git" || rel == filepath.Join("api", "v1alpha1") || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasPrefix(d.Name(), "zz_generated") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := strings.Count(string(b), "\n"); n > maxFileLines {
			t.Errorf("%s has %d lines, more than %d: split it by job", rel, n, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// maxRooms is the most top-level packages internal/ may hold, test support
// included: the few domains of the project a reader sees at a glance. A
// package only one room uses is nested under that room.
const maxRooms = 15

// TestInternalHasFewRooms: see maxRooms.
func TestInternalHasFewRooms(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("..", "..", "internal"))
	if err != nil {
		t.Fatal(err)
	}
	var rooms []string
	for _, e := range entries {
		if e.IsDir() {
			rooms = append(rooms, e.Name())
		}
	}
	if len(rooms) > maxRooms {
		t.Errorf("internal/ has %d rooms, more than %d: nest a package one room uses under that room, merge fragments into the room that owns their concern\n%s",
			len(rooms), maxRooms, strings.Join(rooms, "\n"))
	}
}
