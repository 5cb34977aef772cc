// Package cachetrim holds informer transforms that drop what no cache
// reader needs before an object is stored: managedFields, which are often
// the largest part of an object's metadata and are only read by the API
// server's field manager (upstream's kube-controller-manager trims them
// the same way). Updates built from a trimmed object keep the stored
// managedFields: the API server takes them from the live object when a
// request carries none.
package cachetrim
