// Package storetest is the contract test suite every datastore.Store
// implementation must pass: revisions, compare-and-swap, atomic transactions,
// paged prefix lists, counts and watch with bounded history.
package storetest
