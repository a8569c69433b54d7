// Package controller holds the ServiceWatch reconciler: it reads the
// referenced Secrets, calls the cloud through a small interface, and writes
// what it finds into the ServiceWatch's status.
package controller
