// Package job is kube-controller-manager's Job controller for orch: it runs
// a Job's pods until spec.completions of them succeed (NonIndexed) or every
// index 0..completions-1 has succeeded once (Indexed: the pod gets the
// batch.kubernetes.io/job-completion-index annotation and label and the
// JOB_COMPLETION_INDEX env), never more than spec.parallelism at a time.
//
// A sync follows upstream's syncJob. It first decides whether the Job ends
// (decide.go), in upstream's order: an earlier FailureTarget or
// SuccessCriteriaMet stands; a failed pod matching a FailJob rule of
// spec.podFailurePolicy (policy.go) fails it; then backoffLimit (Ignore
// rules keep failures out of it; for restartPolicy OnFailure container
// restarts count), activeDeadlineSeconds, and for Indexed Jobs
// maxFailedIndexes, "every index done with some failed" (FailedIndexes) and
// spec.successPolicy (success.go). A Job that ends has its running pods
// deleted; otherwise pods are created or deleted toward the wanted number
// (manage.go) and reaching spec.completions ends it. Failed pods are
// replaced after an exponential back-off (10s, 20s, ... capped at 6m) from
// their finish times; with spec.podReplacementPolicy Failed (the default
// with a pod failure policy) a deleted pod is replaced only once Failed.
// spec.suspend deletes the active pods and sets Suspended.
//
// With spec.backoffLimitPerIndex (perindex.go) each index has its own
// back-off and limit: a pod carries its index's failure counts in the
// batch.kubernetes.io/job-index-failure-count (and -ignored-failure-count)
// annotations, taken over from the index's last failed pod, which keeps its
// finalizer until the replacement exists; an index out of retries, or
// matching a FailIndex rule, goes to status.failedIndexes.
//
// Pods are tracked with the batch.kubernetes.io/job-tracking finalizer, as
// upstream (track.go): a finished pod's uid (Indexed: its index) is first
// written to status.uncountedTerminatedPods (completedIndexes) together
// with the interim FailureTarget or SuccessCriteriaMet condition, then its
// finalizer is removed, then it is moved to status.succeeded/failed, so no
// pod is counted twice or lost when the server restarts. Failed or Complete
// (with the interim condition's reason: PodFailurePolicy,
// BackoffLimitExceeded, DeadlineExceeded, FailedIndexes,
// MaxFailedIndexesExceeded, SuccessPolicy, CompletionsReached) follows once
// no pod is uncounted or terminating.
//
// Orphans matching a Job's selector are adopted (gaining the finalizer),
// pods that stop matching are released (losing it), as upstream's
// getPodsForJob. Pods whose Job is gone or finished, or that have no
// controller, lose their finalizer (a live GET confirms it first). Jobs
// whose spec.managedBy names another controller are left to it.
package job
