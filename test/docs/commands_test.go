package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// commandDocs are the files whose shell blocks a reader copies and runs.
var commandDocs = []string{"README.md", "DEVELOPMENT.md"}

// TestCommandsExist: every command line of a sh, bash or console block of
// the README and DEVELOPMENT.md names what exists: make targets of the
// Makefile, kustomize directories and files, the chart, Go packages, and
// the repository's paths (bin/ paths must be made by the Makefile).
func TestCommandsExist(t *testing.T) {
	r := newRepo(t)
	for _, doc := range commandDocs {
		lines := commandLines(read(t, doc))
		if len(lines) == 0 {
			t.Errorf("%s shows no commands", doc)
		}
		t.Logf("%s: %d command lines", doc, len(lines))
		for _, line := range lines {
			for _, problem := range r.check(line) {
				t.Errorf("%s: %q: %s", doc, line, problem)
			}
		}
	}
}

// TestCommandCheckCatchesWrongCommands keeps TestCommandsExist able to
// fail: each of these is wrong in one way, and must be caught.
func TestCommandCheckCatchesWrongCommands(t *testing.T) {
	r := newRepo(t)
	for _, line := range []string{
		"make no-such-target",
		"sudo make test-e2e no-such-target E2E_RUN=TestHelm",
		"kubectl apply -k config/no-such-dir",
		"kubectl apply -n data -k hack",
		"kubectl apply -f config/samples/no-such-file.yaml",
		"helm install servicewatch charts/no-such-chart -n servicewatch-system",
		"go run ./cmd/no-such-command",
		"export KUBECONFIG=$PWD/bin/no-such.kubeconfig",
		"hack/e2e/no-such-script.sh down",
		"bin/no-such-binary --scenario x",
	} {
		if len(r.check(line)) == 0 {
			t.Errorf("%q passed the command check", line)
		}
	}
	for _, line := range []string{
		"make test",
		"make bench-scale SCENARIO=priority",
		"kubectl apply -n data -k config/samples",
		"helm install servicewatch charts/servicewatch -n servicewatch-system --set image.tag=v0.1.0",
		"go run ./test/scale/spreadcost",
		"export KUBECONFIG=$PWD/bin/demo.kubeconfig",
	} {
		if problems := r.check(line); len(problems) > 0 {
			t.Errorf("%q failed the command check: %v", line, problems)
		}
	}
}

