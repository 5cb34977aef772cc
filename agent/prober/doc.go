// Package prober runs a pod's startup, liveness and readiness probes with
// kubelet's semantics, and keeps their results for the agent's pod loop.
//
// The loop tells the Manager which containers of a pod run (SyncPod, AddPod,
// UpdateContainer) and forgets a pod with RemovePod. For each running
// container and each probe it has, the Manager runs one worker goroutine that
// sleeps on a clock timer between probes (never a busy loop):
//
//   - nothing is probed before initialDelaySeconds after the container started;
//   - a startup probe gates the others: until it succeeds, liveness and
//     readiness do not run, Started is false and Readiness is false;
//   - readiness is false until the first success; a container without a
//     readiness probe is ready once started;
//   - a result changes only after successThreshold/failureThreshold equal
//     results in a row;
//   - after a liveness or startup failure the worker holds until the loop
//     reports a new container ID (the restarted container starts afresh).
//
// A probe whose handler errors (e.g. exec could not run) is retried up to 3
// times and then thrown away, as in kubelet.
//
// Every result change is sent on Updates, which the loop must keep draining
// (workers block on a full channel), so it re-syncs the pod; a
// liveness or startup Failure means "kill and restart this container"
// (KillMessage gives kubelet's event text). Failed probes record kubelet's
// "Unhealthy" events ("Liveness probe failed: HTTP probe failed with
// statuscode: 500").
//
// Handlers: httpGet (HTTP/HTTPS without certificate checks, redirects followed
// only to the same host, User-Agent kube-probe/1.37, 200-399 is success),
// tcpSocket, exec (through Deps.Exec) and grpc (grpc.health.v1).
// The HTTP request building and port resolution are shared with
// agent/lifecycle.
package prober
