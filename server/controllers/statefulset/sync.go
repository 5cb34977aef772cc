package statefulset

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"go.uber.org/zap"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/history"
	"github.com/orch/orch/server/controllers/replicaset"
)

// run is one sync of one set.
type run struct {
	set       *appsv1.StatefulSet
	replicas  []*corev1.Pod // index i holds ordinal start+i; nil = missing
	condemned []*corev1.Pod // ordinals outside the range, highest first
	current   *appsv1.ControllerRevision
	update    *appsv1.ControllerRevision
	curTpl    *corev1.PodTemplateSpec
	monotonic bool
}

func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	set, err := c.setLister.StatefulSets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil || set.DeletionTimestamp != nil {
		return err
	}
	pods, err := replicaset.PodsOwnedBy(c.podIndexer, ns, set.UID, false)
	if err != nil {
		return fmt.Errorf("listing pods of statefulset %s: %w", key, err)
	}
	r, err := c.prepare(ctx, set, pods)
	if err != nil {
		return err
	}
	syncErr := c.reconcile(ctx, r)
	if err := c.updateStatus(ctx, r); err != nil {
		return errors.Join(syncErr, err)
	}
	if syncErr == nil {
		return c.truncateHistory(ctx, r)
	}
	return syncErr
}

func (c *Controller) prepare(ctx context.Context, set *appsv1.StatefulSet, pods []*corev1.Pod) (*run, error) {
	p := parentOf(set)
	update, old, err := c.revs.Sync(ctx, p)
	if errors.Is(err, history.ErrCollision) {
		return nil, c.bumpCollision(ctx, set, err)
	}
	if err != nil {
		return nil, err
	}
	r := &run{set: set, update: update, current: update, curTpl: &set.Spec.Template,
		monotonic: set.Spec.PodManagementPolicy != appsv1.ParallelPodManagement}
	for _, cr := range old {
		if cr.Name == set.Status.CurrentRevision {
			if tpl, err := templateOf(cr); err == nil {
				r.current, r.curTpl = cr, tpl
			}
		}
	}
	n, start := int(replicasOf(set)), startOrdinal(set)
	r.replicas = make([]*corev1.Pod, n)
	for _, pod := range pods {
		switch ord := ordinalOf(set, pod); {
		case ord < 0:
		case ord >= start && ord < start+n:
			r.replicas[ord-start] = pod
		default:
			r.condemned = append(r.condemned, pod)
		}
	}
	sort.Slice(r.condemned, func(i, j int) bool { return ordinalOf(set, r.condemned[i]) > ordinalOf(set, r.condemned[j]) })
	return r, nil
}

func replicasOf(set *appsv1.StatefulSet) int32 {
	if set.Spec.Replicas == nil {
		return 1
	}
	return *set.Spec.Replicas
}

func parentOf(set *appsv1.StatefulSet) history.Parent {
	sel, err := metav1.LabelSelectorAsSelector(set.Spec.Selector)
	if err != nil {
		sel = labels.Nothing()
	}
	return history.Parent{Object: set, Kind: Kind, Selector: sel, Template: &set.Spec.Template,
		CollisionCount: set.Status.CollisionCount}
}

// reconcile: replicas in order, then surplus pods from the highest
// ordinal, then the rolling update (upstream's updateStatefulSet).
func (c *Controller) reconcile(ctx context.Context, r *run) error {
	if wait, err := c.syncReplicas(ctx, r); wait || err != nil {
		return err
	}
	if wait, err := c.scaleDown(ctx, r); wait || err != nil {
		return err
	}
	if r.set.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		return nil
	}
	return c.rollingUpdate(ctx, r)
}

// syncReplicas creates missing pods and replaces failed ones; wait is
// true when OrderedReady must not go further this round.
func (c *Controller) syncReplicas(ctx context.Context, r *run) (wait bool, err error) {
	start := startOrdinal(r.set)
	for i, pod := range r.replicas {
		ord := start + i
		if pod != nil && pod.DeletionTimestamp == nil && isTerminal(pod) {
			c.recorder.Eventf(r.set, corev1.EventTypeWarning, "RecreatingFailedPod",
				"StatefulSet %s/%s is recreating failed Pod %s", r.set.Namespace, r.set.Name, pod.Name)
			if err := c.deletePod(ctx, r.set, pod); err != nil {
				return true, err
			}
			if r.monotonic {
				return true, nil
			}
			continue
		}
		switch {
		case pod == nil:
			created, err := c.createPod(ctx, r, i, ord)
			if err != nil {
				return true, err
			}
			r.replicas[i] = created
			if r.monotonic {
				return true, nil
			}
		case pod.DeletionTimestamp != nil || !c.healthy(r.set, pod):
			if r.monotonic {
				return true, nil
			}
		default:
			if err := c.ensureClaims(ctx, r.set, pod, ord); err != nil {
				return true, err
			}
		}
	}
	return false, nil
}

// scaleDown deletes surplus pods, highest ordinal first; OrderedReady
// deletes one at a time, only while every other pod is healthy.
func (c *Controller) scaleDown(ctx context.Context, r *run) (wait bool, err error) {
	for _, pod := range r.condemned {
		if pod.DeletionTimestamp != nil {
			if r.monotonic {
				return true, nil
			}
			continue
		}
		if r.monotonic && c.otherUnhealthy(r, pod) {
			return true, nil
		}
		if err := c.condemnClaims(ctx, r.set, pod); err != nil {
			return true, err
		}
		if err := c.deletePod(ctx, r.set, pod); err != nil {
			return true, err
		}
		if r.monotonic {
			return true, nil
		}
	}
	return false, nil
}

func (c *Controller) otherUnhealthy(r *run, target *corev1.Pod) bool {
	for _, pods := range [][]*corev1.Pod{r.replicas, r.condemned} {
		for _, p := range pods {
			if p != nil && p != target && !c.healthy(r.set, p) {
				return true
			}
		}
	}
	return false
}

// rollingUpdate deletes the highest-ordinal pod at or above the partition
// that is not at the update revision, once all above it are healthy.
func (c *Controller) rollingUpdate(ctx context.Context, r *run) error {
	partition := 0
	if ru := r.set.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		partition = int(*ru.Partition)
	}
	for i := len(r.replicas) - 1; i >= partition; i-- {
		pod := r.replicas[i]
		if pod == nil {
			return nil
		}
		if revisionOf(pod) != r.update.Name && pod.DeletionTimestamp == nil {
			c.log.Debug("rolling update: replacing pod", zap.String("pod", pod.Name), zap.String("revision", r.update.Name))
			return c.deletePod(ctx, r.set, pod)
		}
		if !c.healthy(r.set, pod) {
			return nil
		}
	}
	return nil
}
