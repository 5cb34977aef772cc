package registry

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

func statefulSetRules() rules {
	spec := field.NewPath("spec")
	return rules{
		generation: true,
		nameFn:     apivalidation.NameIsDNSLabel, // pod names and hostnames derive from it
		defaults:   func(obj runtime.Object) { defaultStatefulSet(obj.(*appsv1.StatefulSet)) },
		validate: func(obj runtime.Object) field.ErrorList {
			return validateStatefulSetSpec(&obj.(*appsv1.StatefulSet).Spec, spec)
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*appsv1.StatefulSet), old.(*appsv1.StatefulSet)
			errs := validateStatefulSetSpec(&n.Spec, spec)
			errs = append(errs, selectorImmutable(n.Spec.Selector, o.Spec.Selector)...)
			errs = append(errs, immutable(n.Spec.VolumeClaimTemplates, o.Spec.VolumeClaimTemplates, spec.Child("volumeClaimTemplates"))...)
			errs = append(errs, immutable(n.Spec.ServiceName, o.Spec.ServiceName, spec.Child("serviceName"))...)
			return append(errs, immutable(n.Spec.PodManagementPolicy, o.Spec.PodManagementPolicy, spec.Child("podManagementPolicy"))...)
		},
		prepareStatus: keepLabelsOnStatus,
		columns: append([]metav1.TableColumnDefinition{
			col("Ready", "string", 0, "Number of the pod with ready state"),
			ageColumn(),
		}, containerColumns...),
		row: func(obj runtime.Object) []interface{} {
			s := obj.(*appsv1.StatefulSet)
			names, images := containerCells(s.Spec.Template.Spec.Containers)
			return []interface{}{fmt.Sprintf("%d/%d", s.Status.ReadyReplicas, replicasOr1(s.Spec.Replicas)), age(s), names, images}
		},
	}
}

func defaultStatefulSet(s *appsv1.StatefulSet) {
	defaultPodSpec(&s.Spec.Template.Spec)
	for i := range s.Spec.VolumeClaimTemplates {
		if s.Spec.VolumeClaimTemplates[i].Spec.VolumeMode == nil {
			s.Spec.VolumeClaimTemplates[i].Spec.VolumeMode = ptr.To(corev1.PersistentVolumeFilesystem)
		}
	}
	if s.Spec.PodManagementPolicy == "" {
		s.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	us := &s.Spec.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1.RollingUpdateStatefulSetStrategyType
		if us.RollingUpdate == nil {
			us.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
	}
	if us.Type == appsv1.RollingUpdateStatefulSetStrategyType && us.RollingUpdate != nil && us.RollingUpdate.Partition == nil {
		us.RollingUpdate.Partition = ptr.To[int32](0)
	}
	if s.Spec.PersistentVolumeClaimRetentionPolicy == nil {
		s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
	}
	rp := s.Spec.PersistentVolumeClaimRetentionPolicy
	if rp.WhenDeleted == "" {
		rp.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if rp.WhenScaled == "" {
		rp.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	}
	if s.Spec.Replicas == nil {
		s.Spec.Replicas = ptr.To[int32](1)
	}
	if s.Spec.RevisionHistoryLimit == nil {
		s.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
}

func validateStatefulSetSpec(s *appsv1.StatefulSetSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch s.PodManagementPolicy {
	case "":
		errs = append(errs, field.Required(p.Child("podManagementPolicy"), ""))
	case appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
	default:
		errs = append(errs, field.Invalid(p.Child("podManagementPolicy"), s.PodManagementPolicy, "must be 'OrderedReady' or 'Parallel'"))
	}
	us := p.Child("updateStrategy")
	switch s.UpdateStrategy.Type {
	case "":
		errs = append(errs, field.Required(us, ""))
	case appsv1.OnDeleteStatefulSetStrategyType:
		if s.UpdateStrategy.RollingUpdate != nil {
			errs = append(errs, field.Invalid(us.Child("rollingUpdate"), s.UpdateStrategy.RollingUpdate, "only allowed for updateStrategy 'RollingUpdate'"))
		}
	case appsv1.RollingUpdateStatefulSetStrategyType:
		if ru := s.UpdateStrategy.RollingUpdate; ru != nil {
			errs = append(errs, nonNegative32(ru.Partition, us.Child("rollingUpdate", "partition"))...)
			if ru.MaxUnavailable != nil {
				mp := us.Child("rollingUpdate", "maxUnavailable")
				errs = append(errs, validatePositiveIntOrPercent(*ru.MaxUnavailable, mp)...)
				if intOrPercentValue(*ru.MaxUnavailable) == 0 {
					errs = append(errs, field.Invalid(mp, *ru.MaxUnavailable, "cannot be 0"))
				}
				errs = append(errs, notMoreThan100Percent(*ru.MaxUnavailable, mp)...)
			}
		}
	default:
		errs = append(errs, field.Invalid(us, s.UpdateStrategy, "must be 'RollingUpdate' or 'OnDelete'"))
	}
	if rp := s.PersistentVolumeClaimRetentionPolicy; rp != nil {
		pp := p.Child("persistentVolumeClaimRetentionPolicy")
		errs = append(errs, oneOf(rp.WhenDeleted, pp.Child("whenDeleted"), appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType)...)
		errs = append(errs, oneOf(rp.WhenScaled, pp.Child("whenScaled"), appsv1.RetainPersistentVolumeClaimRetentionPolicyType, appsv1.DeletePersistentVolumeClaimRetentionPolicyType)...)
	}
	for i := range s.VolumeClaimTemplates {
		vp := p.Child("volumeClaimTemplates").Index(i)
		errs = append(errs, prefixErrors(validatePVCSpec(&s.VolumeClaimTemplates[i].Spec), "spec", vp.Child("spec"))...)
	}
	errs = append(errs, nonNegative32(s.Replicas, p.Child("replicas"))...)
	errs = append(errs, nonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	if s.Ordinals != nil {
		errs = append(errs, nonNegative(int64(s.Ordinals.Start), p.Child("ordinals", "start"))...)
	}
	if s.ServiceName != "" {
		errs = append(errs, dns1123Label(s.ServiceName, p.Child("serviceName"))...)
	}
	errs = append(errs, validateSelectorMatchesTemplate(s.Selector, s.Template.Labels, "statefulset", p)...)
	t := s.Template.DeepCopy()
	t.Spec.Hostname, t.Spec.Subdomain = "", ""   // set by the controller
	for _, vct := range s.VolumeClaimTemplates { // volumes the controller adds
		found := false
		for _, v := range t.Spec.Volumes {
			found = found || v.Name == vct.Name
		}
		if !found {
			t.Spec.Volumes = append(t.Spec.Volumes, corev1.Volume{Name: vct.Name, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: vct.Name}}})
		}
	}
	errs = append(errs, validatePodTemplate(t, p.Child("template"))...)
	return append(errs, validateAlwaysRestart(&s.Template, "StatefulSet", p)...)
}

// prefixErrors re-roots errors whose field starts with from onto to.
func prefixErrors(errs field.ErrorList, from string, to *field.Path) field.ErrorList {
	for _, e := range errs {
		if len(e.Field) >= len(from) && e.Field[:len(from)] == from {
			e.Field = to.String() + e.Field[len(from):]
		}
	}
	return errs
}
