// Command kubectl-servicewatch is the kubectl plugin of the servicewatch
// operator: kubectl finds it on the PATH and runs it as
// `kubectl servicewatch`. The commands live in internal/kubectlplugin.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/clock"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/servicewatch/servicewatch/internal/kubectlplugin"
)

func main() {
	// controller-runtime's client logs for managers; unset, its logger
	// prints a stack trace on the user's terminal after 30 seconds. The
	// plugin tells the user through its output, errors and the API
	// server's warnings instead.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	code := kubectlplugin.Main(ctx, os.Args[1:], streams, clock.RealClock{})
	stop()
	os.Exit(code)
}
