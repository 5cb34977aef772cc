// Package garbagecollector is kube-controller-manager's garbage collector
// for orch. It watches every served resource that can own or be owned
// (events excepted; what is served is read from discovery) through the
// shared cache, keeps a graph of metadata.ownerReferences by uid, and acts:
//
//   - Background: a dependent all of whose owners are gone is deleted (an
//     owner missing from the cache is confirmed gone with a live GET and a
//     uid check first, so owners deleted while the collector was down are
//     handled and a lagging cache never deletes anything). A dependent that
//     keeps some owner only loses the references to the gone ones.
//   - Foreground: an owner marked with the foregroundDeletion finalizer has
//     its dependents deleted; the finalizer is removed (and so the owner) once
//     no dependent with blockOwnerDeletion remains.
//   - Orphan: an owner marked with the orphan finalizer has its reference
//     removed from every dependent, then the finalizer.
package garbagecollector
