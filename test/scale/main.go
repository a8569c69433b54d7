// Command scale is the black-box scale benchmark of servicewatch: for each
// scenario it starts a fresh kube-apiserver and etcd (envtest's, from
// bin/k8s), the fake cloud (bin/fakecloud) with the scenario's budget,
// latency and faults, and a manager binary with the scenario's flags; it
// creates Secrets and ServiceWatches with a client, and measures only what
// can be seen from outside the manager: ServiceWatch status through a watch
// of the API, the fake cloud's call log, Events, and the manager's peak
// resident memory from /proc.
//
// Since nothing of the manager's code is linked in, the same harness
// measures any two manager binaries, each scenario for both in one run:
//
//	make bench-scale                                    # bin/manager from this tree
//	make bench-scale SCENARIO=priority                  # one scenario
//	MANAGER_BEFORE=bin/manager-before make bench-scale  # before and after, side by side
//
// It prints one Markdown table row per scenario, and progress on standard
// error; logs of every process are kept under bin/scale.d.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/servicewatch/servicewatch/internal/testsupport/childproc"
)

type options struct {
	root      string
	manager   string
	before    string
	fakecloud string
	scenarios string
	rssCap    int64
}

func main() {
	var o options
	flag.StringVar(&o.root, "root", ".", "repository root (where bin/ and config/ are)")
	flag.StringVar(&o.manager, "manager", "", "manager binary to measure (default ROOT/bin/manager)")
	flag.StringVar(&o.before, "before", "", "a second manager binary, measured first in each scenario as the \"before\" column")
	flag.StringVar(&o.fakecloud, "fakecloud", "", "fake cloud binary (default ROOT/bin/fakecloud)")
	flag.StringVar(&o.scenarios, "scenario", "", "comma-separated scenarios to run (default all): "+strings.Join(scenarioNames(), ", "))
	flag.Int64Var(&o.rssCap, "rss-cap-mib", 4096, "kill a manager whose resident memory passes this many MiB")
	flag.Parse()
	o.rssCap <<= 20

	// envtest logs through controller-runtime; only its errors matter here.
	ctrllog.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	os.Exit(childproc.Drive("scale", func(ctx context.Context) error { return run(ctx, o, os.Stdout, os.Stderr) }))
}

// paths are the files the harness reads and writes.
type paths struct {
	k8s, crds, fakecloud, work string
}

// binary is one manager binary and the column it is reported in.
type binary struct {
	column, path string
}

func run(ctx context.Context, o options, out, progress io.Writer) (err error) {
	root, err := filepath.Abs(o.root)
	if err != nil {
		return err
	}
	p := paths{
		k8s:       filepath.Join(root, "bin", "k8s"),
		crds:      filepath.Join(root, "config", "crd", "bases"),
		fakecloud: orDefault(o.fakecloud, filepath.Join(root, "bin", "fakecloud")),
		work:      filepath.Join(root, "bin", "scale.d"),
	}
	binaries := []binary{{"result", orDefault(o.manager, filepath.Join(root, "bin", "manager"))}}
	if o.before != "" {
		binaries = []binary{{"before", o.before}, {"after", binaries[0].path}}
	}
	for _, f := range []string{filepath.Join(p.k8s, "kube-apiserver"), filepath.Join(p.k8s, "etcd"), p.fakecloud, binaries[0].path, binaries[len(binaries)-1].path} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("%s is missing: run `make bench-scale` (it builds what the harness needs)", f)
		}
	}
	selected, err := selectScenarios(o.scenarios)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.work, 0o755); err != nil {
		return err
	}

	// A harness killed with SIGKILL leaves kube-apiserver and etcd behind;
	// the next run stops them.
	pids := childproc.PIDFile{Path: filepath.Join(p.work, "pids"), Bin: filepath.Join(root, "bin")}
	if _, err := pids.Reap(); err != nil {
		return err
	}
	defer pids.Remove()
	defer func() {
		if left := childproc.Leftover(); len(left) > 0 {
			err = errors.Join(err, fmt.Errorf("processes still running after the harness stopped them: %v", left))
		}
	}()

	start := time.Now()
	// Progress is best effort: a failed write is dropped, and the run goes
	// on to stop what it started.
	say := func(format string, args ...any) {
		_, _ = fmt.Fprintf(progress, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}
	if err := printHeader(out, binaries); err != nil {
		return err
	}
	for _, s := range selected {
		cells := make([]string, len(binaries))
		for i, b := range binaries {
			say("%s: %s (%s); load average %s", s.name, b.column, b.path, loadAverage())
			dir := filepath.Join(p.work, s.name, b.column)
			cells[i], err = runOne(ctx, s, p, b.path, dir, o.rssCap, pids)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				cells[i] = "failed: " + err.Error()
			}
			say("%s: %s: %s; load average %s", s.name, b.column, cells[i], loadAverage())
		}
		if _, err := fmt.Fprintf(out, "| `%s` | %s | %s | %s |\n", s.name, s.what, strings.Join(cells, " | "), s.goal); err != nil {
			return fmt.Errorf("writing the row of %s: %w", s.name, err)
		}
	}
	say("done")
	return nil
}

// runOne runs one scenario against one manager binary with a fresh
// environment, and stops everything it started whatever happens.
func runOne(ctx context.Context, s scenario, p paths, manager, dir string, rssCap int64, pids childproc.PIDFile) (cell string, err error) {
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	e, err := newRun(ctx, p, manager, dir, rssCap)
	if err != nil {
		return "", err
	}
	defer func() { err = errors.Join(err, e.close()) }()
	if err := pids.Record(); err != nil {
		return "", err
	}
	cell, err = s.run(ctx, e)
	if err != nil {
		err = fmt.Errorf("%w (logs: %s)", err, dir)
	}
	return cell, err
}

// printHeader writes the head of the result table. The table is what the
// run is for, so a failed write stops it.
func printHeader(w io.Writer, binaries []binary) error {
	cols := make([]string, len(binaries))
	rule := make([]string, len(binaries))
	for i, b := range binaries {
		cols[i], rule[i] = b.column, "---"
	}
	_, err := fmt.Fprintf(w, "| scenario | what is measured | %s | goal |\n|---|---|%s|---|\n",
		strings.Join(cols, " | "), strings.Join(rule, "|"))
	if err != nil {
		return fmt.Errorf("writing the table header: %w", err)
	}
	return nil
}

func selectScenarios(names string) ([]scenario, error) {
	all := scenarios()
	if names == "" {
		return all, nil
	}
	var out []scenario
	for name := range strings.SplitSeq(names, ",") {
		found := false
		for _, s := range all {
			if s.name == strings.TrimSpace(name) {
				out, found = append(out, s), true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown scenario %q; known: %s", name, strings.Join(scenarioNames(), ", "))
		}
	}
	return out, nil
}

func scenarioNames() []string {
	var names []string
	for _, s := range scenarios() {
		names = append(names, s.name)
	}
	return names
}

// loadAverage is the 1-minute load average: on a shared machine it says
// how much a number can be trusted.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(b))[0]
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
