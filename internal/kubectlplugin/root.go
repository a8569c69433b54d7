package kubectlplugin

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Exit statuses, as kubectl's: 0 when the command did what it was asked,
// 1 when it did not (an error, a sync that failed or timed out).
const (
	exitOK     = 0
	exitFailed = 1
)

// userAgent names the plugin in the API server's audit log.
const userAgent = "kubectl-servicewatch"

// Main runs the plugin with args (without the program's name), writing to
// streams, and returns the exit status. Errors are printed on streams.ErrOut
// as kubectl prints them ("error: ...").
func Main(ctx context.Context, args []string, streams genericiooptions.IOStreams, clk clock.WithTicker) int {
	return run(ctx, args, streams, clk, rand.Reader)
}

// run is Main with the source of the random part of sync's request values
// (tests fix it, as they fix the clock).
func run(ctx context.Context, args []string, streams genericiooptions.IOStreams, clk clock.WithTicker, random io.Reader) int {
	cmd := newCommand(streams, clk, random)
	cmd.SetArgs(args)
	if err := cmd.ExecuteContext(ctx); err != nil {
		for _, line := range errorLines(err) {
			_, _ = fmt.Fprintln(streams.ErrOut, "error:", line) // nowhere else to tell
		}
		return exitFailed
	}
	return exitOK
}

// plugin is what every command shares: where to write, what time it is, and
// how to reach the cluster (kubectl's own flags).
type plugin struct {
	streams genericiooptions.IOStreams
	clock   clock.WithTicker
	// random makes each sync request's value unique (crypto/rand).
	random io.Reader
	flags  *genericclioptions.ConfigFlags
}

// NewCommand is the root command, kubectl-servicewatch, with kubectl's
// connection flags (--kubeconfig, --context, -n, ...) and the subcommands.
func NewCommand(streams genericiooptions.IOStreams, clk clock.WithTicker) *cobra.Command {
	return newCommand(streams, clk, rand.Reader)
}

func newCommand(streams genericiooptions.IOStreams, clk clock.WithTicker, random io.Reader) *cobra.Command {
	p := &plugin{streams: streams, clock: clk, random: random, flags: genericclioptions.NewConfigFlags(true)}
	root := &cobra.Command{
		Use:   "kubectl-servicewatch",
		Short: "Ask ServiceWatches for a sync, list what they found, and tell why one is not Ready",
		Long: `kubectl servicewatch works with the ServiceWatch objects of the servicewatch operator.

It reads and patches ServiceWatches and reads their events (migrate also
writes the CRDs' status and ClusterCloudAccounts), with your own rights, as
kubectl does; it never reads a Secret and never calls the cloud.`,
		SilenceErrors: true,
		SilenceUsage:  true,
		// kubectl runs the binary kubectl-servicewatch as "kubectl
		// servicewatch"; help shows the words the user types.
		Annotations: map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl servicewatch"},
	}
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetIn(streams.In)
	p.flags.AddFlags(root.PersistentFlags())
	root.AddCommand(p.syncCommand(), p.getCommand(), p.whyCommand(), p.suspendCommand(true), p.suspendCommand(false), p.migrateCommand())
	return root
}

// newClient is a client of the cluster the flags name, knowing the
// ServiceWatch types and the core ones (events).
func (p *plugin) newClient() (client.WithWatch, error) {
	cfg, err := p.restConfig()
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := errors.Join(corev1.AddToScheme(scheme), addAPIToScheme(scheme)); err != nil {
		return nil, fmt.Errorf("building the scheme: %w", err)
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	return c, nil
}

// restConfig is the connection the flags name, as the plugin's user agent.
func (p *plugin) restConfig() (*rest.Config, error) {
	cfg, err := p.flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cfg.UserAgent = userAgent
	// The API server's warnings (such as a deprecated API version) go to
	// stderr as kubectl prints them, not to a logger nobody set up.
	// Their text is the API server's or an admission policy's: escaped.
	cfg.WarningHandler = rest.NewWarningWriter(escapingWriter{p.streams.ErrOut}, rest.WarningWriterOptions{Deduplicate: true})
	return cfg, nil
}

// namespace is the namespace of -n, else the kubeconfig context's, else
// "default", as kubectl chooses it.
func (p *plugin) namespace() (string, error) {
	ns, _, err := p.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", fmt.Errorf("reading the namespace from the kubeconfig: %w", err)
	}
	return ns, nil
}

// target is the client and the namespaced name of the one watch a command
// works on.
func (p *plugin) target(name string) (client.WithWatch, client.ObjectKey, error) {
	ns, err := p.namespace()
	if err != nil {
		return nil, client.ObjectKey{}, err
	}
	c, err := p.newClient()
	if err != nil {
		return nil, client.ObjectKey{}, err
	}
	return c, client.ObjectKey{Namespace: ns, Name: name}, nil
}

// getWatch reads the watch key, saying which one was not found in kubectl's
// words.
func getWatch(ctx context.Context, c client.Reader, key client.ObjectKey) (*serviceWatch, error) {
	w := &serviceWatch{}
	if err := c.Get(ctx, key, w); err != nil {
		return nil, fmt.Errorf("%w in namespace %q", err, key.Namespace)
	}
	return w, nil
}

// targetWatch reads the watch name in the namespace the flags name, with
// the client it was read with.
func (p *plugin) targetWatch(ctx context.Context, name string) (client.WithWatch, *serviceWatch, error) {
	c, key, err := p.target(name)
	if err != nil {
		return nil, nil, err
	}
	w, err := getWatch(ctx, c, key)
	if err != nil {
		return nil, nil, err
	}
	return c, w, nil
}

// printf writes one message of a command's output, its values escaped
// (escapeTerminal), failing when the output cannot be written (a closed
// pipe): the command's result was not seen.
func printf(out io.Writer, format string, args ...any) error {
	if _, err := fmt.Fprintf(out, format, escapedArgs(args)...); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	return nil
}
