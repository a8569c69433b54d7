// Package docs keeps the docs true to the code they describe: every
// condition reason has a troubleshooting row, every metric a row in the
// operations guide, every manager flag a row in the configuration guide;
// every flag, link and command the docs show exists.
//
// The Go code is read by scanning directories, not fixed files, so that
// moving a constant from one file or package to another does not break
// these tests, while renaming or removing it does.
package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
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

// userDocs are the docs for people who run the operator; developerDocs
// those for people who change it. docs/api.md is generated (make docs) and
// checked for links only.
var (
	userDocs      = []string{"README.md", "docs/configuration.md", "docs/troubleshooting.md", "docs/operations.md", "docs/security.md", "docs/gitops.md"}
	developerDocs = []string{"DEVELOPMENT.md", "docs/cloudapi.md", "docs/benchmarks.md"}
)

// markdownFiles is every markdown file the tests read: the root's and
// docs/'s, whatever their names, so that a new doc is checked too.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pattern := range []string{"*.md", "docs/*.md"} {
		found, err := filepath.Glob(filepath.Join(root(), pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			rel, _ := filepath.Rel(root(), f)
			files = append(files, filepath.ToSlash(rel))
		}
	}
	for _, want := range append(slices.Clone(userDocs), developerDocs...) {
		if !slices.Contains(files, want) {
			t.Errorf("%s is missing", want)
		}
	}
	return files
}

// goFiles returns the non-test Go files under the given directories of the
// repository.
func goFiles(t *testing.T, dirs ...string) []string {
	t.Helper()
	var files []string
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root(), dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(files) == 0 {
		t.Fatalf("no Go files under %v", dirs)
	}
	return files
}

// stringConsts returns the distinct values of the string constants whose
// names start with prefix, in every non-test Go file under dirs.
func stringConsts(t *testing.T, prefix string, dirs ...string) []string {
	t.Helper()
	var values []string
	for _, file := range goFiles(t, dirs...) {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
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
					if !slices.Contains(values, v) {
						values = append(values, v)
					}
				}
			}
			return true
		})
	}
	if len(values) == 0 {
		t.Fatalf("no %s* constants under %v", prefix, dirs)
	}
	return values
}

// matches returns the first submatch of pattern in every non-test Go file
// under dirs.
func matches(t *testing.T, pattern string, dirs ...string) []string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	var found []string
	for _, file := range goFiles(t, dirs...) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(found, m[1]) {
				found = append(found, m[1])
			}
		}
	}
	return found
}

// The condition reasons are the API's (api/) and the cloud client's
// (cloudapi's Reason type, wherever it lives under internal/).
func TestTroubleshootingCoversEveryReason(t *testing.T) {
	table := read(t, "docs/troubleshooting.md")
	for _, reason := range stringConsts(t, "Reason", "api", "internal") {
		if !strings.Contains(table, "\n| `"+reason+"` |") {
			t.Errorf("docs/troubleshooting.md has no row for reason %s", reason)
		}
	}
}

func TestOperationsListsEveryMetric(t *testing.T) {
	table := read(t, "docs/operations.md")
	names := matches(t, `(?:Name:\s+|prometheus\.NewDesc\()"(servicewatch_[a-z_]+)"`, "internal")
	if len(names) == 0 {
		t.Fatal("no servicewatch_ metric names found under internal/")
	}
	for _, name := range names {
		if !strings.Contains(table, "| `"+name+"` |") {
			t.Errorf("docs/operations.md's metrics table has no row for %s", name)
		}
	}
}

// flagPattern finds the flags a program defines on a flag.FlagSet (fs) or
// the flag package's own set.
const flagPattern = `\b(?:fs|flag)\.(?:\w*Var|Func|String|Bool|Int|Int64|Duration|Float64)\((?:&[^,]+,\s*)?"([a-z][a-z0-9-]*)"`

// managerFlagsGolden is the manager's command line as `manager -h` prints
// it: each options struct binds its flags in its own package, and
// cmd/manager's TestFlagsAreUnchanged keeps this file equal to what the
// program defines.
const managerFlagsGolden = "cmd/manager/testdata/flags.golden"

// managerFlags are the manager's flags, controller-runtime's logging flags
// (zap-*) included.
func managerFlags(t *testing.T) []string {
	t.Helper()
	var defined []string
	for line := range strings.SplitSeq(read(t, managerFlagsGolden), "\n") {
		if name, ok := strings.CutPrefix(line, "  -"); ok {
			defined = append(defined, strings.Fields(name)[0])
		}
	}
	if len(defined) == 0 {
		t.Fatalf("no flags found in %s", managerFlagsGolden)
	}
	return defined
}

// otherToolFlags are flags of kubectl, kube-apiserver, argocd, helm and go that the docs
// use.
var otherToolFlags = []string{"overwrite", "kind", "resource-name", "set", "take-ownership", "server-side", "for", "timeout", "field-selector", "event-ttl"}

