// Command pause is the sandbox ("pause") image of the end-to-end cluster:
// the process that holds a Pod's namespaces. It waits for SIGINT or SIGTERM
// and exits 0. It is built here because the machine reaches no registry to
// pull registry.k8s.io/pause from.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	<-sigs
}