// commandLines returns the command lines of a markdown text's sh, bash and
// console blocks: continuation lines joined, comments dropped, and in a
// console block only the lines after a "$ " prompt.
func commandLines(text string) []string {
	var out []string
	lang, inBlock, pending := "", false, ""
	for raw := range strings.SplitSeq(text, "\n") {
		line := strings.TrimSpace(raw)
		if after, ok := strings.CutPrefix(line, "```"); ok {
			if inBlock {
				inBlock = false
			} else {
				inBlock, lang = true, after
			}
			continue
		}
		if !inBlock || (lang != "sh" && lang != "bash" && lang != "console") {
			continue
		}
		if pending == "" && lang == "console" {
			var ok bool
			if line, ok = strings.CutPrefix(line, "$ "); !ok {
				continue // output
			}
		}
		line = pending + line
		if before, ok := strings.CutSuffix(line, `\`); ok {
			pending = before
			continue
		}
		pending = ""
		if line = stripComment(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// stripComment drops a "#" comment that is not inside quotes.
func stripComment(line string) string {
	quote := rune(0)
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' '):
			return strings.TrimSpace(line[:i])
		}
	}
	return strings.TrimSpace(line)
}

// words splits a simple command into words, quotes removed.
func words(cmd string) []string {
	var out []string
	var b strings.Builder
	quote, inWord := rune(0), false
	for _, r := range cmd {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				b.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				out = append(out, b.String())
				b.Reset()
				inWord = false
			}
		default:
			b.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, b.String())
	}
	return out
}

var (
	separators = regexp.MustCompile(`&&|\|\||[;|()]`)
	assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	makeTarget = regexp.MustCompile(`(?m)^([A-Za-z0-9][A-Za-z0-9_.-]*)\s*:([^=]|$)`)
)

// repo is what a command may name: the Makefile's targets and text, and the
// repository's top-level entries.
type repo struct {
	targets  []string
	makefile string
	top      []string
}

func newRepo(t *testing.T) repo {
	t.Helper()
	r := repo{makefile: read(t, "Makefile")}
	for _, m := range makeTarget.FindAllStringSubmatch(r.makefile, -1) {
		r.targets = append(r.targets, m[1])
	}
	entries, err := os.ReadDir(root())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "bin" && !strings.HasPrefix(e.Name(), ".") {
			r.top = append(r.top, e.Name())
		}
	}
	r.top = append(r.top, ".ci")
	if len(r.targets) == 0 || len(r.top) == 0 {
		t.Fatal("no make targets or no repository entries found")
	}
	return r
}

// check returns what is wrong with one command line; nothing when all it
// names exists.
func (r repo) check(line string) []string {
	var problems []string
	for _, cmd := range separators.Split(line, -1) {
		w := words(cmd)
		// Assignments before the command name paths too (KUBECONFIG=...).
		for len(w) > 0 && (assignment.MatchString(w[0]) || w[0] == "sudo" || w[0] == "export") {
			if assignment.MatchString(w[0]) {
				problems = append(problems, r.checkPath(w[0][strings.Index(w[0], "=")+1:], false)...)
			}
			w = w[1:]
		}
		if len(w) == 0 {
			continue
		}
		problems = append(problems, r.checkPath(w[0], false)...)
		args := w[1:]
		switch w[0] {
		case "make":
			for _, a := range args {
				if assignment.MatchString(a) {
					problems = append(problems, r.checkPath(a[strings.Index(a, "=")+1:], false)...)
				} else if !strings.HasPrefix(a, "-") && !slices.Contains(r.targets, a) {
					problems = append(problems, "the Makefile has no target "+a)
				}
			}
		case "kubectl":
			for i := 0; i+1 < len(args); i++ {
				switch args[i] {
				case "-k", "--kustomize":
					problems = append(problems, r.checkKustomization(args[i+1])...)
				case "-f", "--filename":
					if args[i+1] != "-" && !strings.Contains(args[i+1], "://") {
						problems = append(problems, r.checkPath(args[i+1], true)...)
					}
				}
			}
		case "helm":
			if len(args) >= 3 && slices.Contains([]string{"install", "upgrade"}, args[0]) {
				problems = append(problems, r.checkPath(args[2], true)...)
			}
		case "go":
			if len(args) >= 2 && slices.Contains([]string{"run", "build", "test", "vet"}, args[0]) {
				for _, a := range args[1:] {
					if strings.HasPrefix(a, "./") {
						problems = append(problems, r.checkPackage(a)...)
					}
				}
			}
		}
		for _, a := range args {
			problems = append(problems, r.checkPath(a, false)...)
		}
	}
	slices.Sort(problems)
	return slices.Compact(problems)
}

// checkPath checks a word that names a path of the repository: one under a
// top-level entry must exist, one under bin/ must be made by the Makefile.
// Other words are left alone unless must is set.
func (r repo) checkPath(word string, must bool) []string {
	p := strings.TrimPrefix(strings.TrimPrefix(word, "$PWD/"), "./")
	if strings.ContainsAny(p, "<*$") || strings.Contains(p, "://") {
		return nil
	}
	first, rest, _ := strings.Cut(p, "/")
	switch {
	case first == "bin" && rest != "":
		made, _, _ := strings.Cut(rest, "/")
		if !strings.Contains(r.makefile, "$(BIN)/"+made) {
			return []string{word + " is not made by any make target"}
		}
	case slices.Contains(r.top, first) && strings.Contains(p, "/") || must:
		if _, err := os.Stat(filepath.Join(root(), p)); err != nil {
			return []string{word + " does not exist"}
		}
	}
	return nil
}

func (r repo) checkKustomization(dir string) []string {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		if _, err := os.Stat(filepath.Join(root(), dir, name)); err == nil {
			return nil
		}
	}
	return []string{dir + " is not a kustomization"}
}

func (r repo) checkPackage(pkg string) []string {
	dir := strings.TrimSuffix(strings.TrimPrefix(pkg, "./"), "/...")
	found, _ := filepath.Glob(filepath.Join(root(), dir, "*.go"))
	if len(found) == 0 {
		return []string{pkg + " is not a Go package of the repository"}
	}
	return nil
}
