package kubectlplugin

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// suspendCommand is suspend (suspend true) or resume (false).
func (p *plugin) suspendCommand(suspend bool) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "suspend NAME",
		Short: "Stop a ServiceWatch's calls to the cloud; its status keeps the data it has",
		Long: `suspend sets spec.suspend of the ServiceWatch to true: the manager makes no
call to the cloud for it, keeps its status as it is, and sets Ready to False
with reason Suspended. resume undoes it.

A watch applied by a GitOps tool is set back to what Git says at its next
apply: suspend it in Git instead.`,
		Example: `  kubectl servicewatch suspend analytics-prod -n data`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return p.setSuspend(cmd.Context(), args[0], suspend)
		},
	}
	if !suspend {
		cmd.Use = "resume NAME"
		cmd.Short = "Let a suspended ServiceWatch call the cloud again; it syncs at once"
		cmd.Long = `resume sets spec.suspend of the ServiceWatch to false: a new generation, which
the manager syncs at once.`
		cmd.Example = `  kubectl servicewatch resume analytics-prod -n data`
	}
	return cmd
}

// setSuspend patches spec.suspend of the watch name, and says so; a watch
// already so is left unpatched.
func (p *plugin) setSuspend(ctx context.Context, name string, suspend bool) error {
	c, w, err := p.targetWatch(ctx, name)
	if err != nil {
		return err
	}
	verb := map[bool]string{true: "suspended", false: "resumed"}[suspend]
	if w.Spec.Suspend == suspend {
		return printf(p.streams.Out, "%s/%s already %s\n", resourceName, name, verb)
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]bool{"suspend": suspend}})
	if err != nil {
		return fmt.Errorf("building the spec patch: %w", err)
	}
	if err := c.Patch(ctx, w, client.RawPatch(types.MergePatchType, patch)); err != nil {
		return fmt.Errorf("setting spec.suspend of %s/%s: %w", w.Namespace, name, err)
	}
	return printf(p.streams.Out, "%s/%s %s\n", resourceName, name, verb)
}
