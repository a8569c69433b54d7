package cloudapi_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// fmt prints the unexported fields of a struct by reflection, without calling
// their Format or String methods, so redaction there cannot rely on them.
func TestCredentialsRedactedAsUnexportedFields(t *testing.T) {
	const secret, token = "s3cr3t-value", "t0ken-value"
	type holder struct {
		c cloudapi.BasicCredentials
		t cloudapi.BearerToken
		p *cloudapi.BasicCredentials
		s []cloudapi.BearerToken
		m map[string]cloudapi.BasicCredentials
	}
	creds := cloudapi.NewBasicCredentials("key-id-1", secret)
	tok := cloudapi.NewBearerToken(token)
	h := holder{c: creds, t: tok, p: &creds, s: []cloudapi.BearerToken{tok}, m: map[string]cloudapi.BasicCredentials{"k": creds}}
	type nested struct{ h holder }
	forbidden := []string{secret, token, fmt.Sprintf("%x", secret), fmt.Sprintf("%x", token), fmt.Sprintf("%X", secret), fmt.Sprintf("%X", token)}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T"} {
		for _, v := range []any{h, &h, nested{h}, struct{ c cloudapi.BasicCredentials }{creds}, struct{ t cloudapi.BearerToken }{tok}} {
			out := fmt.Sprintf(verb, v)
			for _, f := range forbidden {
				if strings.Contains(out, f) {
					t.Errorf("fmt %s of %T printed a secret: %s", verb, v, out)
				}
			}
		}
	}
}
