// Command syncpath counts the files a reader visits following one sync
// through the code: from (*ServiceWatchReconciler).Reconcile, from the
// background read it starts (readCloud) and from the parts it reads
// (syncParts, which the reconciler builds once), every call inside
// internal/controller is followed; a call into another package of the module
// counts the file of the function called, and is not followed further (its
// doc comment is what a reader of the sync reads there).
//
// A call through an interface the module declares (the Cloud, the Budgets)
// goes to every implementation of it in the manager's program (cmd/manager
// and the module's packages it links; test files and test support are not
// linked, so their fakes do not count): a reader opens the implementation.
// An interface from a library (error, context.Context, client.Client) ends
// the path, as a library's function does; so does a call of a func value.
//
//	go run ./hack/syncpath        # the files, then "N files"
//	go run ./hack/syncpath -why   # each file with the functions visited in it
package main

import (
	"flag"
	"fmt"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// servicewatch is the sync of this repository, read from its root.
var servicewatch = config{
	program: []string{"./cmd/manager"},
	follow:  "internal/controller",
	roots:   []string{"Reconcile", "readCloud", "syncParts"},
}

func main() {
	why := flag.Bool("why", false, "print, under each file, the functions visited in it")
	flag.Parse()
	out, err := run(*why)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print(out)
}

// run walks servicewatch's sync from the working directory, the
// repository's root.
func run(why bool) (string, error) {
	root, err := os.Getwd()
	if err != nil {
		return "", err
	}
	cfg := servicewatch
	cfg.dir = root
	files, err := visited(cfg)
	if err != nil {
		return "", err
	}
	return report(files, why), nil
}

// report lists the files in order, with their functions when why is set,
// then their count.
func report(files map[string][]string, why bool) string {
	var b strings.Builder
	for _, f := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintln(&b, f)
		if why {
			for _, fn := range files[f] {
				fmt.Fprintln(&b, "\t"+fn)
			}
		}
	}
	fmt.Fprintf(&b, "%d files\n", len(files))
	return b.String()
}

// config says which sync to walk.
type config struct {
	// dir is the module's root; files are named relative to it.
	dir string
	// program are the packages (relative to dir) whose program holds the
	// implementations of the module's interfaces: the production binary.
	program []string
	// follow is the package (relative to the module's path) whose insides
	// are followed.
	follow string
	// roots are the names of the functions or methods of follow the walk
	// starts from; each must name exactly one.
	roots []string
}

// visited walks cfg's sync and returns each file visited (relative to
// cfg.dir, test and generated files aside) with the functions visited in it,
// sorted.
func visited(cfg config) (map[string][]string, error) {
	lcfg := &packages.Config{Mode: packages.LoadAllSyntax | packages.NeedModule, Dir: cfg.dir}
	pkgs, err := packages.Load(lcfg, cfg.program...)
	if err != nil {
		return nil, err
	}
	if packages.PrintErrors(pkgs) > 0 {
		return nil, fmt.Errorf("loading %s failed", strings.Join(cfg.program, " "))
	}
	if len(pkgs) == 0 || pkgs[0].Module == nil {
		return nil, fmt.Errorf("%s is in no module", strings.Join(cfg.program, " "))
	}
	module := pkgs[0].Module.Path + "/"
	follow := module + cfg.follow
	prog, _ := ssautil.AllPackages(pkgs, ssa.InstantiateGenerics)
	prog.Build()

	w := walker{prog: prog, module: module, impls: implementations(prog, module)}
	queue, err := roots(prog, follow, cfg.roots)
	if err != nil {
		return nil, err
	}
	seen := map[*ssa.Function]bool{}
	files := map[string][]string{}
	for len(queue) > 0 {
		fn := queue[0]
		queue = queue[1:]
		if seen[fn] {
			continue
		}
		seen[fn] = true
		pkg := packageOf(fn)
		if fn.Synthetic != "" && pkg == "" {
			queue = append(queue, w.referenced(fn)...) // a bound method value, a wrapper: what it wraps
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
			if rel, err := filepath.Rel(cfg.dir, pos.Filename); err == nil && !strings.HasPrefix(rel, "..") && !strings.HasSuffix(rel, "_test.go") && !strings.Contains(rel, "zz_generated") {
				rel = filepath.ToSlash(rel)
				files[rel] = append(files[rel], written.String())
			}
		}
		if pkg != follow {
			continue // another package: its file counts, its insides are not followed
		}
		queue = append(queue, w.referenced(fn)...)
	}
	for f, fns := range files {
		slices.Sort(fns)
		files[f] = slices.Compact(fns)
	}
	return files, nil
}

// roots are the functions of pkg named by names, one each.
func roots(prog *ssa.Program, pkg string, names []string) ([]*ssa.Function, error) {
	var out []*ssa.Function
	for fn := range ssautil.AllFunctions(prog) {
		if fn.Synthetic != "" || fn.Pkg == nil || fn.Pkg.Pkg.Path() != pkg || !slices.Contains(names, fn.Name()) {
			continue
		}
		out = append(out, fn)
	}
	if len(out) != len(names) {
		return nil, fmt.Errorf("found %d functions named %s in %s, want one each", len(out), strings.Join(names, ", "), pkg)
	}
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

// walker finds where a function sends its reader.
type walker struct {
	prog   *ssa.Program
	module string
	// impls are the module's named concrete types in the program, the
	// candidates for an interface's implementations.
	impls []types.Type
}

// referenced are the functions fn calls or takes as values (method values,
// closures), and for each call through an interface the module declares,
// the implementations of the method called.
func (w walker) referenced(fn *ssa.Function) []*ssa.Function {
	var out []*ssa.Function
	out = append(out, fn.AnonFuncs...)
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if call, ok := instr.(ssa.CallInstruction); ok && call.Common().IsInvoke() {
				out = append(out, w.implementing(call.Common())...)
			}
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

// implementing are the methods an interface call may run: the method of
// every type of the module that implements the interface, when the module
// declares the method called.
func (w walker) implementing(call *ssa.CallCommon) []*ssa.Function {
	m := call.Method
	if m.Pkg() == nil || !strings.HasPrefix(m.Pkg().Path()+"/", w.module) {
		return nil
	}
	iface, ok := call.Value.Type().Underlying().(*types.Interface)
	if !ok {
		return nil
	}
	var out []*ssa.Function
	for _, t := range w.impls {
		recv := t
		if !types.Implements(recv, iface) {
			recv = types.NewPointer(t)
			if !types.Implements(recv, iface) {
				continue
			}
		}
		if sel := w.prog.MethodSets.MethodSet(recv).Lookup(m.Pkg(), m.Name()); sel != nil {
			if f := w.prog.MethodValue(sel); f != nil {
				out = append(out, f)
			}
		}
	}
	return out
}

// implementations are the named, non-generic, non-interface types declared
// at package level in the module's packages of prog.
func implementations(prog *ssa.Program, module string) []types.Type {
	var out []types.Type
	for _, pkg := range prog.AllPackages() {
		if !strings.HasPrefix(pkg.Pkg.Path()+"/", module) {
			continue
		}
		for _, mem := range pkg.Members {
			t, ok := mem.(*ssa.Type)
			if !ok {
				continue
			}
			named, ok := t.Type().(*types.Named)
			if !ok || named.TypeParams().Len() > 0 || types.IsInterface(named) {
				continue
			}
			out = append(out, named)
		}
	}
	return out
}
