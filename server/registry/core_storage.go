package registry

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

var accessModeOrder = []struct {
	mode  corev1.PersistentVolumeAccessMode
	short string
}{
	{corev1.ReadWriteOnce, "RWO"}, {corev1.ReadOnlyMany, "ROX"}, {corev1.ReadWriteMany, "RWX"}, {corev1.ReadWriteOncePod, "RWOP"},
}

// accessModesString is helper.GetAccessModesAsString.
func accessModesString(modes []corev1.PersistentVolumeAccessMode) string {
	var out []string
	for _, m := range accessModeOrder {
		for _, have := range modes {
			if have == m.mode {
				out = append(out, m.short)
				break
			}
		}
	}
	return strings.Join(out, ",")
}

func validateAccessModes(modes []corev1.PersistentVolumeAccessMode, p *field.Path) field.ErrorList {
	if len(modes) == 0 {
		return field.ErrorList{field.Required(p, "at least 1 access mode is required")}
	}
	var errs field.ErrorList
	rwop, other := false, false
	for _, m := range modes {
		errs = append(errs, oneOf(m, p, corev1.ReadWriteOnce, corev1.ReadOnlyMany, corev1.ReadWriteMany, corev1.ReadWriteOncePod)...)
		if m == corev1.ReadWriteOncePod {
			rwop = true
		} else {
			other = true
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(p, "may not use ReadWriteOncePod with other access modes"))
	}
	return errs
}

func pvRules() rules {
	return rules{
		defaults: func(obj runtime.Object) {
			pv := obj.(*corev1.PersistentVolume)
			if pv.Spec.PersistentVolumeReclaimPolicy == "" {
				pv.Spec.PersistentVolumeReclaimPolicy = corev1.PersistentVolumeReclaimRetain
			}
			if pv.Spec.VolumeMode == nil {
				pv.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
			}
			if pv.Status.Phase == "" {
				pv.Status.Phase = corev1.VolumePending
			}
			if hp := pv.Spec.HostPath; hp != nil && hp.Type == nil {
				hp.Type = ptr.To(corev1.HostPathUnset)
			}
		},
		prepareCreate: func(obj runtime.Object) {
			pv := obj.(*corev1.PersistentVolume)
			now := metav1.NewTime(time.Now().Truncate(time.Second))
			pv.Status = corev1.PersistentVolumeStatus{Phase: corev1.VolumePending, LastPhaseTransitionTime: &now}
		},
		validate: func(obj runtime.Object) field.ErrorList { return validatePV(obj.(*corev1.PersistentVolume)) },
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*corev1.PersistentVolume), old.(*corev1.PersistentVolume)
			errs := validatePV(n)
			if !apiequality.Semantic.DeepEqual(n.Spec.PersistentVolumeSource, o.Spec.PersistentVolumeSource) {
				errs = append(errs, field.Forbidden(field.NewPath("spec", "persistentvolumesource"),
					"spec.persistentvolumesource is immutable after creation (first change at "+
						firstDifference("spec", o.Spec.PersistentVolumeSource, n.Spec.PersistentVolumeSource)+")"))
			}
			errs = append(errs, immutable(n.Spec.VolumeMode, o.Spec.VolumeMode, field.NewPath("spec", "volumeMode"))...)
			return errs
		},
		columns: pvColumns,
		row:     func(obj runtime.Object) []interface{} { return pvRow(obj.(*corev1.PersistentVolume)) },
	}
}

