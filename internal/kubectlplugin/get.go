package kubectlplugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// listChunk is how many watches one list call asks for, so that a cluster
// of thousands of watches is read in pages, as kubectl reads it.
const listChunk = 500

// getOptions are the flags of get.
type getOptions struct {
	allNamespaces bool
	states        []string
	output        string
	sortBy        string
}

func (p *plugin) getCommand() *cobra.Command {
	var o getOptions
	cmd := &cobra.Command{
		Use:   "get pipes|endpoints|alerts [WATCH]",
		Short: "List the pipes, reverse private endpoints or alerts of ServiceWatches, one row per item",
		Long: `get lists the items that ServiceWatches found, as their status shows them:
one row per item, across the watches of the namespace (or of every namespace
with -A), or of the watch WATCH only.

Columns: the watch, the item's id, name and state, how long it has been in
that state (SINCE, as kubectl's AGE), and the pipe's source kind,
the endpoint's type or the alert's source; -o wide adds more. -o json and
-o yaml print the rows with the whole status entry of each item.`,
		Example: `  # Which pipes are failing, in every namespace?
  kubectl servicewatch get pipes -A --state Failed

  # The alerts of one watch, as JSON for a script
  kubectl servicewatch get alerts analytics-prod -n data -o json`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.get(cmd.Context(), args, o)
		},
	}
	cmd.Flags().BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "list the items of the watches of every namespace")
	cmd.Flags().StringSliceVar(&o.states, "state", nil, "show only items in these states (comma-separated, any case)")
	cmd.Flags().StringVarP(&o.output, "output", "o", "", "output format: wide, json or yaml")
	cmd.Flags().StringVar(&o.sortBy, "sort-by", "", "sort by a column: namespace, watch, id, name, state, or the kind column (source, type)")
	return cmd
}

// get lists the rows of the item kind args[0], of the watch args[1] if given.
func (p *plugin) get(ctx context.Context, args []string, o getOptions) error {
	kind, ok := findKind(args[0])
	if !ok {
		return fmt.Errorf("unknown item kind %q: use pipes, endpoints or alerts", args[0])
	}
	if !slices.Contains([]string{"", "wide", "json", "yaml"}, o.output) {
		return fmt.Errorf("unknown output format %q: use wide, json or yaml", o.output)
	}
	if len(args) == 2 && o.allNamespaces {
		return fmt.Errorf("a watch name cannot be given with --all-namespaces: name a namespace with -n")
	}
	watches, ns, err := p.listWatches(ctx, args[1:], o.allNamespaces)
	if err != nil {
		return err
	}
	rows := selectRows(watches, kind, o.states)
	for _, note := range leftOutNotes(watches, kind) {
		_ = printf(p.streams.ErrOut, "Note: %s.\n", note)
	}
	if err := sortRows(rows, kind, o.sortBy); err != nil {
		return err
	}
	switch o.output {
	case "json", "yaml":
		return printStructured(p.streams.Out, rows, kind, o.output)
	}
	if len(rows) == 0 {
		p.noneFound(kind, ns, o.allNamespaces)
		return nil
	}
	return printTable(p.streams.Out, rows, kind, o.allNamespaces, o.output == "wide", p.clock.Now())
}

// listWatches reads the watch named in names (at most one) or every watch
// of the namespace, or of all namespaces. It returns the namespace it read.
func (p *plugin) listWatches(ctx context.Context, names []string, all bool) (watches []serviceWatch, ns string, err error) {
	if !all {
		if ns, err = p.namespace(); err != nil {
			return nil, "", err
		}
	}
	c, err := p.newClient()
	if err != nil {
		return nil, "", err
	}
	if len(names) == 1 {
		w, err := getWatch(ctx, c, client.ObjectKey{Namespace: ns, Name: names[0]})
		if err != nil {
			return nil, "", err
		}
		return []serviceWatch{*w}, ns, nil
	}
	opts := &client.ListOptions{Namespace: ns, Limit: listChunk}
	for {
		page := &serviceWatchList{}
		if err := c.List(ctx, page, opts); err != nil {
			return nil, "", fmt.Errorf("listing %s: %w", resourceName, err)
		}
		watches = append(watches, page.Items...)
		if page.Continue == "" {
			return watches, ns, nil
		}
		opts.Continue = page.Continue
	}
}

// selectRows are the rows of kind of every watch, in the order of the
// watches and then of their status, without those whose state is not one of
// states (when states are given).
func selectRows(watches []serviceWatch, kind itemKind, states []string) []row {
	var rows []row
	for i := range watches {
		for _, r := range kind.rows(&watches[i]) {
			if len(states) == 0 || slices.ContainsFunc(states, func(s string) bool { return strings.EqualFold(s, r.state) }) {
				rows = append(rows, r)
			}
		}
	}
	return rows
}

