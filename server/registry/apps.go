package registry

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// keepLabelsOnStatus: workload status updates may not change labels (apps strategies).
func keepLabelsOnStatus(obj, old runtime.Object) {
	mustMeta(obj).SetLabels(mustMeta(old).GetLabels())
}

func selectorImmutable(n, o *metav1.LabelSelector) field.ErrorList {
	return immutable(n, o, field.NewPath("spec", "selector"))
}

var containerColumns = []metav1.TableColumnDefinition{
	col("Containers", "string", 1, "Names of each container in the template."),
	col("Images", "string", 1, "Images referenced by each container in the template."),
}

// ---- Deployments

func deploymentRules() rules {
	spec := field.NewPath("spec")
	return rules{
		generation: true,
		defaults:   func(obj runtime.Object) { defaultDeployment(obj.(*appsv1.Deployment)) },
		prepareUpdate: func(obj, old runtime.Object) {
			// Annotation changes bump the generation too (they are copied to ReplicaSets).
			n, o := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
			if !apiequality.Semantic.DeepEqual(n.Annotations, o.Annotations) && apiequality.Semantic.DeepEqual(n.Spec, o.Spec) {
				n.Generation = o.Generation + 1
			}
		},
		validate: func(obj runtime.Object) field.ErrorList {
			return validateDeploymentSpec(&obj.(*appsv1.Deployment).Spec, spec)
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*appsv1.Deployment), old.(*appsv1.Deployment)
			return append(validateDeploymentSpec(&n.Spec, spec), selectorImmutable(n.Spec.Selector, o.Spec.Selector)...)
		},
		prepareStatus: keepLabelsOnStatus,
		columns: append([]metav1.TableColumnDefinition{
			col("Ready", "string", 0, "Number of the pod with ready state"),
			col("Up-to-date", "string", 0, appsv1.DeploymentStatus{}.SwaggerDoc()["updatedReplicas"]),
			col("Available", "string", 0, appsv1.DeploymentStatus{}.SwaggerDoc()["availableReplicas"]),
			ageColumn(),
		}, append(containerColumns, col("Selector", "string", 1, appsv1.DeploymentSpec{}.SwaggerDoc()["selector"]))...),
		row: func(obj runtime.Object) []interface{} {
			d := obj.(*appsv1.Deployment)
			names, images := containerCells(d.Spec.Template.Spec.Containers)
			return []interface{}{fmt.Sprintf("%d/%d", d.Status.ReadyReplicas, replicasOr1(d.Spec.Replicas)),
				int64(d.Status.UpdatedReplicas), int64(d.Status.AvailableReplicas), age(d), names, images, selectorString(d.Spec.Selector)}
		},
	}
}

