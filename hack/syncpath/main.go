// Command syncpath counts the files a reader visits following one sync
// through the code: from (*ServiceWatchReconciler).Reconcile, from the
// background read it starts (readCloud) and from the parts it reads
// (syncParts, which the reconciler builds once), every static call inside
// internal/controller is followed; a call into another package of the module
// counts the file of the function called, and is not followed further (its
// doc comment is what a reader of the sync reads there). Calls through an
// interface (the Cloud, the client) end the path.
//
//	go run ./hack/syncpath
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

const (
	module     = "github.com/servicewatch/servicewatch/"
	controller = module + "internal/controller"
)

func main() {
	files, err := visited()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Println(f)
	}
	fmt.Printf("%d files\n", len(files))
}

func visited() ([]string, error) {
	cfg := &packages.Config{Mode: packages.LoadAllSyntax}
	pkgs, err := packages.Load(cfg, "./internal/controller")
	if err != nil {
		return nil, err
	}
	if packages.PrintErrors(pkgs) > 0 {
		return nil, fmt.Errorf("loading %s failed", controller)
	}
	prog, _ := ssautil.AllPackages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	root, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	var queue []*ssa.Function
	for fn := range ssautil.AllFunctions(prog) {
		if fn.Pkg == nil || fn.Pkg.Pkg.Path() != controller {
			continue
		}
		if name := fn.String(); strings.HasSuffix(name, ").Reconcile") || fn.Name() == "readCloud" || fn.Name() == "syncParts" {
			queue = append(queue, fn)
		}
	}
	if len(queue) != 3 {
		return nil, fmt.Errorf("found %d of the 3 roots (Reconcile, readCloud, syncParts)", len(queue))
	}
	seen := map[*ssa.Function]bool{}
	files := map[string]bool{}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		if seen[fn] {
			continue
		}
		seen[fn] = true
		pkg := packageOf(fn)
		if fn.Synthetic != "" && pkg == "" {
			queue = append(queue, referenced(fn)...) // a bound method value, a wrapper: what it wraps
			continue
		}
		if !strings.HasPrefix(pkg, module) {
			continue
		}
		written := fn
		if origin := fn.Origin(); origin != nil {
			written = origin // an instance of a generic function is read where it is written
		}
		if pos := prog.Fset.Position(written.Pos()); pos.IsValid() {
			if rel, err := filepath.Rel(root, pos.Filename); err == nil && !strings.HasPrefix(rel, "..") && !strings.HasSuffix(rel, "_test.go") && !strings.Contains(rel, "zz_generated") {
				files[rel] = true
			}
		}
		if os.Getenv("SYNCPATH_DEBUG") != "" {
			fmt.Fprintln(os.Stderr, fn.String(), len(fn.Blocks))
		}
		if pkg != controller {
			continue // another package: its file counts, its insides are not followed
		}
		queue = append(queue, referenced(fn)...)
	}
	out := make([]string, 0, len(files))
	for f := range files {
		out = append(out, f)
	}
	slices.Sort(out)
	return out, nil
}

// packageOf is the path of the package fn is written in ("" for wrappers
// the compiler makes).
func packageOf(fn *ssa.Function) string {
	if origin := fn.Origin(); origin != nil {
		fn = origin
	}
	for f := fn; f != nil; f = f.Parent() {
		if f.Pkg != nil {
			return f.Pkg.Pkg.Path()
		}
	}
	return ""
}

// referenced are the functions fn calls or takes as values (method values,
// closures), statically: a call through an interface or a func value
// passed in ends the path there.
func referenced(fn *ssa.Function) []*ssa.Function {
	var out []*ssa.Function
	out = append(out, fn.AnonFuncs...)
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			for _, op := range instr.Operands(nil) {
				if op == nil {
					continue
				}
				if f, ok := (*op).(*ssa.Function); ok {
					out = append(out, f)
				}
			}
		}
	}
	return out
}
