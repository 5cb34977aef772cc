package job

import (
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func condition(j *batchv1.Job, t batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range j.Status.Conditions {
		if j.Status.Conditions[i].Type == t {
			return &j.Status.Conditions[i]
		}
	}
	return nil
}

func hasCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	c := condition(j, t)
	return c != nil && c.Status == corev1.ConditionTrue
}

// isFinished: Complete or Failed.
func isFinished(j *batchv1.Job) bool {
	return hasCondition(j, batchv1.JobComplete) || hasCondition(j, batchv1.JobFailed)
}

// setCondition makes t True and tells whether it changed.
func setCondition(j *batchv1.Job, t batchv1.JobConditionType, reason, msg string, now time.Time) bool {
	return setConditionStatus(j, t, corev1.ConditionTrue, reason, msg, now)
}

func setConditionStatus(j *batchv1.Job, t batchv1.JobConditionType, st corev1.ConditionStatus, reason, msg string, now time.Time) bool {
	ts := metav1.NewTime(now)
	if c := condition(j, t); c != nil {
		if c.Status == st && c.Reason == reason && c.Message == msg {
			return false
		}
		if c.Status != st {
			c.LastTransitionTime = ts
		}
		c.Status, c.Reason, c.Message, c.LastProbeTime = st, reason, msg, ts
		return true
	}
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{
		Type: t, Status: st, Reason: reason, Message: msg, LastProbeTime: ts, LastTransitionTime: ts,
	})
	return true
}