func validatePV(pv *corev1.PersistentVolume) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateAccessModes(pv.Spec.AccessModes, spec.Child("accessModes"))
	if len(pv.Spec.Capacity) == 0 {
		errs = append(errs, field.Required(spec.Child("capacity"), ""))
	} else if q, ok := pv.Spec.Capacity[corev1.ResourceStorage]; !ok || len(pv.Spec.Capacity) > 1 {
		errs = append(errs, field.NotSupported(spec.Child("capacity"), pv.Spec.Capacity, []string{string(corev1.ResourceStorage)}))
	} else if q.Sign() <= 0 {
		errs = append(errs, field.Invalid(spec.Child("capacity").Key(string(corev1.ResourceStorage)), q.String(), "must be greater than zero"))
	}
	errs = append(errs, oneOf(pv.Spec.PersistentVolumeReclaimPolicy, spec.Child("persistentVolumeReclaimPolicy"),
		corev1.PersistentVolumeReclaimDelete, corev1.PersistentVolumeReclaimRecycle, corev1.PersistentVolumeReclaimRetain)...)
	if c := pv.Spec.StorageClassName; c != "" {
		errs = append(errs, dns1123Subdomain(c, spec.Child("storageClassName"))...)
	}
	n := 0
	rv := reflect.ValueOf(pv.Spec.PersistentVolumeSource)
	for i := 0; i < rv.NumField(); i++ {
		if f := rv.Field(i); f.Kind() == reflect.Pointer && !f.IsNil() {
			n++
		}
	}
	switch {
	case n == 0:
		errs = append(errs, field.Required(spec, "must specify a volume type"))
	case n > 1:
		errs = append(errs, field.Forbidden(spec, "may not specify more than 1 volume type"))
	}
	if hp := pv.Spec.HostPath; hp != nil && hp.Path == "" {
		errs = append(errs, field.Required(spec.Child("hostPath", "path"), ""))
	}
	if l := pv.Spec.Local; l != nil {
		if l.Path == "" {
			errs = append(errs, field.Required(spec.Child("local", "path"), ""))
		}
		if pv.Spec.NodeAffinity == nil {
			errs = append(errs, field.Required(spec.Child("nodeAffinity"), "Local volume requires node affinity"))
		}
	}
	return errs
}

var pvColumns = []metav1.TableColumnDefinition{
	col("Capacity", "string", 0, corev1.PersistentVolumeSpec{}.SwaggerDoc()["capacity"]),
	col("Access Modes", "string", 0, corev1.PersistentVolumeSpec{}.SwaggerDoc()["accessModes"]),
	col("Reclaim Policy", "string", 0, corev1.PersistentVolumeSpec{}.SwaggerDoc()["persistentVolumeReclaimPolicy"]),
	col("Status", "string", 0, corev1.PersistentVolumeStatus{}.SwaggerDoc()["phase"]),
	col("Claim", "string", 0, corev1.PersistentVolumeSpec{}.SwaggerDoc()["claimRef"]),
	col("StorageClass", "string", 0, "StorageClass of the pv"),
	col("VolumeAttributesClass", "string", 0, "VolumeAttributesClass of the pv"),
	col("Reason", "string", 0, corev1.PersistentVolumeStatus{}.SwaggerDoc()["reason"]),
	ageColumn(),
	col("VolumeMode", "string", 1, corev1.PersistentVolumeSpec{}.SwaggerDoc()["volumeMode"]),
}

func pvRow(pv *corev1.PersistentVolume) []interface{} {
	claim := ""
	if r := pv.Spec.ClaimRef; r != nil {
		claim = r.Namespace + "/" + r.Name
	}
	q := pv.Spec.Capacity[corev1.ResourceStorage]
	phase := string(pv.Status.Phase)
	if pv.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	class := pv.Spec.StorageClassName
	if c, ok := pv.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		class = c
	}
	return []interface{}{q.String(), accessModesString(pv.Spec.AccessModes), string(pv.Spec.PersistentVolumeReclaimPolicy),
		phase, claim, class, unsetOr(pv.Spec.VolumeAttributesClassName), pv.Status.Reason, age(pv), volumeModeString(pv.Spec.VolumeMode)}
}

func unsetOr(s *string) string {
	if s == nil {
		return "<unset>"
	}
	return *s
}

func volumeModeString(m *corev1.PersistentVolumeMode) string {
	if m == nil {
		return "<unset>"
	}
	return string(*m)
}

