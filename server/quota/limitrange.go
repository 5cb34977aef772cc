package quota

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// effectiveDefaults are an item's default limit and request after the
// LimitRange API defaulting (default ← max, defaultRequest ← default).
func effectiveDefaults(it *corev1.LimitRangeItem) (limit, request corev1.ResourceList) {
	limit, request = corev1.ResourceList{}, corev1.ResourceList{}
	for k, v := range it.Max {
		limit[k] = v
	}
	for k, v := range it.Default {
		limit[k] = v
	}
	for k, v := range limit {
		request[k] = v
	}
	for k, v := range it.DefaultRequest {
		request[k] = v
	}
	return limit, request
}

// DefaultPod fills missing container limits and requests from the
// Container items of ranges (the LimitRanger's mutating half).
func DefaultPod(p *corev1.Pod, ranges []*corev1.LimitRange) {
	for _, lr := range ranges {
		for i := range lr.Spec.Limits {
			it := &lr.Spec.Limits[i]
			if it.Type != corev1.LimitTypeContainer {
				continue
			}
			limit, request := effectiveDefaults(it)
			for j := range p.Spec.Containers {
				defaultContainer(&p.Spec.Containers[j].Resources, limit, request)
			}
			for j := range p.Spec.InitContainers {
				defaultContainer(&p.Spec.InitContainers[j].Resources, limit, request)
			}
		}
	}
}

func defaultContainer(r *corev1.ResourceRequirements, limit, request corev1.ResourceList) {
	for k, v := range limit {
		if _, ok := r.Limits[k]; !ok {
			if r.Limits == nil {
				r.Limits = corev1.ResourceList{}
			}
			r.Limits[k] = v.DeepCopy()
		}
	}
	for k, v := range request {
		if _, ok := r.Requests[k]; ok {
			continue
		}
		if r.Requests == nil {
			r.Requests = corev1.ResourceList{}
		}
		// An explicit limit below the default request wins, as upstream.
		if l, ok := r.Limits[k]; ok && l.Cmp(v) < 0 {
			r.Requests[k] = l.DeepCopy()
			continue
		}
		r.Requests[k] = v.DeepCopy()
	}
}

// ValidatePod checks a pod against the Container and Pod items of ranges.
func ValidatePod(p *corev1.Pod, ranges []*corev1.LimitRange) error {
	var errs []error
	for _, lr := range ranges {
		for i := range lr.Spec.Limits {
			it := &lr.Spec.Limits[i]
			switch it.Type {
			case corev1.LimitTypeContainer:
				for _, c := range allContainers(p) {
					errs = append(errs, checkItem(it, "Container", c.Resources.Requests, c.Resources.Limits)...)
				}
			case corev1.LimitTypePod:
				errs = append(errs, checkItem(it, "Pod", PodRequests(p, false), PodRequests(p, true))...)
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

// ValidateClaim checks a claim's storage request against the
// PersistentVolumeClaim items of ranges.
func ValidateClaim(c *corev1.PersistentVolumeClaim, ranges []*corev1.LimitRange) error {
	var errs []error
	for _, lr := range ranges {
		for i := range lr.Spec.Limits {
			it := &lr.Spec.Limits[i]
			if it.Type == corev1.LimitTypePersistentVolumeClaim {
				errs = append(errs, checkItem(it, "PersistentVolumeClaim", c.Spec.Resources.Requests, c.Spec.Resources.Requests)...)
			}
		}
	}
	return utilerrors.NewAggregate(errs)
}

// checkItem is upstream's minConstraint/maxConstraint/ratioConstraint.
func checkItem(it *corev1.LimitRangeItem, kind string, req, lim corev1.ResourceList) []error {
	var errs []error
	for k, min := range it.Min {
		r, ok := req[k]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("minimum %s usage per %s is %s.  No request is specified", k, kind, min.String()))
		case r.Cmp(min) < 0:
			errs = append(errs, fmt.Errorf("minimum %s usage per %s is %s, but request is %s", k, kind, min.String(), r.String()))
		}
	}
	for k, max := range it.Max {
		l, ok := lim[k]
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("maximum %s usage per %s is %s.  No limit is specified", k, kind, max.String()))
		case l.Cmp(max) > 0:
			errs = append(errs, fmt.Errorf("maximum %s usage per %s is %s, but limit is %s", k, kind, max.String(), l.String()))
		}
	}
	for k, ratio := range it.MaxLimitRequestRatio {
		errs = append(errs, checkRatio(k, kind, ratio, req, lim)...)
	}
	return errs
}

func checkRatio(k corev1.ResourceName, kind string, ratio resource.Quantity, req, lim corev1.ResourceList) []error {
	r, rok := req[k]
	l, lok := lim[k]
	if !rok || !lok {
		return []error{fmt.Errorf("%s max limit to request ratio per %s is %s, but no request or limit is specified", k, kind, ratio.String())}
	}
	if r.IsZero() {
		return nil
	}
	got := float64(l.MilliValue()) / float64(r.MilliValue())
	if got > float64(ratio.MilliValue())/1000 {
		return []error{fmt.Errorf("%s max limit to request ratio per %s is %s, but provided ratio is %f", k, kind, ratio.String(), got)}
	}
	return nil
}
