package registry

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func podRules() rules {
	return rules{
		generation: true,
		defaults:   func(obj runtime.Object) { defaultPod(obj.(*corev1.Pod)) },
		prepareCreate: func(obj runtime.Object) {
			pod := obj.(*corev1.Pod)
			pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
			if len(pod.Spec.SchedulingGates) > 0 {
				pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
					Reason: corev1.PodReasonSchedulingGated, Message: "Scheduling is blocked due to non-empty scheduling gates"}}
			}
			pod.Status.QOSClass = podQOS(&pod.Spec)
			addDefaultTolerations(&pod.Spec)
		},
		prepareUpdate: func(obj, old runtime.Object) {
			// DefaultTolerationSeconds admits updates too, before the
			// strategy decides the generation (updatePodGeneration).
			n, o := obj.(*corev1.Pod), old.(*corev1.Pod)
			addDefaultTolerations(&n.Spec)
			n.Generation = o.Generation
			if !apiequality.Semantic.DeepEqual(n.Spec, o.Spec) {
				n.Generation++
			}
		},
		validate: func(obj runtime.Object) field.ErrorList { return validatePodCreate(obj.(*corev1.Pod)) },
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			return validatePodUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
		},
		prepareStatus: func(obj, old runtime.Object) {
			n, o := obj.(*corev1.Pod), old.(*corev1.Pod)
			n.OwnerReferences = o.OwnerReferences
			if n.Status.QOSClass == "" {
				n.Status.QOSClass = o.Status.QOSClass
			}
		},
		validateStatus: func(obj, old runtime.Object) field.ErrorList {
			return validatePodStatusUpdate(obj.(*corev1.Pod), old.(*corev1.Pod))
		},
		fields:  podFields,
		columns: podColumns,
		row:     func(obj runtime.Object) []interface{} { return podRow(obj.(*corev1.Pod)) },
	}
}

func validatePodCreate(pod *corev1.Pod) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validatePodSpec(&pod.Spec, spec)
	if len(pod.Spec.EphemeralContainers) > 0 {
		errs = append(errs, field.Forbidden(spec.Child("ephemeralContainers"), "cannot be set on create"))
	}
	if len(pod.Spec.SchedulingGates) > 0 && pod.Spec.NodeName != "" {
		errs = append(errs, field.Forbidden(spec.Child("nodeName"), "cannot be set until all schedulingGates have been cleared"))
	}
	return errs
}

var updatablePodSpecFields = []string{
	"`spec.containers[*].image`",
	"`spec.initContainers[*].image`",
	"`spec.activeDeadlineSeconds`",
	"`spec.tolerations` (only additions to existing tolerations)",
	"`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
}

// validatePodUpdate ports ValidatePodUpdate: only images, activeDeadlineSeconds
// (set or lowered), added tolerations and removed scheduling gates may change.
func validatePodUpdate(n, o *corev1.Pod) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validatePodSpec(&n.Spec, spec)
	if len(n.Spec.Containers) != len(o.Spec.Containers) {
		return append(errs, field.Forbidden(spec.Child("containers"), "pod updates may not add or remove containers"))
	}
	if len(n.Spec.InitContainers) != len(o.Spec.InitContainers) {
		return append(errs, field.Forbidden(spec.Child("initContainers"), "pod updates may not add or remove containers"))
	}
	if a := n.Spec.ActiveDeadlineSeconds; a != nil && o.Spec.ActiveDeadlineSeconds != nil && *o.Spec.ActiveDeadlineSeconds < *a {
		return append(errs, field.Invalid(spec.Child("activeDeadlineSeconds"), *a, "must be less than or equal to previous value"))
	} else if a == nil && o.Spec.ActiveDeadlineSeconds != nil {
		errs = append(errs, field.Invalid(spec.Child("activeDeadlineSeconds"), a, "must not update from a positive integer to nil value"))
	}
	errs = append(errs, validateOnlyAddedTolerations(n.Spec.Tolerations, o.Spec.Tolerations, spec.Child("tolerations"))...)
	if apiequality.Semantic.DeepEqual(n.Spec, o.Spec) {
		return errs
	}
	m := n.Spec.DeepCopy()
	for i := range m.Containers {
		m.Containers[i].Image = o.Spec.Containers[i].Image
	}
	for i := range m.InitContainers {
		m.InitContainers[i].Image = o.Spec.InitContainers[i].Image
	}
	m.ActiveDeadlineSeconds = o.Spec.ActiveDeadlineSeconds
	m.Tolerations = o.Spec.Tolerations
	if len(m.SchedulingGates) <= len(o.Spec.SchedulingGates) {
		m.SchedulingGates = o.Spec.SchedulingGates
	}
	if g := o.Spec.TerminationGracePeriodSeconds; g != nil && *g < 0 && m.TerminationGracePeriodSeconds != nil && *m.TerminationGracePeriodSeconds == 1 {
		m.TerminationGracePeriodSeconds = g
	}
	if !apiequality.Semantic.DeepEqual(*m, o.Spec) {
		errs = append(errs, field.Forbidden(spec, fmt.Sprintf("pod updates may not change fields other than %s (first change at %s)",
			strings.Join(updatablePodSpecFields, ","), firstDifference("spec", o.Spec, *m))))
	}
	return errs
}

