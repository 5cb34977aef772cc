// Package lifecycle runs containers' postStart and preStop hooks with
// kubelet's semantics.
//
//   - PostStart runs right after the container started (kubelet's start
//     step does not finish before it). When it fails, the loop must kill the
//     container (kubelet's reason FailedPostStartHook) and let restartPolicy
//     decide; PostStart returns an error matching ErrPostStartHook and
//     records a Warning FailedPostStartHook event.
//   - PreStop runs before SIGTERM and counts against the termination grace
//     period: it returns the grace left for StopContainer (never below
//     kubelet's 2s minimum). A hook still running when the grace period ends
//     is cancelled. A failed preStop hook records a Warning FailedPreStopHook
//     event; the stop goes on.
//
// Handlers: exec (through Deps.Exec, no timeout of its own), httpGet (the
// prober's request and client, User-Agent kube-lifecycle/1.37; the status
// code is not checked, as in kubelet) and sleep. tcpSocket is deprecated and
// unsupported: as in kubelet, a hook using it fails at runtime.
// Event messages carry no hook output (kubelet keeps it out of events so
// secrets do not leak); the full message is in the returned error and the log.
package lifecycle