// pluginFlagPattern finds the flags the kubectl plugin's commands define
// on their cobra flag sets.
const pluginFlagPattern = `\.Flags\(\)\.\w+Var(?:P)?\(&[^,]+,\s*"([a-z][a-z0-9-]*)"`

// userFlags are the flags the user docs may name: the manager's and the
// kubectl plugin's.
func userFlags(t *testing.T) []string {
	t.Helper()
	plugin := matches(t, pluginFlagPattern, "internal/kubectlplugin")
	if len(plugin) == 0 {
		t.Fatal("no flags found under internal/kubectlplugin")
	}
	return append(managerFlags(t), plugin...)
}

// TestDocsFlagsExist catches a renamed flag that the docs still tell users
// to set. The user docs may name only the manager's and the kubectl
// plugin's flags (and a few of other tools'); the developer
// docs also those of the fake cloud, the demo and the scale harness.
func TestDocsFlagsExist(t *testing.T) {
	manager, users := managerFlags(t), userFlags(t)
	programs := append(slices.Clone(users), matches(t, flagPattern, "cmd", "hack", "test/scale")...)
	flagRef := regexp.MustCompile(`(?:^|[^-\w])--([a-z][a-z0-9-]+[a-z0-9])`)
	check := func(doc string, defined []string) {
		for _, m := range flagRef.FindAllStringSubmatch(read(t, doc), -1) {
			if !slices.Contains(defined, m[1]) && !slices.Contains(otherToolFlags, m[1]) {
				t.Errorf("%s mentions --%s, which no program it documents defines", doc, m[1])
			}
		}
	}
	for _, doc := range userDocs {
		check(doc, users)
	}
	check("config/manager/manager.yaml", manager)
	for _, doc := range developerDocs {
		check(doc, programs)
	}
}

// TestConfigurationListsEveryFlag: a flag the manager gains gets a row.
func TestConfigurationListsEveryFlag(t *testing.T) {
	doc := read(t, "docs/configuration.md")
	for _, flag := range managerFlags(t) {
		if strings.HasPrefix(flag, "zap-") {
			continue // controller-runtime's, named together in one paragraph
		}
		if !strings.Contains(doc, "| `--"+flag+"` |") {
			t.Errorf("docs/configuration.md has no row for --%s", flag)
		}
	}
}

func TestDocsNameTheCommands(t *testing.T) {
	for doc, cmds := range map[string][]string{
		"README.md":      {"make test", "make demo", "make deploy IMG=", "make install", "make undeploy", "helm install", "kubectl apply -n data -k config/samples"},
		"DEVELOPMENT.md": {"make test", "make lint", "make test-e2e", "make demo-check", "make bench-scale", "make docs", "make manifests", "make generate", "make chart-sync", "make test-rules", "make helm-lint", "make helm-install", ".ci/run"},
	} {
		text := read(t, doc)
		for _, cmd := range cmds {
			if !strings.Contains(text, cmd) {
				t.Errorf("%s does not mention %q", doc, cmd)
			}
		}
	}
}

var (
	linkRef    = regexp.MustCompile(`\]\(([^)\s]*)\)`)
	fenced     = regexp.MustCompile("(?ms)^ *```.*?^ *```") //nolint:gocritic // under (?m), ^ is the start of every line, not only the first
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	headingRef = regexp.MustCompile("(?m)^#{1,6} +(.+?) *#*$")
)

// anchors returns the anchors GitHub makes of a markdown file's headings:
// lower case, punctuation dropped, spaces as hyphens, repeats numbered.
func anchors(text string) []string {
	var out []string
	seen := map[string]int{}
	for _, m := range headingRef.FindAllStringSubmatch(text, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out = append(out, a+"-"+strconv.Itoa(n))
		} else {
			out = append(out, a)
		}
		seen[a]++
	}
	return out
}

// TestDocLinksResolve: every relative link of every markdown file points at
// a file that exists and, with an anchor into a markdown file, at one of
// its headings.
func TestDocLinksResolve(t *testing.T) {
	for _, doc := range markdownFiles(t) {
		// Links are in the prose: what code shows is not one.
		text := codeSpan.ReplaceAllString(fenced.ReplaceAllString(read(t, doc), ""), "")
		for _, m := range linkRef.FindAllStringSubmatch(text, -1) {
			target, anchor, _ := strings.Cut(m[1], "#")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file := doc
			if target != "" {
				file = filepath.ToSlash(filepath.Join(filepath.Dir(doc), target))
				if _, err := os.Stat(filepath.Join(root(), file)); err != nil {
					t.Errorf("%s links to %s, which does not exist", doc, m[1])
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(file, ".md") {
				continue
			}
			if !slices.Contains(anchors(fenced.ReplaceAllString(read(t, file), "")), anchor) {
				t.Errorf("%s links to %s, but %s has no heading with anchor #%s", doc, m[1], file, anchor)
			}
		}
	}
}
