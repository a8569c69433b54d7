package secretwatch

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Digests remembers, by Secret and resourceVersion, the digest D of the
// credential the Secret holds: a digest, never the credential. A caller that
// waits asks again with the digest, and reads the credential from the API
// server only when it goes ahead. It holds one entry per referenced Secret
// and kind of credential, replaced when the Secret changes.
type Digests[D any] struct {
	mu sync.Mutex
	m  map[secretCredential]versioned[D]
}

// secretCredential names one kind of credential of one Secret.
type secretCredential struct {
	secret types.NamespacedName
	kind   string
}

type versioned[D any] struct {
	version string
	digest  D
}

// NewDigests returns an empty cache.
func NewDigests[D any]() *Digests[D] {
	return &Digests[D]{m: map[secretCredential]versioned[D]{}}
}

// Get returns the digest of the kind of credential the Secret held at
// version; none for an unknown version ("" when the cache has not seen the
// Secret).
func (c *Digests[D]) Get(secret types.NamespacedName, kind, version string) (D, bool) {
	var none D
	if version == "" {
		return none, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[secretCredential{secret: secret, kind: kind}]
	if !ok || v.version != version {
		return none, false
	}
	return v.digest, true
}

// Put records the digest of what the Secret held at version.
func (c *Digests[D]) Put(secret types.NamespacedName, kind, version string, d D) {
	if version == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[secretCredential{secret: secret, kind: kind}] = versioned[D]{version: version, digest: d}
}
