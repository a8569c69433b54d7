// Package slim makes one item of a status list (a pipe, a reverse private
// endpoint, an alert) smaller by cutting inside it: every list it holds, at
// any depth (table mappings, field mappings, columns, DNS mappings,
// otherFields), is cut to its first k entries for the largest k that fits a
// byte target, and the item's omitted record counts, by JSON path, what was
// left out. An item whose bare identity (its id, name, state, kind) is all
// that fits keeps only that, and says so.
//
// The list keeper ([Keeper]) lives here, beside the rule it applies: it
// keeps what a list response promises of the items the lenient reader
// (internal/cloudapi/lenient) read, each distinct one once, and of those the
// longest prefix by id that fits a byte budget, big items slimmed first, in
// memory that follows the budget rather than the response. The status
// truncation (internal/controller) applies the same rule to the lists of a
// status, so that one big item never hides the others: cut inside the big
// items first, drop whole items only when identities no longer fit.
//
// It works on the typed items, through a plan of their type built once
// (which members are lists, at which JSON path, how encoding/json writes and
// omits each): sizing an item cut to k is a walk of what the cut keeps that
// adds up its JSON and decoded size as bound.Charge counts them, and the cut
// reslices lists, copying only the structs on the way to a cut list. Nothing
// is encoded or decoded, so one rule serves every item type without a line
// per field and costs about what the kept part of the item costs to walk;
// the work is charged to the caller's budget (the answer's decode work in a
// list call). It is pure and table-tested.
package slim
