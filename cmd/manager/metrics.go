package main

import (
	"crypto/tls"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// metricsServerOptions serves metrics as kubebuilder scaffolds it: by default
// over HTTPS, to callers whose bearer token the API server accepts
// (TokenReview) and who may GET the non-resource URL /metrics
// (SubjectAccessReview). The endpoint names every watch, pipe and alert, so
// it is not for any pod that reaches the port.
func metricsServerOptions(cfg metricsOptions) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: cfg.addr}
	if !cfg.secure {
		return opts
	}
	opts.SecureServing = true
	opts.FilterProvider = filters.WithAuthenticationAndAuthorization
	opts.CertDir = cfg.certDir
	if !cfg.enableHTTP2 {
		opts.TLSOpts = append(opts.TLSOpts, func(c *tls.Config) { c.NextProtos = []string{"http/1.1"} })
	}
	return opts
}
