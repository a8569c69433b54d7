// Package docs keeps the README true to the code it describes: every
// condition reason has a troubleshooting row, every metric and manager flag
// it names exists, and its links resolve.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func root() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..")
}

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// stringConsts returns the string constants of a Go file whose names start
// with prefix.
func stringConsts(t *testing.T, rel, prefix string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root(), rel), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range spec.Names {
			if !strings.HasPrefix(name.Name, prefix) || i >= len(spec.Values) {
				continue
			}
			if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				v, _ := strconv.Unquote(lit.Value)
				values = append(values, v)
			}
		}
		return true
	})
	if len(values) == 0 {
		t.Fatalf("no %s* constants in %s", prefix, rel)
	}
	return values
}

// section returns the README text under a "## title" heading.
func section(t *testing.T, doc, title string) string {
	t.Helper()
	start := strings.Index(doc, "\n## "+title+"\n")
	if start < 0 {
		t.Fatalf("README has no section %q", title)
	}
	rest := doc[start+len(title)+5:]
	if end := strings.Index(rest, "\n## "); end >= 0 {
		rest = rest[:end]
	}
	return rest
}

func TestReadmeTroubleshootingCoversEveryReason(t *testing.T) {
	table := section(t, read(t, "README.md"), "Troubleshooting")
	for _, reason := range stringConsts(t, "api/v1alpha1/conditions.go", "Reason") {
		if !strings.Contains(table, "\n| `"+reason+"` |") {
			t.Errorf("the README's troubleshooting table has no row for reason %s", reason)
		}
	}
}

func TestReadmeListsEveryMetric(t *testing.T) {
	table := section(t, read(t, "README.md"), "Monitoring")
	sources := []struct{ file, pattern string }{
		{"internal/controller/servicewatch_metrics.go", `Name:\s+"(servicewatch_[a-z_]+)"`},
		{"internal/statemetrics/statemetrics.go", `prometheus\.NewDesc\("(servicewatch_[a-z_]+)"`},
	}
	var names [][]string
	for _, src := range sources {
		found := regexp.MustCompile(src.pattern).FindAllStringSubmatch(read(t, src.file), -1)
		if len(found) == 0 {
			t.Fatalf("no metric names found in %s", src.file)
		}
		names = append(names, found...)
	}
	for _, m := range names {
		if !strings.Contains(table, "| `"+m[1]+"` |") {
			t.Errorf("the README's metrics table has no row for %s", m[1])
		}
	}
}

// TestReadmeFlagsExist catches a renamed manager flag that the docs still
// tell users to set.
func TestReadmeFlagsExist(t *testing.T) {
	code := read(t, "cmd/manager/main.go")
	var defined []string
	for _, m := range regexp.MustCompile(`fs\.(?:\w*Var|Func)\((?:&[^,]+,\s*)?"([a-z-]+)"`).FindAllStringSubmatch(code, -1) {
		defined = append(defined, m[1])
	}
	if len(defined) == 0 {
		t.Fatal("no flags found in cmd/manager/main.go")
	}
	for _, doc := range []string{"README.md", "config/manager/manager.yaml"} {
		for _, m := range regexp.MustCompile(`--([a-z][a-z-]+[a-z])`).FindAllStringSubmatch(read(t, doc), -1) {
			if !slices.Contains(defined, m[1]) && !isOtherToolFlag(m[1]) {
				t.Errorf("%s mentions --%s, which the manager does not define", doc, m[1])
			}
		}
	}
}

// isOtherToolFlag tells flags of kubectl, argocd and helm that the README
// uses.
func isOtherToolFlag(name string) bool {
	return slices.Contains([]string{"overwrite", "kind", "resource-name", "set"}, name)
}

func TestReadmeNamesTheCommands(t *testing.T) {
	doc := read(t, "README.md")
	for _, cmd := range []string{"make test", "make demo", "make demo-check", "make deploy IMG=", "make install", "make undeploy", "make docs", "make test-rules", "make helm-lint", "make helm-install", "helm install"} {
		if !strings.Contains(doc, cmd) {
			t.Errorf("README does not mention %q", cmd)
		}
	}
}

func TestDocLinksResolve(t *testing.T) {
	for _, doc := range []string{"README.md", "docs/gitops.md"} {
		text := read(t, doc)
		for _, m := range regexp.MustCompile(`\]\(([^)#]+)(#[^)]*)?\)`).FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(root(), filepath.Dir(doc), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, target)
			}
		}
	}
}
