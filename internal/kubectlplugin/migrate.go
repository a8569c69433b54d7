package kubectlplugin

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/servicewatch/servicewatch/internal/storagemigration"
)

func (p *plugin) migrateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Prepare the ServiceWatch objects of the cluster for a release that removes an API version",
		Long: `migrate does, with your rights, what the objects of the servicewatch CRDs
(ServiceWatch, ClusterCloudAccount) need before a release removes an API
version from them:

1. It rewrites every object still stored in an older version in the storage
   version, and trims the CRD's status.storedVersions to it. The manager does
   this itself at start when it may read the CRDs; an install limited to
   namespaces may not, and its objects need this command.
2. It moves the managed fields entries that name a version the CRD no longer
   serves to the storage version, so that kubectl apply and GitOps tools keep
   working on the objects once that version is removed (otherwise the API
   server refuses them: "request to convert CR to an invalid group/version").
   The owners of the fields stay the same. The manager, which writes status
   only, cannot do this.

It is safe to interrupt and to run again: an object that needs nothing is not
written. It needs get of the two CRDs, patch of their status, and list and
patch of servicewatches and clustercloudaccounts and of their status.`,
		Example: `  # Before upgrading to a release whose notes say to run it
  kubectl servicewatch migrate`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return p.migrate(cmd.Context())
		},
	}
}

// migrated is one CRD's row of migrate's table.
type migrated struct {
	crd, storage string
	// stored is the CRD's storedVersions after the run; nil if unread.
	stored []string
	// renamed is what moving the managed fields did; nil if not done.
	renamed *storagemigration.Renamed
	err     error
}

// cells are the row's columns; "-" is what could not be known.
func (r migrated) cells() []any {
	stored, objects, stale, moved := "-", "-", "-", "-"
	if r.stored != nil {
		stored = strings.Join(r.stored, ",")
	}
	if r.renamed != nil {
		objects, stale, moved = strconv.Itoa(r.renamed.Objects), strconv.Itoa(r.renamed.Stale), strconv.Itoa(r.renamed.Renamed)
	}
	return []any{r.crd, r.storage, stored, objects, stale, moved}
}

// migrate migrates the storage of each CRD, then moves its managed fields,
// and prints a row per CRD; a CRD that failed fails the command, after the
// others were done.
func (p *plugin) migrate(ctx context.Context) error {
	c, err := p.newCRDClient()
	if err != nil {
		return err
	}
	m := &storagemigration.Migrator{Client: c} // Migrate and CleanManagedFields take a CRD each; CRDs is Start's
	var rows []migrated
	for _, name := range crdNames() {
		rows = append(rows, migrateOne(ctx, c, m, name))
	}
	tw := printers.GetNewTabWriter(p.streams.Out)
	if err := printf(tw, "CRD\tSTORAGE\tSTORED VERSIONS\tOBJECTS\tSTALE MANAGED FIELDS\tMOVED\n"); err != nil {
		return err
	}
	var errs []error
	for _, r := range rows {
		if err := printf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.cells()...); err != nil {
			return err
		}
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	return errors.Join(errs...)
}

// migrateOne is the row of the CRD name: its storage migration's outcome,
// its storedVersions after it, and what moving its managed fields did. The
// managed fields are moved even when the storage migration failed (they do
// not depend on it), but not when it was forbidden: the same rights are
// missing.
func migrateOne(ctx context.Context, c client.Client, m *storagemigration.Migrator, name string) migrated {
	r := migrated{crd: name}
	outcome, err := m.Migrate(ctx, name)
	r.storage, r.err = strings.ReplaceAll(outcome, "_", "-"), err
	if outcome == storagemigration.OutcomeForbidden {
		return r
	}
	renamed, err := m.CleanManagedFields(ctx, name)
	if err == nil {
		r.renamed = &renamed
	}
	r.err = errors.Join(r.err, err)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, crd); err == nil {
		r.stored = crd.Status.StoredVersions
	}
	return r
}

// newCRDClient is a client that reads CRDs and, as metadata, their objects.
func (p *plugin) newCRDClient() (client.Client, error) {
	cfg, err := p.restConfig()
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building the scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("connecting to the cluster: %w", err)
	}
	return c, nil
}
