package daemonset

import (
	"context"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// computeStatus counts as upstream's updateDaemonSetStatus; the first
// (oldest) pod of a node stands for it.
func (c *Controller) computeStatus(st *state) (appsv1.DaemonSetStatus, bool) {
	s := st.ds.Status.DeepCopy()
	s.DesiredNumberScheduled, s.CurrentNumberScheduled, s.NumberMisscheduled = 0, 0, 0
	s.NumberReady, s.NumberAvailable, s.UpdatedNumberScheduled = 0, 0, 0
	now, minReady := c.now(), st.ds.Spec.MinReadySeconds
	waiting := false
	for _, node := range st.nodes {
		run, _ := shouldRun(node, st.spec)
		pods := st.byNode[node.Name]
		if !run {
			if len(pods) > 0 {
				s.NumberMisscheduled++
			}
			continue
		}
		s.DesiredNumberScheduled++
		if len(pods) == 0 {
			continue
		}
		s.CurrentNumberScheduled++
		pod := pods[0]
		if isReady(pod) {
			s.NumberReady++
			if isAvailable(pod, minReady, now) {
				s.NumberAvailable++
			} else {
				waiting = true
			}
		}
		if isUpdated(pod, st.hash, st.gen) {
			s.UpdatedNumberScheduled++
		}
	}
	s.NumberUnavailable = max(s.DesiredNumberScheduled-s.NumberAvailable, 0)
	s.ObservedGeneration = st.ds.Generation
	return *s, waiting
}

func (c *Controller) updateStatus(ctx context.Context, st *state) error {
	s, waiting := c.computeStatus(st)
	if waiting && st.ds.Spec.MinReadySeconds > 0 {
		c.queue.AddAfter(st.key, time.Duration(st.ds.Spec.MinReadySeconds)*time.Second)
	}
	if apiequality.Semantic.DeepEqual(s, st.ds.Status) {
		return nil
	}
	ds := st.ds.DeepCopy()
	ds.Status = s
	_, err := c.client.AppsV1().DaemonSets(ds.Namespace).UpdateStatus(ctx, ds, metav1.UpdateOptions{})
	return err
}