func defaultDeployment(d *appsv1.Deployment) {
	defaultPodSpec(&d.Spec.Template.Spec)
	if d.Spec.Replicas == nil {
		d.Spec.Replicas = ptr.To[int32](1)
	}
	st := &d.Spec.Strategy
	if st.Type == "" {
		st.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if st.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if st.RollingUpdate == nil {
			st.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if st.RollingUpdate.MaxUnavailable == nil {
			st.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("25%"))
		}
		if st.RollingUpdate.MaxSurge == nil {
			st.RollingUpdate.MaxSurge = ptr.To(intstr.FromString("25%"))
		}
	}
	if d.Spec.RevisionHistoryLimit == nil {
		d.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
	if d.Spec.ProgressDeadlineSeconds == nil {
		d.Spec.ProgressDeadlineSeconds = ptr.To[int32](600)
	}
}

func validateDeploymentSpec(s *appsv1.DeploymentSpec, p *field.Path) field.ErrorList {
	errs := nonNegative32(s.Replicas, p.Child("replicas"))
	errs = append(errs, validateSelectorMatchesTemplate(s.Selector, s.Template.Labels, "deployment", p)...)
	errs = append(errs, validatePodTemplate(&s.Template, p.Child("template"))...)
	errs = append(errs, validateAlwaysRestart(&s.Template, "Deployment", p)...)
	sp := p.Child("strategy")
	switch s.Strategy.Type {
	case appsv1.RecreateDeploymentStrategyType:
		if s.Strategy.RollingUpdate != nil {
			errs = append(errs, field.Forbidden(sp.Child("rollingUpdate"), "may not be specified when strategy `type` is 'Recreate'"))
		}
	case appsv1.RollingUpdateDeploymentStrategyType:
		if ru := s.Strategy.RollingUpdate; ru == nil {
			errs = append(errs, field.Required(sp.Child("rollingUpdate"), "this should be defaulted and never be nil"))
		} else if ru.MaxUnavailable != nil && ru.MaxSurge != nil {
			rp := sp.Child("rollingUpdate")
			errs = append(errs, validatePositiveIntOrPercent(*ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
			errs = append(errs, validatePositiveIntOrPercent(*ru.MaxSurge, rp.Child("maxSurge"))...)
			if intOrPercentValue(*ru.MaxUnavailable) == 0 && intOrPercentValue(*ru.MaxSurge) == 0 {
				errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), *ru.MaxUnavailable, "may not be 0 when `maxSurge` is 0"))
			}
			errs = append(errs, notMoreThan100Percent(*ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
		}
	default:
		errs = append(errs, field.NotSupported(sp, s.Strategy, []string{string(appsv1.RecreateDeploymentStrategyType), string(appsv1.RollingUpdateDeploymentStrategyType)}))
	}
	errs = append(errs, nonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	errs = append(errs, nonNegative32(s.RevisionHistoryLimit, p.Child("revisionHistoryLimit"))...)
	if pd := s.ProgressDeadlineSeconds; pd != nil {
		errs = append(errs, nonNegative(int64(*pd), p.Child("progressDeadlineSeconds"))...)
		if *pd <= s.MinReadySeconds {
			errs = append(errs, field.Invalid(p.Child("progressDeadlineSeconds"), *pd, "must be greater than minReadySeconds"))
		}
	}
	return errs
}

// ---- ReplicaSets

func replicaSetRules() rules {
	spec := field.NewPath("spec")
	return rules{
		generation: true,
		defaults: func(obj runtime.Object) {
			rs := obj.(*appsv1.ReplicaSet)
			defaultPodSpec(&rs.Spec.Template.Spec)
			if rs.Spec.Replicas == nil {
				rs.Spec.Replicas = ptr.To[int32](1)
			}
		},
		validate: func(obj runtime.Object) field.ErrorList {
			return validateReplicaSetSpec(&obj.(*appsv1.ReplicaSet).Spec, spec)
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*appsv1.ReplicaSet), old.(*appsv1.ReplicaSet)
			return append(validateReplicaSetSpec(&n.Spec, spec), selectorImmutable(n.Spec.Selector, o.Spec.Selector)...)
		},
		prepareStatus: keepLabelsOnStatus,
		fields: func(obj runtime.Object, set fields.Set) {
			set["status.replicas"] = strconv.Itoa(int(obj.(*appsv1.ReplicaSet).Status.Replicas))
		},
		columns: append([]metav1.TableColumnDefinition{
			col("Desired", "integer", 0, appsv1.ReplicaSetSpec{}.SwaggerDoc()["replicas"]),
			col("Current", "integer", 0, appsv1.ReplicaSetStatus{}.SwaggerDoc()["replicas"]),
			col("Ready", "integer", 0, appsv1.ReplicaSetStatus{}.SwaggerDoc()["readyReplicas"]),
			ageColumn(),
		}, append(containerColumns, col("Selector", "string", 1, appsv1.ReplicaSetSpec{}.SwaggerDoc()["selector"]))...),
		row: func(obj runtime.Object) []interface{} {
			rs := obj.(*appsv1.ReplicaSet)
			names, images := containerCells(rs.Spec.Template.Spec.Containers)
			return []interface{}{int64(replicasOr1(rs.Spec.Replicas)), int64(rs.Status.Replicas), int64(rs.Status.ReadyReplicas),
				age(rs), names, images, metav1.FormatLabelSelector(rs.Spec.Selector)}
		},
	}
}

func validateReplicaSetSpec(s *appsv1.ReplicaSetSpec, p *field.Path) field.ErrorList {
	errs := nonNegative32(s.Replicas, p.Child("replicas"))
	errs = append(errs, nonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	errs = append(errs, validateSelectorMatchesTemplate(s.Selector, s.Template.Labels, "deployment", p)...)
	errs = append(errs, validatePodTemplate(&s.Template, p.Child("template"))...)
	return append(errs, validateAlwaysRestart(&s.Template, "ReplicaSet", p)...)
}

// ---- DaemonSets

// daemonSetTemplateGenerationKey is where apps/v1 keeps the deprecated templateGeneration.
const daemonSetTemplateGenerationKey = "deprecated.daemonset.template.generation"

func daemonSetRules() rules {
	spec := field.NewPath("spec")
	return rules{
		generation: true,
		defaults:   func(obj runtime.Object) { defaultDaemonSet(obj.(*appsv1.DaemonSet)) },
		prepareCreate: func(obj runtime.Object) {
			ds := obj.(*appsv1.DaemonSet)
			if ds.Annotations == nil {
				ds.Annotations = map[string]string{}
			}
			if g, _ := strconv.ParseInt(ds.Annotations[daemonSetTemplateGenerationKey], 10, 64); g < 1 {
				ds.Annotations[daemonSetTemplateGenerationKey] = "1"
			}
		},
		prepareUpdate: func(obj, old runtime.Object) {
			n, o := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
			if !apiequality.Semantic.DeepEqual(n.Spec.Template, o.Spec.Template) {
				g, _ := strconv.ParseInt(o.Annotations[daemonSetTemplateGenerationKey], 10, 64)
				if n.Annotations == nil {
					n.Annotations = map[string]string{}
				}
				n.Annotations[daemonSetTemplateGenerationKey] = strconv.FormatInt(g+1, 10)
			}
		},
		validate: func(obj runtime.Object) field.ErrorList {
			return validateDaemonSetSpec(&obj.(*appsv1.DaemonSet).Spec, spec)
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*appsv1.DaemonSet), old.(*appsv1.DaemonSet)
			return append(validateDaemonSetSpec(&n.Spec, spec), selectorImmutable(n.Spec.Selector, o.Spec.Selector)...)
		},
		prepareStatus: keepLabelsOnStatus,
		columns: append([]metav1.TableColumnDefinition{
			col("Desired", "integer", 0, appsv1.DaemonSetStatus{}.SwaggerDoc()["desiredNumberScheduled"]),
			col("Current", "integer", 0, appsv1.DaemonSetStatus{}.SwaggerDoc()["currentNumberScheduled"]),
			col("Ready", "integer", 0, appsv1.DaemonSetStatus{}.SwaggerDoc()["numberReady"]),
			col("Up-to-date", "integer", 0, appsv1.DaemonSetStatus{}.SwaggerDoc()["updatedNumberScheduled"]),
			col("Available", "integer", 0, appsv1.DaemonSetStatus{}.SwaggerDoc()["numberAvailable"]),
			col("Node Selector", "string", 0, corev1.PodSpec{}.SwaggerDoc()["nodeSelector"]),
			ageColumn(),
		}, append(containerColumns, col("Selector", "string", 1, appsv1.DaemonSetSpec{}.SwaggerDoc()["selector"]))...),
		row: func(obj runtime.Object) []interface{} {
			ds := obj.(*appsv1.DaemonSet)
			st := ds.Status
			names, images := containerCells(ds.Spec.Template.Spec.Containers)
			return []interface{}{int64(st.DesiredNumberScheduled), int64(st.CurrentNumberScheduled), int64(st.NumberReady),
				int64(st.UpdatedNumberScheduled), int64(st.NumberAvailable), labels.FormatLabels(ds.Spec.Template.Spec.NodeSelector),
				age(ds), names, images, metav1.FormatLabelSelector(ds.Spec.Selector)}
		},
	}
}

func defaultDaemonSet(ds *appsv1.DaemonSet) {
	defaultPodSpec(&ds.Spec.Template.Spec)
	us := &ds.Spec.UpdateStrategy
	if us.Type == "" {
		us.Type = appsv1.RollingUpdateDaemonSetStrategyType
	}
	if us.Type == appsv1.RollingUpdateDaemonSetStrategyType {
		if us.RollingUpdate == nil {
			us.RollingUpdate = &appsv1.RollingUpdateDaemonSet{}
		}
		if us.RollingUpdate.MaxUnavailable == nil {
			us.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}
		if us.RollingUpdate.MaxSurge == nil {
			us.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
		}
	}
	if ds.Spec.RevisionHistoryLimit == nil {
		ds.Spec.RevisionHistoryLimit = ptr.To[int32](10)
	}
}

func validateDaemonSetSpec(s *appsv1.DaemonSetSpec, p *field.Path) field.ErrorList {
	errs := validateSelectorMatchesTemplate(s.Selector, s.Template.Labels, "daemonset", p)
	errs = append(errs, validatePodTemplate(&s.Template, p.Child("template"))...)
	errs = append(errs, validateAlwaysRestart(&s.Template, "DaemonSet", p)...)
	errs = append(errs, nonNegative(int64(s.MinReadySeconds), p.Child("minReadySeconds"))...)
	errs = append(errs, nonNegative32(s.RevisionHistoryLimit, p.Child("revisionHistoryLimit"))...)
	up := p.Child("updateStrategy")
	switch s.UpdateStrategy.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
	case appsv1.RollingUpdateDaemonSetStrategyType:
		ru := s.UpdateStrategy.RollingUpdate
		if ru == nil || ru.MaxUnavailable == nil || ru.MaxSurge == nil {
			return append(errs, field.Required(up.Child("rollingUpdate"), ""))
		}
		rp := up.Child("rollingUpdate")
		errs = append(errs, validatePositiveIntOrPercent(*ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
		errs = append(errs, validatePositiveIntOrPercent(*ru.MaxSurge, rp.Child("maxSurge"))...)
		errs = append(errs, notMoreThan100Percent(*ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
		errs = append(errs, notMoreThan100Percent(*ru.MaxSurge, rp.Child("maxSurge"))...)
		hasU, hasS := intOrPercentValue(*ru.MaxUnavailable) != 0, intOrPercentValue(*ru.MaxSurge) != 0
		switch {
		case hasU && hasS:
			errs = append(errs, field.Invalid(rp.Child("maxSurge"), *ru.MaxSurge, "may not be set when maxUnavailable is non-zero"))
		case !hasU && !hasS:
			errs = append(errs, field.Required(rp.Child("maxUnavailable"), "cannot be 0 when maxSurge is 0"))
		}
	default:
		errs = append(errs, field.NotSupported(up, s.UpdateStrategy, []string{string(appsv1.RollingUpdateDaemonSetStrategyType), string(appsv1.OnDeleteDaemonSetStrategyType)}))
	}
	return errs
}
