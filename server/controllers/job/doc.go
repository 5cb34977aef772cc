// Package job is kube-controller-manager's Job controller for orch: it runs
// a Job's pods until spec.completions of them succeed (NonIndexed) or every
// index 0..completions-1 has succeeded once (Indexed: the pod gets the
// batch.kubernetes.io/job-completion-index annotation and label and the
// JOB_COMPLETION_INDEX env), never more than spec.parallelism at a time.
//
// Pods are tracked with the batch.kubernetes.io/job-tracking finalizer, as
// upstream: a finished pod's uid is first written to
// status.uncountedTerminatedPods, then its finalizer is removed, then it is
// moved to status.succeeded/failed, so no pod is counted twice or lost when
// the server restarts. Failed pods are replaced after an exponential
// back-off (10s, 20s, ... capped at 6m); more than spec.backoffLimit failures
// (for restartPolicy OnFailure container restarts count too) fail the Job
// (FailureTarget, then Failed/BackoffLimitExceeded once no pod runs), as does
// spec.activeDeadlineSeconds (DeadlineExceeded). Success adds
// SuccessCriteriaMet, then Complete with status.completionTime. spec.suspend
// deletes the active pods and sets Suspended. Pods whose Job is gone lose
// their finalizer (a live GET confirms the Job is gone first).
package job
