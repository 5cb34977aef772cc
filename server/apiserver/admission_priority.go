package apiserver

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var priorityClassGVR = schema.GroupVersionResource{Group: "scheduling.k8s.io", Version: "v1", Resource: "priorityclasses"}

// builtinPriorities are the classes every cluster has (kube-apiserver
// creates them at start).
var builtinPriorities = map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}

// admitPriority is the Priority admission plugin on pod create: the pod's
// priority and preemptionPolicy come from its PriorityClass (or the
// globalDefault class when it names none); an unknown class or a priority
// that disagrees with the class is refused (403), as upstream.
func (s *Server) admitPriority(ctx context.Context, rc *reqCtx, pod *corev1.Pod) error {
	name := pod.Spec.PriorityClassName
	pc, err := s.priorityClass(ctx, name)
	if err != nil {
		return err
	}
	if pc == nil {
		if name == "" {
			return nil // no default class: the registry's priority 0 stands
		}
		v, ok := builtinPriorities[name]
		if !ok {
			return apierrors.NewForbidden(rc.gr, pod.Name, fmt.Errorf("no PriorityClass with name %s was found", name))
		}
		pc = &schedulingv1.PriorityClass{Value: v}
		pc.Name = name
	}
	if name != "" && pod.Spec.Priority != nil && *pod.Spec.Priority != pc.Value {
		return apierrors.NewForbidden(rc.gr, pod.Name, fmt.Errorf(
			"the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name",
			*pod.Spec.Priority, pc.Value))
	}
	v := pc.Value
	policy := corev1.PreemptLowerPriority
	if pc.PreemptionPolicy != nil {
		policy = *pc.PreemptionPolicy
	}
	pod.Spec.PriorityClassName, pod.Spec.Priority, pod.Spec.PreemptionPolicy = pc.Name, &v, &policy
	return nil
}

// priorityClass reads the named class, or the globalDefault one (the
// highest value wins) when name is empty; nil when there is none.
func (s *Server) priorityClass(ctx context.Context, name string) (*schedulingv1.PriorityClass, error) {
	res := s.byGVR[priorityClassGVR]
	if res == nil {
		return nil, nil
	}
	if name != "" {
		obj, _, err := s.getStored(ctx, res, "", name)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return obj.(*schedulingv1.PriorityClass), nil
	}
	page, err := s.store.List(ctx, res.Prefix(""), res.Prefix(""), 0)
	if err != nil {
		return nil, err
	}
	var best *schedulingv1.PriorityClass
	for i := range page.KVs {
		obj, err := decodeStored(res, &page.KVs[i])
		if err != nil {
			return nil, err
		}
		pc := obj.(*schedulingv1.PriorityClass)
		if pc.GlobalDefault && (best == nil || pc.Value > best.Value) {
			best = pc
		}
	}
	return best, nil
}
