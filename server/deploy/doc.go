// Package deploy is orch's auto-deploy manifests controller, k3s's "deploy"
// controller: every *.yaml, *.yml and *.json file in
// <data-dir>/server/manifests is applied with server-side apply (field
// manager orch-deploy, conflicts forced) when the leader starts and whenever
// the file changes, watched with inotify.
//
// What each file applied is recorded in a ConfigMap in kube-system (one per
// file, labelled orch.io/manifest-record=true); objects that leave a file,
// or whose file is deleted, are deleted again, but only when they still
// carry the orch.io/manifest-file annotation naming that file. A
// <file>.skip next to a file, or --disable <base name>, turns the file off:
// nothing more is applied or pruned for it.
//
// The reconcile logic (Controller.sync) works on two small interfaces,
// Applier and Records, with in-memory twins for unit tests; client.go holds
// the implementations over a dynamic client to the API server.
package deploy
