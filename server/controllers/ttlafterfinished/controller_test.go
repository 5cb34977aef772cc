package ttlafterfinished

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestTimeLeft(t *testing.T) {
	now := time.Unix(10000, 0)
	done := func(typ batchv1.JobConditionType, ago time.Duration, ttl *int32) *batchv1.Job {
		return &batchv1.Job{Spec: batchv1.JobSpec{TTLSecondsAfterFinished: ttl}, Status: batchv1.JobStatus{
			Conditions: []batchv1.JobCondition{{Type: typ, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-ago))}}}}
	}
	for _, tc := range []struct {
		name    string
		job     *batchv1.Job
		left    time.Duration
		expired bool
	}{
		{"no ttl", done(batchv1.JobComplete, time.Hour, nil), 0, false},
		{"running", &batchv1.Job{Spec: batchv1.JobSpec{TTLSecondsAfterFinished: ptr.To[int32](5)}}, 0, false},
		{"complete, not yet", done(batchv1.JobComplete, 2*time.Second, ptr.To[int32](5)), 3 * time.Second, false},
		{"failed, expired", done(batchv1.JobFailed, 10*time.Second, ptr.To[int32](5)), 0, true},
		{"ttl 0", done(batchv1.JobComplete, 0, ptr.To[int32](0)), 0, true},
		{"suspended is not finished", done(batchv1.JobSuspended, time.Hour, ptr.To[int32](0)), 0, false},
	} {
		left, expired := timeLeft(tc.job, now)
		if left != tc.left || expired != tc.expired {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, left, expired, tc.left, tc.expired)
		}
	}
}
