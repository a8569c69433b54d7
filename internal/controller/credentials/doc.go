// Package credentials is what a ServiceWatch's syncs read with, and the one
// place that reads it (Reader): the credential of each API, from the
// watch's own Secret or its ClusterCloudAccount's, refused before any
// Secret is read when the account does not grant it or the manager may not
// call the URL (--allowed-api-urls), and read again only when its Secret's
// version changed. It learns of changes to the referenced Secrets (Watch)
// and remembers, by Secret and version, digests of the credentials they
// hold (Digests). It never keeps a Secret's data.
//
// The Watch exists because Secrets no object references (Helm keeps every release
// as a Secret, and a tenant may create any number) must cost the manager
// nothing but the bytes of their events as they pass (issue 17).
//
// Why not client-go's reflector and a metadata informer with a transform:
// both hold every Secret of a list at once. The reflector's list
// (pager.ListWithAlloc, then store.Replace of all the items) and its
// streaming list (a temporary store of every item, then Replace) keep all
// of them until the list ends, whatever the store keeps afterwards, and an
// informer's store keeps every Secret after that, even stripped to its
// identity. BenchmarkUnrelatedSecrets (internal/controller, envtest;
// docs/benchmarks.md, "Secrets no watch references") measured 100,000
// unrelated Secrets of 1 KiB: the metadata informer retained 56.3 MB (563 B
// a Secret) and peaked at 108.9 MB while listing; Watch, which lists 500 at
// a time and keeps only the referenced ones, retained 37 KB (0.4 B a
// Secret) and peaked at 5.5 MB. A reflector over a store that keeps only
// referenced Secrets would cut the retained bytes, not the peak.
package credentials
