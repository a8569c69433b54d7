package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoTestFileHasTheOldLayoutsName: a test file is named after the source
// file it tests (scope.go -> scope_test.go), never
// servicewatch_*, the names of the layout where every test of the controller
// was a servicewatch_ file and a source file's tests were spread over up to
// seven of them.
func TestNoTestFileHasTheOldLayoutsName(t *testing.T) {
	for _, path := range goFiles(t, "..", "..") {
		name := filepath.Base(path)
		if strings.HasSuffix(name, "_test.go") && strings.HasPrefix(name, "servicewatch_") {
			t.Errorf("%s: name it after the source file it tests (<source>[_topic][_envtest]_test.go)", path)
		}
	}
}

// TestEnvtestFilesSayEnvtest: under internal/, a test file whose tests
// start a control plane (envtest) says so in its name, *_envtest_test.go,
// and a file so named has such a test; go test -short runs the others in
// seconds. A test starts one when it calls, directly or through the
// package's test helpers, testenv.SkipShort (which every envtest fixture
// calls first), testenv.StartForTest, or uses the package's *testenv.Env.
func TestEnvtestFilesSayEnvtest(t *testing.T) {
	byDir := map[string][]string{}
	for _, path := range goFiles(t, "..", "..", "internal") {
		if strings.HasSuffix(path, "_test.go") {
			byDir[filepath.Dir(path)] = append(byDir[filepath.Dir(path)], path)
		}
	}
	for dir, files := range byDir {
		envtest := envtestFiles(t, files)
		for _, path := range files {
			named := strings.HasSuffix(path, "_envtest_test.go")
			if envtest[path] && !named {
				t.Errorf("%s starts a control plane: name it *_envtest_test.go", path)
			}
			if named && !envtest[path] {
				t.Errorf("%s starts no control plane: drop _envtest from its name", path)
			}
		}
		checkEnvtestFilesNameTheirSource(t, dir, files)
	}
}

// checkEnvtestFilesNameTheirSource: an envtest file's name starts with the
// name of the source file beside it that it tests (admission.go ->
// admission_keyshare_envtest_test.go), or with the package's directory name
// for tests of the package as a whole (a sync from Reconcile to the status:
// controller_envtest_test.go).
func checkEnvtestFilesNameTheirSource(t *testing.T, dir string, files []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	stems := map[string]bool{filepath.Base(dir): true}
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			stems[strings.TrimSuffix(n, ".go")] = true
		}
	}
	for _, path := range files {
		stem, ok := strings.CutSuffix(filepath.Base(path), "_envtest_test.go")
		if !ok {
			continue
		}
		words := strings.Split(stem, "_")
		if !namesSource(words, stems) {
			t.Errorf("%s: its name starts with no source file of %s (<source>[_topic]_envtest_test.go)", path, dir)
		}
	}
}

// namesSource tells whether the first n words of a name, for some n, are a
// source file's stem.
func namesSource(words []string, stems map[string]bool) bool {
	for n := 1; n <= len(words); n++ {
		if stems[strings.Join(words[:n], "_")] {
			return true
		}
	}
	return false
}

// envtestFiles returns the test files of one directory that hold a test
// (Test*, Benchmark*, Fuzz*; not TestMain) starting a control plane. Calls
// are followed by name through the functions and methods of all the
// directory's test files, both packages: a helper reached from a test is
// the test's.
func envtestFiles(t *testing.T, files []string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	type fn struct {
		file    string
		pkg     string
		decl    *ast.FuncDecl
		imports map[string]bool
	}
	var funcs []fn
	envVars := map[string]bool{}
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		imports := importNames(f)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				funcs = append(funcs, fn{path, f.Name.Name, d, imports})
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if v, ok := s.(*ast.ValueSpec); ok && isTestenvEnv(v.Type) {
						for _, n := range v.Names {
							envVars[n.Name] = true
						}
					}
				}
			}
		}
	}
	// reaches holds, by package (x or x_test), the names of the functions
	// and methods that start a control plane, directly or through another;
	// grown to a fixed point. A package's tests call only their own
	// package's helpers: x_test reaches x's through an import.
	reaches := map[string]map[string]bool{}
	for changed := true; changed; {
		changed = false
		for _, f := range funcs {
			if reaches[f.pkg] == nil {
				reaches[f.pkg] = map[string]bool{}
			}
			if f.decl.Body == nil || reaches[f.pkg][f.decl.Name.Name] {
				continue
			}
			if startsControlPlane(f.decl.Body, f.imports, envVars, reaches[f.pkg]) {
				reaches[f.pkg][f.decl.Name.Name] = true
				changed = true
			}
		}
	}
	out := map[string]bool{}
	for _, f := range funcs {
		if f.decl.Recv == nil && isTest(f.decl.Name.Name) && reaches[f.pkg][f.decl.Name.Name] {
			out[f.file] = true
		}
	}
	return out
}

func isTest(name string) bool {
	for _, prefix := range []string{"Test", "Benchmark", "Fuzz"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok && name != "TestMain" && (rest == "" || rest[0] < 'a' || rest[0] > 'z') {
			return true
		}
	}
	return false
}

func isTestenvEnv(e ast.Expr) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "testenv" && sel.Sel.Name == "Env"
}

// startsControlPlane tells whether body calls testenv's starters, uses an
// envtest variable, or calls a function or method of the package's tests
// already known to reach them (a call qualified by an import is another
// package's).
func startsControlPlane(body *ast.BlockStmt, imports, envVars, reaches map[string]bool) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if pkg, ok := n.X.(*ast.Ident); ok && pkg.Name == "testenv" && (n.Sel.Name == "SkipShort" || n.Sel.Name == "StartForTest") {
				found = true
			}
		case *ast.Ident:
			if envVars[n.Name] {
				found = true
			}
		case *ast.CallExpr:
			switch f := n.Fun.(type) {
			case *ast.Ident:
				found = reaches[f.Name]
			case *ast.SelectorExpr:
				if pkg, ok := f.X.(*ast.Ident); !ok || !imports[pkg.Name] {
					found = reaches[f.Sel.Name]
				}
			case *ast.IndexExpr: // a generic function: newThing[T](...)
				if id, ok := f.X.(*ast.Ident); ok {
					found = reaches[id.Name]
				}
			}
		}
		return !found
	})
	return found
}

// importNames are the names a file's imports are used by: its alias, or
// the path's last element (without a major version suffix, v2, which Go
// drops; api/v1beta1 keeps its name).
func importNames(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, imp := range f.Imports {
		if imp.Name != nil {
			names[imp.Name.Name] = true
			continue
		}
		path := strings.Trim(imp.Path.Value, `"`)
		elems := strings.Split(path, "/")
		last := elems[len(elems)-1]
		if len(elems) > 1 && len(last) > 1 && last[0] == 'v' && strings.Trim(last[1:], "0123456789") == "" {
			last = elems[len(elems)-2]
		}
		names[strings.ReplaceAll(last, "-", "")] = true
	}
	return names
}

// goFiles lists the .go files under the path, skipping bin/, hidden
// directories and other modules' trees.
func goFiles(t *testing.T, elem ...string) []string {
	t.Helper()
	root := filepath.Join(elem...)
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (d.Name() == "bin" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
