// Package sharedread lets callers that read the same thing at about the
// same time share one call: a read under way is joined, and a finished one
// is reused for a short window.
//
// It exists because watches of one service sync at the same moment and
// would otherwise spend their rate budget on identical calls. It is generic
// over the key, which must name one read exactly (every input of the call,
// the credential included), so that a result is only ever shared between
// callers that would have made the same call; what the key holds, and which
// failures are the source's own answer, are the caller's to say.
//
// golang.org/x/sync/singleflight joins calls under way but keeps nothing
// once they end, knows no expected reads, and lets a panic reach every
// caller; the reuse window, the expectations and the panic recovery are
// why this package is not singleflight.
package sharedread
