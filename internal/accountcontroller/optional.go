package accountcontroller

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	swv1 "github.com/servicewatch/servicewatch/api/v1beta1"
)

// crdPoll is how often a manager that found the ClusterCloudAccount CRD
// missing asks the API server's discovery whether it is served now: one
// request per version of the group each time, and none once it is.
const crdPoll = 10 * time.Second

// accountKind is the kind whose CRD is optional: a cluster may run the
// ServiceWatch controller without it (a team that applied only the
// ServiceWatch CRD of a release).
var accountKind = schema.GroupKind{Group: swv1.GroupVersion.Group, Kind: "ClusterCloudAccount"}

// optionalCRD is what the manager knows of the ClusterCloudAccount CRD: the
// zero value is a CRD served, as a test's Accounts without a manager
// assumes.
type optionalCRD struct {
	missing atomic.Bool

	mu      sync.Mutex
	checked bool
	// pending are the setups that wait for the CRD, run when it appears.
	pending []func() error
}

// Installed tells whether the API server served the ClusterCloudAccount
// CRD when the manager last looked: until it does, the manager serves no
// accounts, and Resolve refuses every watch that refers to one.
func (a *Accounts) Installed() bool { return a != nil && !a.crd.missing.Load() }

// WatchAccounts has the ServiceWatch controller c hear of accounts: a change
// to one decides the grants of its watches anew. Without the CRD, it does so
// once the CRD appears.
func (a *Accounts) WatchAccounts(mgr ctrl.Manager, c controller.Controller) error {
	if !a.Enabled() {
		return nil
	}
	return a.whenInstalled(mgr, func() error {
		return c.Watch(source.Kind[client.Object](mgr.GetCache(), &swv1.ClusterCloudAccount{}, handler.EnqueueRequestsFromMapFunc(a.WatchesOfAccount)))
	})
}

// whenInstalled runs setup now when the API server serves the
// ClusterCloudAccount CRD, and otherwise once it does: the first call
// looks, and when the CRD is missing, logs it and adds a runnable to mgr
// that looks again every crdPoll. Served, if set, is told what it found,
// and again when the CRD appears.
func (a *Accounts) whenInstalled(mgr ctrl.Manager, setup func() error) error {
	a.crd.mu.Lock()
	if !a.crd.checked {
		a.crd.checked = true
		if !crdServed(mgr.GetRESTMapper()) {
			a.crd.missing.Store(true)
			log := mgr.GetLogger().WithName("clustercloudaccounts")
			log.Info("The ClusterCloudAccount CRD is not installed: accounts are off, and watches that refer to one are Stalled (AccountNotFound), until it is; the manager starts serving them then, without a restart")
			if err := mgr.Add(&crdPoller{accounts: a, mapper: mgr.GetRESTMapper(), logInfo: log.Info}); err != nil {
				a.crd.mu.Unlock()
				return err
			}
		}
		a.tellServed()
	}
	if a.crd.missing.Load() {
		a.crd.pending = append(a.crd.pending, setup)
		a.crd.mu.Unlock()
		return nil
	}
	a.crd.mu.Unlock()
	return setup()
}

// installed runs the setups that waited for the CRD, then serves accounts.
func (a *Accounts) installed() error {
	a.crd.mu.Lock()
	pending := a.crd.pending
	a.crd.pending = nil
	a.crd.mu.Unlock()
	for _, setup := range pending {
		if err := setup(); err != nil {
			return err
		}
	}
	a.crd.missing.Store(false)
	a.tellServed()
	return nil
}

func (a *Accounts) tellServed() {
	if a.Served != nil {
		a.Served(a.Installed())
	}
}

// crdServed tells whether mapper knows ClusterCloudAccounts. controller-
// runtime's mapper asks discovery again for a kind it does not know; any
// error (discovery down, say) counts as not served yet: the poller asks
// again.
func crdServed(mapper meta.RESTMapper) bool {
	_, err := mapper.RESTMapping(accountKind, swv1.GroupVersion.Version)
	return err == nil
}

// crdPoller looks for the ClusterCloudAccount CRD until it is served, then
// starts what waited for it. Every replica runs it, leader or not, so that
// each knows whether to refuse accounts.
type crdPoller struct {
	accounts *Accounts
	mapper   meta.RESTMapper
	// logInfo logs at info level (the manager's logger).
	logInfo func(msg string, keysAndValues ...any)
}

// Start polls until the CRD is served or ctx ends.
func (p *crdPoller) Start(ctx context.Context) error {
	tick := time.NewTicker(crdPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if crdServed(p.mapper) {
			p.logInfo("The ClusterCloudAccount CRD is installed now: serving accounts")
			return p.accounts.installed()
		}
	}
}

// NeedLeaderElection is false: every replica must learn of the CRD.
func (p *crdPoller) NeedLeaderElection() bool { return false }