func validateOnlyAddedTolerations(n, o []corev1.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, ot := range o {
		found := false
		for _, nt := range n {
			if apiequality.Semantic.DeepEqual(ot, nt) ||
				(ot.Key == nt.Key && ot.Operator == nt.Operator && ot.Value == nt.Value && ot.Effect == nt.Effect &&
					ot.TolerationSeconds != nil && nt.TolerationSeconds != nil && *ot.TolerationSeconds >= 0 && *nt.TolerationSeconds <= *ot.TolerationSeconds && *nt.TolerationSeconds >= 0) {
				found = true
				break
			}
		}
		if !found {
			errs = append(errs, field.Forbidden(p, "existing toleration can not be modified except its tolerationSeconds"))
			return errs
		}
	}
	return errs
}

// podQOS is qos.GetPodQOS over cpu and memory of all containers.
func podQOS(spec *corev1.PodSpec) corev1.PodQOSClass {
	requests, limits := false, false
	guaranteed := true
	all := append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...)
	for _, c := range all {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			rq, hasReq := c.Resources.Requests[r]
			lq, hasLim := c.Resources.Limits[r]
			if hasReq && !rq.IsZero() {
				requests = true
			}
			if hasLim && !lq.IsZero() {
				limits = true
			}
			if !hasLim || lq.IsZero() || (hasReq && rq.Cmp(lq) != 0) {
				guaranteed = false
			}
		}
	}
	switch {
	case !requests && !limits:
		return corev1.PodQOSBestEffort
	case guaranteed && len(all) > 0:
		return corev1.PodQOSGuaranteed
	default:
		return corev1.PodQOSBurstable
	}
}

func podFields(obj runtime.Object, set fields.Set) {
	pod := obj.(*corev1.Pod)
	set["spec.nodeName"] = pod.Spec.NodeName
	set["spec.restartPolicy"] = string(pod.Spec.RestartPolicy)
	set["spec.schedulerName"] = pod.Spec.SchedulerName
	set["spec.serviceAccountName"] = pod.Spec.ServiceAccountName
	set["spec.hostNetwork"] = strconv.FormatBool(pod.Spec.HostNetwork)
	set["status.phase"] = string(pod.Status.Phase)
	ip := ""
	if len(pod.Status.PodIPs) > 0 {
		ip = pod.Status.PodIPs[0].IP
	}
	set["status.podIP"] = ip
	set["status.nominatedNodeName"] = pod.Status.NominatedNodeName
}

// validatePodStatusUpdate ports the essentials of ValidatePodStatusUpdate.
func validatePodStatusUpdate(n, o *corev1.Pod) field.ErrorList {
	p := field.NewPath("status")
	errs := immutable(n.Status.QOSClass, o.Status.QOSClass, p.Child("qosClass"))
	if n.Status.ObservedGeneration < 0 {
		errs = append(errs, field.Invalid(p.Child("observedGeneration"), n.Status.ObservedGeneration, "must be a non-negative integer"))
	}
	seen := map[string]bool{}
	for i, ip := range n.Status.PodIPs {
		if net.ParseIP(ip.IP) == nil {
			errs = append(errs, field.Invalid(p.Child("podIPs").Index(i), ip.IP, "must be a valid IP address"))
		} else if seen[ip.IP] {
			errs = append(errs, field.Duplicate(p.Child("podIPs").Index(i), ip.IP))
		}
		seen[ip.IP] = true
	}
	errs = append(errs, validateStateTransitions(n.Status.ContainerStatuses, o.Status.ContainerStatuses, o.Spec.RestartPolicy, p.Child("containerStatuses"))...)
	return errs
}

// validateStateTransitions: a container that terminated in a pod that will
// not restart it may not be reported as running again.
func validateStateTransitions(n, o []corev1.ContainerStatus, policy corev1.RestartPolicy, p *field.Path) field.ErrorList {
	if policy == corev1.RestartPolicyAlways {
		return nil
	}
	var errs field.ErrorList
	for i, ns := range n {
		for _, os := range o {
			if os.Name != ns.Name || os.State.Terminated == nil || ns.State.Terminated != nil {
				continue
			}
			if policy == corev1.RestartPolicyNever || os.State.Terminated.ExitCode == 0 {
				errs = append(errs, field.Forbidden(p.Index(i).Child("state"),
					fmt.Sprintf("terminated container %v attempted illegal transition to non-terminated state", ns.Name)))
			}
		}
	}
	return errs
}
