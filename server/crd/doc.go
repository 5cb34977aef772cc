// Package crd serves custom resources: for every CustomResourceDefinition
// whose names are accepted (or that is Established) it builds registry.Resources over unstructured
// objects (one per served version, the storage version's key space shared)
// and keeps them in a Registry the API server looks resources up in. The
// schema work reuses upstream's structural schema, pruning and ObjectMeta
// coercion (k8s.io/apiextensions-apiserver/pkg/apiserver/schema, no CEL) and
// kube-openapi's validator; defaulting is this package's own small walker.
// CRDs with the Webhook conversion strategy store objects in the storage
// version and convert through their webhook (ConversionReview v1 or
// v1beta1, one call per list page) on every read and write in another
// version; only labels and annotations of the metadata may change.
// A leader-only Controller accepts names, sets Established once this
// server's Registry serves the CRD (a client that sees Established finds
// its resources, as upstream's establishing controller waits for its
// handler), and on deletion removes every custom resource before
// releasing the CRD's finalizer.
package crd
