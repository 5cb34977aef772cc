package resource

import (
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// defaultClaimSpec: requests (and sub-requests) allocate ExactCount, one
// device unless told otherwise, as upstream's v1 defaults.
func defaultClaimSpec(s *resourcev1.ResourceClaimSpec) {
	for i := range s.Devices.Requests {
		r := &s.Devices.Requests[i]
		if r.Exactly != nil {
			defaultMode(&r.Exactly.AllocationMode, &r.Exactly.Count)
			defaultTolerations(r.Exactly.Tolerations)
		}
		for j := range r.FirstAvailable {
			defaultMode(&r.FirstAvailable[j].AllocationMode, &r.FirstAvailable[j].Count)
			defaultTolerations(r.FirstAvailable[j].Tolerations)
		}
	}
}

func defaultMode(mode *resourcev1.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourcev1.DeviceAllocationModeExactCount
	}
	if *mode == resourcev1.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

// defaultTolerations: operator Equal, as the v1 type's default tag says.
func defaultTolerations(ts []resourcev1.DeviceToleration) {
	for i := range ts {
		if ts[i].Operator == "" {
			ts[i].Operator = resourcev1.DeviceTolerationOpEqual
		}
	}
}

// defaultTaint: a taint without timeAdded was added now (to the second).
func defaultTaint(t *resourcev1.DeviceTaint) {
	if t.TimeAdded == nil {
		t.TimeAdded = &metav1.Time{Time: time.Now().Truncate(time.Second)}
	}
}

func defaultSliceTaints(s *resourcev1.ResourceSliceSpec) {
	for i := range s.Devices {
		for j := range s.Devices[i].Taints {
			defaultTaint(&s.Devices[i].Taints[j])
		}
	}
}
