package cloudapi_test

import (
	"testing"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// Digests key results shared between watches: only the same credential may
// ever give the same digest, and no other part of a credential may collide.
func TestDigestOfTellsCredentialsApart(t *testing.T) {
	base := cloudapi.DigestOf(cloudapi.NewBasicCredentials("key", "secret"))
	if again := cloudapi.DigestOf(cloudapi.NewBasicCredentials("key", "secret")); again != base {
		t.Error("the same key digests differently twice")
	}
	others := map[string]cloudapi.Credential{
		"another secret":            cloudapi.NewBasicCredentials("key", "secret2"),
		"another key ID":            cloudapi.NewBasicCredentials("key2", "secret"),
		"the split moved":           cloudapi.NewBasicCredentials("keys", "ecret"),
		"a token of the same text":  cloudapi.NewBearerToken("secret"),
		"a token of key and secret": cloudapi.NewBearerToken("key:secret"),
	}
	seen := map[cloudapi.CredentialDigest]string{base: "the key"}
	for name, cred := range others {
		d := cloudapi.DigestOf(cred)
		if prev, ok := seen[d]; ok {
			t.Errorf("%s digests like %s", name, prev)
		}
		seen[d] = name
	}
}
