package alerts

import (
	"crypto/sha256"
	"encoding/binary"
	"sync"
	"time"

	"github.com/servicewatch/servicewatch/internal/cloudapi"
)

// The modes Routes.Mode reports.
const (
	ModeList     = "List"
	ModeOneByOne = "OneByOne"
)

// MaxRoutes bounds the answers one Routes keeps. An answer lasts
// retryAfter unless it is given again, so that many are kept only when as
// many distinct hosts, credentials and services answered a list call
// within retryAfter; past it the answer confirmed longest ago is dropped
// (its watches try the list once more). Each is kept by its key's digest,
// whatever the URL's length: about 1.5 MB for all of them.
const MaxRoutes = 10000

// RouteKey is everything that decided how a list call was answered: the
// API and base URL of the host, the credential it was made with, and on the
// management API the organization and service whose list it is (leave them
// empty on the alert API, whose list is the whole host's). One watch's
// answer (a service that does not exist, a token its host treats
// otherwise) then never decides how a watch with another credential or of
// another service reads.
type RouteKey struct {
	// API is cloudapi.APIAlert or cloudapi.APIManagement.
	API string
	// URL is the host's base URL as the watch names it.
	URL string
	// Credential is the digest of the token or key the call was made with.
	Credential cloudapi.CredentialDigest
	// OrganizationID and ServiceID name the service of a management API list.
	OrganizationID, ServiceID string
}

// RouteOf is the key of the list src serves when read with the credential
// of digest (src's own credential may not be read yet): the management
// API's names its organization and service, the alert API's does not.
func RouteOf(src cloudapi.AlertSource, digest cloudapi.CredentialDigest) RouteKey {
	return RouteKey{API: src.API, URL: src.BaseURL, Credential: digest, OrganizationID: src.OrganizationID, ServiceID: src.ServiceID}
}

// routeID is a RouteKey's digest: what Routes keeps of it.
type routeID [sha256.Size]byte

// id is the digest of the key's parts, each after its length, so that
// ("ab", "c") and ("a", "bc") differ.
func (k RouteKey) id() routeID {
	h := sha256.New()
	for _, part := range []string{k.API, k.URL, string(k.Credential[:]), k.OrganizationID, k.ServiceID} {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(part))))
		h.Write([]byte(part))
	}
	return routeID(h.Sum(nil))
}

// Routes remembers, per RouteKey, whether the host serves the list route
// there. Safe for concurrent use; it keeps at most MaxRoutes answers.
type Routes struct {
	now        func() time.Time
	retryAfter time.Duration
	mu         sync.Mutex
	routes     map[routeID]route
	// swept is when answers older than retryAfter were last dropped.
	swept time.Time
}

// route is what Routes knows of one key.
type route struct {
	listed bool
	// since is when the key was first seen read the way it is now.
	since time.Time
	// checked is when the key last answered the way it does now.
	checked time.Time
}

// NewRoutes returns an empty memory, which tries the list again on a key
// without one retryAfter after it last said so.
func NewRoutes(now func() time.Time, retryAfter time.Duration) *Routes {
	return &Routes{now: now, retryAfter: retryAfter, routes: map[routeID]route{}}
}

// UseList says whether to try the list for key now: true when unknown,
// when the host listed last time, or when the last "no list route" is
// older than retryAfter (so an upgraded server is noticed).
func (r *Routes) UseList(key RouteKey) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.routes[key.id()]
	return !ok || h.listed || r.now().Sub(h.checked) >= r.retryAfter
}

// Listed records that the host served the list for key.
func (r *Routes) Listed(key RouteKey) { r.record(key, true) }

// NoList records that the host has no list route for key (from
// cloudapi.ErrNoListRoute).
func (r *Routes) NoList(key RouteKey) { r.record(key, false) }

// record notes how key was answered now; since moves only when the way
// changes, so that Mode says how long a key has been read one way.
func (r *Routes) record(key RouteKey, listed bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now, id := r.now(), key.id()
	h, ok := r.routes[id]
	if !ok {
		r.makeRoom(now)
	}
	if !ok || h.listed != listed {
		h = route{listed: listed, since: now}
	}
	h.checked = now
	r.routes[id] = h
}

// makeRoom drops, every retryAfter and whenever the memory is full, the
// answers not given again for longer than retryAfter: they decide nothing
// any more (UseList tries the list again). When it is still full, the
// answer confirmed longest ago goes, so that the memory never holds more
// than MaxRoutes.
func (r *Routes) makeRoom(now time.Time) {
	if len(r.routes) < MaxRoutes && now.Sub(r.swept) <= r.retryAfter {
		return
	}
	r.swept = now
	var oldest routeID
	var oldestAt time.Time
	for id, h := range r.routes {
		switch {
		case now.Sub(h.checked) > r.retryAfter:
			delete(r.routes, id)
		case oldestAt.IsZero() || h.checked.Before(oldestAt):
			oldest, oldestAt = id, h.checked
		}
	}
	if len(r.routes) >= MaxRoutes {
		delete(r.routes, oldest)
	}
}

// Mode reports how key is read now, ModeList or ModeOneByOne, and since
// when; a key not yet tried (or forgotten) reads as ModeList since the
// zero time.
func (r *Routes) Mode(key RouteKey) (mode string, since time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.routes[key.id()]
	if !ok || h.listed {
		return ModeList, h.since
	}
	return ModeOneByOne, h.since
}

// Len is how many answers Routes keeps now.
func (r *Routes) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.routes)
}
