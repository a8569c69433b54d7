package tenancy

import (
	"errors"
	"flag"
)

// StatusBudgetOptions are the manager's bounds on what statuses keep: per
// namespace and in all, in bytes; 0 is no bound.
type StatusBudgetOptions struct {
	Namespace, Total int
}

// BindFlags binds --namespace-status-budget and --total-status-budget to fs.
func (o *StatusBudgetOptions) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.Namespace, "namespace-status-budget", DefaultNamespaceStatusBytes, "Bytes the statuses of one namespace's ServiceWatches may keep together in the manager's memory, charged as --status-size-limit charges them; a watch past its namespace's share has its lists cut and says so (StatusTruncated). 0: no bound.")
	fs.IntVar(&o.Total, "total-status-budget", DefaultManagerStatusBytes, "Bytes the statuses of all ServiceWatches may keep together, divided into equal parts between the namespaces with watches (a namespace keeps at most its part, whatever the others keep); the default fits the Deployment's 256 Mi with headroom. 0: no bound.")
}

// Validate refuses a negative budget.
func (o *StatusBudgetOptions) Validate() error {
	if o.Namespace < 0 || o.Total < 0 {
		return errors.New("--namespace-status-budget and --total-status-budget must not be negative (0: no bound)")
	}
	return nil
}

// Ledger is the ledger that keeps statuses within o, naming the flags in
// what a watch cut by it says.
func (o *StatusBudgetOptions) Ledger() *StatusLedger {
	return NewStatusLedger(StatusBudget{Bytes: o.Namespace, Setting: "--namespace-status-budget"},
		StatusBudget{Bytes: o.Total, Setting: "--total-status-budget"})
}
