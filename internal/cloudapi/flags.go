package cloudapi

import (
	"flag"
	"fmt"
)

// BindFlags binds the manager's flags that set o to fs: the egress rule and
// the bounds of one call. The other options are the manager's to set.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.BoolVar(&o.DenyLocalAddresses, "deny-local-addresses", false, "Refuse to connect to loopback, unspecified and link-local addresses and cloud metadata services (169.254.169.254, fd00:ec2::254, ...), checked on the resolved address of each connection; such a watch is Stalled (AddressNotAllowed). Off by default for a manager run beside a local fake cloud; the shipped manifests and chart turn it on.")
	fs.DurationVar(&o.Timeout, "cloud-timeout", DefaultTimeout, "Timeout of one cloud API call.")
	fs.Int64Var(&o.MaxResponseBytes, "cloud-max-response-bytes", DefaultMaxResponseBytes, "Largest cloud API response body accepted.")
}

// Validate refuses bounds the flags set that are not positive (zero would
// mean the default to New, which a user who wrote 0 did not ask for).
func (o *Options) Validate() error {
	if o.Timeout <= 0 {
		return fmt.Errorf("--cloud-timeout must be positive")
	}
	if o.MaxResponseBytes <= 0 {
		return fmt.Errorf("--cloud-max-response-bytes must be positive")
	}
	return nil
}
