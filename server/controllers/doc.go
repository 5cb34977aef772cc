// Package controllers holds orch's in-process control loops. Each lives in
// its own sub-package, talks to the API through client-go (in-process via
// the API server's loopback transport, so writes pass the same validation
// as any client), enqueues keys from informer events into a rate-limited
// workqueue and reconciles level-based, never mutating cached objects. Only
// the Raft leader runs them: Run(ctx) returns when ctx (the leadership) ends.
//
//	nodeipam   assigns each Node a pod CIDR from the cluster CIDR
//	schedloop  binds pending pods to Nodes with server/scheduler
package controllers