// sortRows orders rows by namespace and watch, and with by set by that
// column first; rows that compare equal keep their status order.
func sortRows(rows []row, kind itemKind, by string) error {
	keys := map[string]func(r row) string{
		"namespace":                      func(r row) string { return r.namespace },
		"watch":                          func(r row) string { return r.watch },
		"id":                             func(r row) string { return r.id },
		"name":                           func(r row) string { return r.name },
		"state":                          func(r row) string { return r.state },
		strings.ToLower(kind.kindColumn): func(r row) string { return r.kind },
	}
	key := func(row) string { return "" }
	if by != "" {
		var ok bool
		if key, ok = keys[strings.ToLower(by)]; !ok {
			return fmt.Errorf("cannot sort %s by %q: use namespace, watch, id, name, state or %s", kind.plural, by, strings.ToLower(kind.kindColumn))
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		return cmpStrings(key(a), key(b), a.namespace, b.namespace, a.watch, b.watch)
	})
	return nil
}

// cmpStrings compares pairs of strings in turn: the first pair that differs
// decides.
func cmpStrings(pairs ...string) int {
	for i := 0; i+1 < len(pairs); i += 2 {
		if c := strings.Compare(pairs[i], pairs[i+1]); c != 0 {
			return c
		}
	}
	return 0
}

// printTable prints rows as kubectl prints a table: upper-case headers,
// columns aligned, "<none>" for a value the item does not have. SINCE is
// how long each item has been in its state at now, as kubectl's AGE.
func printTable(out io.Writer, rows []row, kind itemKind, withNamespace, wide bool, now time.Time) error {
	var b strings.Builder
	headers := []string{"WATCH", "ID", "NAME", "STATE", "SINCE", kind.kindColumn}
	if withNamespace {
		headers = append([]string{"NAMESPACE"}, headers...)
	}
	if wide {
		headers = append(headers, kind.wideColumns...)
	}
	b.WriteString(strings.Join(headers, "\t") + "\n")
	for _, r := range rows {
		cells := []string{r.watch, r.id, r.name, r.state, inState(r.since, now), r.kind}
		if withNamespace {
			cells = append([]string{r.namespace}, cells...)
		}
		if wide {
			cells = append(cells, r.wide...)
		}
		for i, c := range cells {
			cells[i] = cell(c)
		}
		b.WriteString(strings.Join(cells, "\t") + "\n")
	}
	return writeAligned(out, b.String())
}

// writeAligned writes text with its tab-separated columns aligned as
// kubectl aligns them.
func writeAligned(out io.Writer, text string) error {
	tw := printers.GetNewTabWriter(out)
	if _, err := io.WriteString(tw, text); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	return nil
}

// cell is a value as one table cell: "<none>" when empty, and escaped, so
// that a name the cloud sent can neither break the table apart nor command
// the terminal.
func cell(v string) string {
	if v == "" {
		return "<none>"
	}
	return escapeTerminal(v)
}

// structuredRow is one row in -o json and -o yaml: the table's values,
// then the whole status entry.
type structuredRow struct {
	Namespace string `json:"namespace"`
	Watch     string `json:"watch"`
	ID        string `json:"id"`
	Name      string `json:"name,omitempty"`
	State     string `json:"state,omitempty"`
	// Since is when the item's state was first seen with its value.
	Since *metav1.Time `json:"since,omitempty"`
	// Source is the pipe's source kind or the alert's source.
	Source string `json:"source,omitempty"`
	// Type is the endpoint's type.
	Type string `json:"type,omitempty"`
	Item any    `json:"item"`
}

// printStructured prints rows as {"items": [...]} in JSON or YAML: the same
// document for no rows as for many, so that a script needs no special case.
func printStructured(out io.Writer, rows []row, kind itemKind, format string) error {
	items := make([]structuredRow, 0, len(rows))
	for _, r := range rows {
		s := structuredRow{Namespace: r.namespace, Watch: r.watch, ID: r.id, Name: r.name, State: r.state, Since: r.since, Item: r.item}
		if kind.kindColumn == "TYPE" {
			s.Type = r.kind
		} else {
			s.Source = r.kind
		}
		items = append(items, s)
	}
	var doc any = map[string]any{"items": items}
	var b []byte
	var err error
	if format == "yaml" {
		if doc, err = escapedDocument(doc); err == nil {
			b, err = yaml.Marshal(doc)
		}
	} else {
		b, err = json.MarshalIndent(doc, "", "    ")
		b = append(escapeJSON(b), '\n')
	}
	if err != nil {
		return fmt.Errorf("encoding the %s as %s: %w", kind.plural, format, err)
	}
	_, err = out.Write(b)
	return err
}

// noneFound says on stderr that nothing matched, as kubectl does.
func (p *plugin) noneFound(kind itemKind, ns string, all bool) {
	if all {
		_ = printf(p.streams.ErrOut, "No %s found.\n", kind.plural)
		return
	}
	_ = printf(p.streams.ErrOut, "No %s found in %s namespace.\n", kind.plural, ns)
}
