package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is the import path of the repository's root module.
const module = "github.com/servicewatch/servicewatch/"

// The rule of TestAPackageOneRoomImportsLivesUnderIt, exactly:
//
//   - A room is a top-level folder of internal/ (internal/controller and all
//     below it is one room), or api/.
//   - A package's importers are the packages of the root module whose
//     production files (not _test.go) import it. Those of cmd/, test/ and
//     hack/ (programs, harnesses, tools: entry points that wire rooms, not
//     rooms) and of internal/testsupport (test support) are not counted,
//     nor the package itself.
//   - A package under internal/ whose counted importers all lie in one room
//     other than its own lives under that room.
//
// A package nobody counted imports (a program's room, such as the plugin or
// the fake cloud) and a package of two rooms or more stay where they are.
// roomExceptions names the packages that break the rule on purpose, each
// with its reason.
var roomExceptions = map[string]string{
	"internal/accountcontroller": "a controller of its own kind (ClusterCloudAccount) that cmd/manager wires beside the " +
		"ServiceWatch controller, with its own status and RBAC; the ServiceWatch controller consumes the accounts it serves, " +
		"it does not own it (nested, its reconciler would sit under another's)",
	"internal/storagemigration": "two programs run it: the manager at start (cmd/manager, the leader's storage migration) " +
		"and the plugin's `kubectl servicewatch migrate`; under the plugin, the manager would import the plugin's room",
	"internal/changes": "item state changes are a domain users configure on their own (the CloudEvents sink's flags, " +
		"its queue and delivery), which cmd/manager runs on the leader; the controller only finds the changes and offers them",
}

// roomOf is the room of a package folder (relative to the repository's root,
// slash-separated), "" for one whose imports are not counted.
func roomOf(dir string) string {
	parts := strings.Split(dir, "/")
	switch {
	case parts[0] == "api":
		return "api"
	case parts[0] == "internal" && len(parts) > 1 && parts[1] != "testsupport":
		return "internal/" + parts[1]
	}
	return ""
}

// TestAPackageOneRoomImportsLivesUnderIt keeps the house nested by owner:
// a package only one other room uses lives under that room, so that
// `ls internal` shows the project's domains, not its fragments. Moving code
// sideways into a new folder does not satisfy it.
func TestAPackageOneRoomImportsLivesUnderIt(t *testing.T) {
	importers := productionImports(t) // package folder -> folders importing it
	for pkg, by := range importers {
		if !strings.HasPrefix(pkg, "internal/") || roomOf(pkg) == "" {
			continue
		}
		var rooms []string
		for _, importer := range by {
			if r := roomOf(importer); r != "" && importer != pkg && !slices.Contains(rooms, r) {
				rooms = append(rooms, r)
			}
		}
		_, excepted := roomExceptions[pkg]
		oneOther := len(rooms) == 1 && rooms[0] != roomOf(pkg)
		switch {
		case oneOther && !excepted:
			t.Errorf("%s is imported by one room only, %s (%s): move it under %s, or list it in roomExceptions with a reason",
				pkg, rooms[0], strings.Join(by, ", "), rooms[0])
		case excepted && !oneOther:
			t.Errorf("%s is listed in roomExceptions but follows the rule (imported by %v): drop the exception", pkg, rooms)
		}
	}
	for pkg := range roomExceptions {
		if _, ok := importers[pkg]; !ok {
			t.Errorf("roomExceptions names %s, which is not a package of the repository any more", pkg)
		}
	}
}

// productionImports maps each package folder of the root module (relative,
// slash-separated) to the folders whose production files import it. Folders
// of other modules (their own go.mod) are left out.
func productionImports(t *testing.T) map[string][]string {
	t.Helper()
	root := filepath.Join("..", "..")
	imports := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if rel == "bin" || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		if _, ok := imports[dir]; !ok {
			imports[dir] = nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			if dep, ok := strings.CutPrefix(p, module); ok && !slices.Contains(imports[dep], dir) {
				imports[dep] = append(imports[dep], dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dep := range imports {
		slices.Sort(imports[dep])
	}
	return imports
}
