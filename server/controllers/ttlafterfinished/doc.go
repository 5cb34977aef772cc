// Package ttlafterfinished is kube-controller-manager's TTL-after-finished
// controller: a Job with spec.ttlSecondsAfterFinished that is Complete or
// Failed is deleted (background propagation, uid precondition) that many
// seconds after it finished. Each Job is requeued for its expiry time, so
// nothing polls.
package ttlafterfinished