func pvcRules() rules {
	return rules{
		defaults: func(obj runtime.Object) {
			pvc := obj.(*corev1.PersistentVolumeClaim)
			if pvc.Spec.VolumeMode == nil {
				pvc.Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
			}
			if pvc.Status.Phase == "" {
				pvc.Status.Phase = corev1.ClaimPending
			}
		},
		prepareCreate: func(obj runtime.Object) {
			obj.(*corev1.PersistentVolumeClaim).Status = corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending}
		},
		validate: func(obj runtime.Object) field.ErrorList {
			return validatePVCSpec(&obj.(*corev1.PersistentVolumeClaim).Spec)
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*corev1.PersistentVolumeClaim), old.(*corev1.PersistentVolumeClaim)
			return append(validatePVCSpec(&n.Spec), validatePVCUpdate(n, o)...)
		},
		columns: pvcColumns,
		row:     func(obj runtime.Object) []interface{} { return pvcRow(obj.(*corev1.PersistentVolumeClaim)) },
	}
}

func validatePVCSpec(s *corev1.PersistentVolumeClaimSpec) field.ErrorList {
	spec := field.NewPath("spec")
	errs := validateAccessModes(s.AccessModes, spec.Child("accessModes"))
	if s.Selector != nil {
		errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, spec.Child("selector"))...)
	}
	rp := spec.Child("resources").Key(string(corev1.ResourceStorage))
	if q, ok := s.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(rp, ""))
	} else if q.Sign() <= 0 {
		errs = append(errs, field.Invalid(rp, q.String(), "must be greater than zero"))
	}
	if c := s.StorageClassName; c != nil && *c != "" {
		errs = append(errs, dns1123Subdomain(*c, spec.Child("storageClassName"))...)
	}
	if m := s.VolumeMode; m != nil {
		errs = append(errs, oneOf(*m, spec.Child("volumeMode"), corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem)...)
	}
	return errs
}

// validatePVCUpdate: the spec is immutable except resources.requests,
// volumeAttributesClassName and binding (volumeName set once).
func validatePVCUpdate(n, o *corev1.PersistentVolumeClaim) field.ErrorList {
	m := n.Spec.DeepCopy()
	m.Resources.Requests = o.Spec.Resources.Requests
	m.VolumeAttributesClassName = o.Spec.VolumeAttributesClassName
	if o.Spec.VolumeName == "" {
		m.VolumeName = ""
	}
	if apiequality.Semantic.DeepEqual(*m, o.Spec) {
		return nil
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec"), fmt.Sprintf(
		"spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims (first change at %s)",
		firstDifference("spec", o.Spec, *m)))}
}

var pvcColumns = []metav1.TableColumnDefinition{
	col("Status", "string", 0, corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["phase"]),
	col("Volume", "string", 0, corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeName"]),
	col("Capacity", "string", 0, corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["capacity"]),
	col("Access Modes", "string", 0, corev1.PersistentVolumeClaimStatus{}.SwaggerDoc()["accessModes"]),
	col("StorageClass", "string", 0, "StorageClass of the pvc"),
	col("VolumeAttributesClass", "string", 0, "VolumeAttributesClass of the pvc"),
	ageColumn(),
	col("VolumeMode", "string", 1, corev1.PersistentVolumeClaimSpec{}.SwaggerDoc()["volumeMode"]),
}

func pvcRow(pvc *corev1.PersistentVolumeClaim) []interface{} {
	phase := string(pvc.Status.Phase)
	if pvc.DeletionTimestamp != nil {
		phase = "Terminating"
	}
	capacity, modes := "", ""
	if pvc.Spec.VolumeName != "" {
		modes = accessModesString(pvc.Status.AccessModes)
		q := pvc.Status.Capacity[corev1.ResourceStorage]
		capacity = q.String()
	}
	class := ""
	if c, ok := pvc.Annotations[corev1.BetaStorageClassAnnotation]; ok {
		class = c
	} else if pvc.Spec.StorageClassName != nil {
		class = *pvc.Spec.StorageClassName
	}
	return []interface{}{phase, pvc.Spec.VolumeName, capacity, modes, class, unsetOr(pvc.Spec.VolumeAttributesClassName),
		age(pvc), volumeModeString(pvc.Spec.VolumeMode)}
}
