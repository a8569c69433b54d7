package controller

import (
	"go/ast"
	"go/types"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestFilesCallDownwardOnly keeps the package's files in layers: no file
// refers to a declaration of a file that refers back to it, directly or
// through others, so that a reader follows one sync downwards through the
// files without coming back.
func TestFilesCallDownwardOnly(t *testing.T) {
	graph := fileGraph(t)
	for _, group := range cyclesOf(graph) {
		var edges []string
		for _, from := range group {
			for _, to := range graph[from] {
				if slices.Contains(group, to) {
					edges = append(edges, from+" -> "+to)
				}
			}
		}
		t.Errorf("files refer to each other in a loop: %s", strings.Join(edges, ", "))
	}
}

// fileGraph maps each non-test file of the package to the files whose
// functions and methods it calls (or takes as values), as the type checker
// resolves them: a method is in the file that declares it, whatever its
// receiver's type.
func fileGraph(t *testing.T) map[string][]string {
	t.Helper()
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
		packages.NeedTypes | packages.NeedTypesInfo}, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("loading the package: %v", pkgs)
	}
	pkg := pkgs[0]
	graph := map[string][]string{}
	for _, f := range pkg.Syntax {
		from := filepath.Base(pkg.Fset.File(f.Pos()).Name())
		calls := map[string]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			ident, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			fn, ok := pkg.TypesInfo.Uses[ident].(*types.Func)
			if !ok || fn.Pkg() != pkg.Types {
				return true
			}
			if to := filepath.Base(pkg.Fset.File(fn.Pos()).Name()); to != from {
				calls[to] = true
			}
			return true
		})
		graph[from] = slices.Sorted(maps.Keys(calls))
	}
	return graph
}

// cyclesOf returns one loop of each group of files that refer to each other
// (Tarjan's strongly connected components of more than one file).
func cyclesOf(graph map[string][]string) [][]string {
	index, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var cycles [][]string
	next := 0
	var visit func(string)
	visit = func(v string) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range graph[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var group []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			group = append(group, w)
			if w == v {
				break
			}
		}
		if len(group) > 1 {
			slices.Sort(group)
			cycles = append(cycles, group)
		}
	}
	nodes := make([]string, 0, len(graph))
	for v := range graph {
		nodes = append(nodes, v)
	}
	slices.Sort(nodes)
	for _, v := range nodes {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return cycles
}
