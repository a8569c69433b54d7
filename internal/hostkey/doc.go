// Package hostkey says when two URLs name the same API host: the one
// normalisation of a host that budgets, the egress allow-list and the
// controller's per-host read slots all use.
//
// It is separate because a host is counted in several places (a rate budget
// per credential and host, an allow-list entry, a slot of concurrent reads
// per host), and each had grown its own notion of one: with three notions,
// "API.example.com:443" and "https://api.example.com" could share a budget
// yet hold two read slots. One function, one answer.
package hostkey
