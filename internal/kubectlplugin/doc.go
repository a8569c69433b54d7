// Package kubectlplugin is the kubectl servicewatch command line: it asks a
// watch for a sync and waits for that very sync, lists the pipes, endpoints
// and alerts of many watches as rows, explains why a watch is not Ready, and
// suspends and resumes watches.
//
// It is a client of the API server only, as any kubectl user is: it reads
// and patches ServiceWatch objects and reads their events, never a Secret and
// never the cloud, so that what it shows is what status shows and nothing a
// user could not read with kubectl. Its commands take their streams and
// clock from the caller, so that tests run them against a real API server
// with a fixed time and compare their output with golden files.
package kubectlplugin
