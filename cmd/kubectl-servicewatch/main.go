// Command kubectl-servicewatch is the kubectl plugin of the servicewatch
// operator: kubectl finds it on the PATH and runs it as
// `kubectl servicewatch`. The commands live in internal/kubectlplugin.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/clock"

	"github.com/servicewatch/servicewatch/internal/kubectlplugin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	code := kubectlplugin.Main(ctx, os.Args[1:], streams, clock.RealClock{})
	stop()
	os.Exit(code)
}
