// Package lenient reads the cloud's items (pipes, reverse private endpoints,
// alerts) into the api/v1beta1 types, keeping what it can of an item that
// does not quite match them.
//
// Real services send more than the spec lists, and not always in the type it
// lists. encoding/json fails a whole item (and with it a whole list) on one
// odd value; this reader leaves out that value only, keeps it as sent in the
// item's otherFields, and names its path, so that one odd item never costs
// the data of the others. Credentials are redacted as the item is read (see
// internal/cloudapi/redact), before anything else sees it. What a list keeps
// of the items read is the list keeper's, with the slimming rule
// (internal/cloudapi/slim's Keeper); it charges the same work budget (Work)
// and names the fields the reader left out (Report).
//
// It is separate from the cloud client because it is about the shape of the
// data, not about HTTP: its rules are table and fuzz tests of JSON in and
// values out, with no server. It imports the api/v1beta1 types, the schema
// it reads into, and nothing of Kubernetes' clients.
package lenient
