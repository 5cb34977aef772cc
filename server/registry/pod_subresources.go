package registry

import (
	"context"
	"fmt"
	"reflect"
	"unicode"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// podSubresources are the pods' update subresources beyond status:
// ephemeralcontainers (kubectl debug) and resize (in-place resize), as
// pkg/registry/core/pod/strategy.go's podEphemeralContainersStrategy and
// podResizeStrategy.
func podSubresources() map[string]SubresourceStrategy {
	return map[string]SubresourceStrategy{
		"ephemeralcontainers": podEphemeralStrategy{},
		"resize":              podResizeStrategy{},
	}
}

// resetPodForSubresource keeps of old everything but what keep copies from
// n (metav1.ResetObjectMetaForStatus and the stored status), then bumps the
// generation when the spec changed (updatePodGeneration).
func resetPodForSubresource(n, o *corev1.Pod, keep func(spec *corev1.PodSpec)) {
	spec := o.Spec.DeepCopy()
	keep(spec)
	n.Spec = *spec
	n.Status = o.Status
	n.DeletionTimestamp = o.DeletionTimestamp
	n.Generation = o.Generation
	n.Labels, n.Annotations = o.Labels, o.Annotations
	n.Finalizers, n.OwnerReferences = o.Finalizers, o.OwnerReferences
	if !apiequality.Semantic.DeepEqual(n.Spec, o.Spec) {
		n.Generation++
	}
}

// podEphemeralStrategy serves pods/ephemeralcontainers: only
// spec.ephemeralContainers changes, and only by additions.
type podEphemeralStrategy struct{}

func (podEphemeralStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	n, o := obj.(*corev1.Pod), old.(*corev1.Pod)
	defaultPod(n)
	ecs := n.Spec.EphemeralContainers
	resetPodForSubresource(n, o, func(s *corev1.PodSpec) { s.EphemeralContainers = ecs })
}

func (podEphemeralStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	n, o := obj.(*corev1.Pod), old.(*corev1.Pod)
	if _, ok := o.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support ephemeral containers")}
	}
	errs := validatePodSpec(&n.Spec, field.NewPath("spec"))
	p := field.NewPath("spec", "ephemeralContainers")
	byName := map[string]*corev1.EphemeralContainer{}
	for i := range n.Spec.EphemeralContainers {
		byName[n.Spec.EphemeralContainers[i].Name] = &n.Spec.EphemeralContainers[i]
	}
	for _, oc := range o.Spec.EphemeralContainers {
		nc, ok := byName[oc.Name]
		switch {
		case !ok:
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("existing ephemeral containers %q may not be removed\n", oc.Name)))
		case !apiequality.Semantic.DeepEqual(oc, *nc):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf("existing ephemeral containers %q may not be changed\n%s",
				oc.Name, firstDifference("", oc, *nc))))
		}
	}
	return errs
}

// allowedEphemeralFields are the EphemeralContainerCommon fields an
// ephemeral container may set (validation.allowedEphemeralContainerFields):
// no ports, probes, lifecycle, resources or restart policies.
var allowedEphemeralFields = sets.New("Name", "Image", "Command", "Args", "WorkingDir", "EnvFrom", "Env",
	"VolumeMounts", "VolumeDevices", "TerminationMessagePath", "TerminationMessagePolicy", "ImagePullPolicy",
	"SecurityContext", "Stdin", "StdinOnce", "TTY")

// validateEphemeralContainers ports validateEphemeralContainers: each is a
// valid container, its name unique across all containers of the pod, its
// target a regular or init container, its fields those allowed.
func validateEphemeralContainers(spec *corev1.PodSpec, vols sets.Set[string], p *field.Path) field.ErrorList {
	var errs field.ErrorList
	others, all := sets.New[string](), sets.New[string]()
	for _, cs := range [][]corev1.Container{spec.Containers, spec.InitContainers} {
		for _, c := range cs {
			others.Insert(c.Name)
			all.Insert(c.Name)
		}
	}
	for i := range spec.EphemeralContainers {
		ec := &spec.EphemeralContainers[i]
		ip := p.Index(i)
		c := corev1.Container(ec.EphemeralContainerCommon)
		errs = append(errs, validateContainer(&c, vols, ip)...)
		if all.Has(ec.Name) {
			errs = append(errs, field.Duplicate(ip.Child("name"), ec.Name))
		}
		all.Insert(ec.Name)
		if ec.TargetContainerName != "" && !others.Has(ec.TargetContainerName) {
			errs = append(errs, field.NotFound(ip.Child("targetContainerName"), ec.TargetContainerName))
		}
		errs = append(errs, onlyAllowedFields(ec.EphemeralContainerCommon, ip)...)
		for j, vm := range ec.VolumeMounts {
			if vm.SubPath != "" {
				errs = append(errs, field.Forbidden(ip.Child("volumeMounts").Index(j).Child("subPath"), "cannot be set for an Ephemeral Container"))
			}
			if vm.SubPathExpr != "" {
				errs = append(errs, field.Forbidden(ip.Child("volumeMounts").Index(j).Child("subPathExpr"), "cannot be set for an Ephemeral Container"))
			}
		}
	}
	return errs
}

// onlyAllowedFields is validateFieldAllowList over an ephemeral container.
func onlyAllowedFields(ec corev1.EphemeralContainerCommon, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	t, v := reflect.TypeOf(ec), reflect.ValueOf(ec)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if allowedEphemeralFields.Has(f.Name) || v.Field(i).IsZero() {
			continue
		}
		r, n := utf8.DecodeRuneInString(f.Name)
		errs = append(errs, field.Forbidden(p.Child(string(unicode.ToLower(r))+f.Name[n:]), "cannot be set for an Ephemeral Container"))
	}
	return errs
}

// podResizeStrategy serves pods/resize: only the cpu and memory requests
// and limits and the resizePolicy of containers (and sidecars) change.
type podResizeStrategy struct{}

func (podResizeStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	n, o := obj.(*corev1.Pod), old.(*corev1.Pod)
	defaultPod(n)
	if len(n.Spec.Containers) != len(o.Spec.Containers) || len(n.Spec.InitContainers) != len(o.Spec.InitContainers) {
		return // validation refuses it
	}
	cs, ok1 := resizeOnly(n.Spec.Containers, o.Spec.Containers)
	ics, ok2 := resizeOnly(n.Spec.InitContainers, o.Spec.InitContainers)
	if !ok1 || !ok2 {
		return // renamed or reordered: validation refuses it
	}
	resetPodForSubresource(n, o, func(s *corev1.PodSpec) { s.Containers, s.InitContainers = cs, ics })
}

// resizeOnly is old with the resources and resize policies of n
// (dropNonResizeUpdatesForContainers); false when names differ.
func resizeOnly(n, o []corev1.Container) ([]corev1.Container, bool) {
	out := make([]corev1.Container, len(o))
	for i := range o {
		if n[i].Name != o[i].Name {
			return nil, false
		}
		out[i] = *o[i].DeepCopy()
		out[i].Resources, out[i].ResizePolicy = n[i].Resources, n[i].ResizePolicy
	}
	return out, true
}

func (podResizeStrategy) ValidateUpdate(_ context.Context, obj, old runtime.Object) field.ErrorList {
	n, o := obj.(*corev1.Pod), old.(*corev1.Pod)
	if _, ok := o.Annotations[corev1.MirrorPodAnnotationKey]; ok {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods cannot be resized")}
	}
	if o.Spec.OS != nil && o.Spec.OS.Name == corev1.Windows {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "windows pods cannot be resized")}
	}
	spec := field.NewPath("spec")
	errs := validatePodSpec(&n.Spec, spec)
	if o.Spec.Resources != nil || n.Spec.Resources != nil {
		return append(errs, field.Forbidden(field.NewPath(""), "resize of pods with pod-level resources is forbidden when InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled"))
	}
	if podQOS(&o.Spec) != podQOS(&n.Spec) {
		errs = append(errs, field.Invalid(spec, n.Status.QOSClass, "Pod QOS Class may not change as a result of resizing"))
	}
	if ordering := validateResizeOrdering(n, o, spec); len(ordering) > 0 {
		return append(errs, ordering...)
	}
	errs = append(errs, validateResizedContainers(n.Spec.Containers, o.Spec.Containers, spec.Child("containers"), false)...)
	errs = append(errs, validateResizedContainers(n.Spec.InitContainers, o.Spec.InitContainers, spec.Child("initContainers"), true)...)
	if len(errs) > 0 {
		return errs
	}
	m := n.Spec.DeepCopy()
	m.Containers, m.InitContainers = o.Spec.Containers, o.Spec.InitContainers
	if !apiequality.Semantic.DeepEqual(*m, o.Spec) {
		errs = append(errs, field.Forbidden(spec, "only cpu and memory resources are mutable"))
	}
	return errs
}

// validateResizeOrdering: containers may not be added, removed, renamed or
// reordered on resize.
func validateResizeOrdering(n, o *corev1.Pod, spec *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, l := range []struct {
		name   string
		nc, oc []corev1.Container
	}{{"containers", n.Spec.Containers, o.Spec.Containers}, {"initContainers", n.Spec.InitContainers, o.Spec.InitContainers}} {
		if len(l.nc) != len(l.oc) {
			errs = append(errs, field.Forbidden(spec.Child(l.name), l.name+" may not be added or removed on resize"))
			continue
		}
		for i := range l.oc {
			if l.nc[i].Name != l.oc[i].Name {
				errs = append(errs, field.Forbidden(spec.Child(l.name).Index(i).Child("name"), l.name+" may not be renamed or reordered on resize"))
			}
		}
	}
	return errs
}

// validateResizedContainers: requests and limits may not be removed, only
// cpu and memory change, and of init containers only sidecars resize.
func validateResizedContainers(n, o []corev1.Container, p *field.Path, init bool) field.ErrorList {
	var errs field.ErrorList
	for i := range o {
		sidecar := o[i].RestartPolicy != nil && *o[i].RestartPolicy == corev1.ContainerRestartPolicyAlways
		if init && !sidecar {
			if !apiequality.Semantic.DeepEqual(n[i], o[i]) {
				errs = append(errs, field.Forbidden(p.Index(i).Child("resources"), "resources for non-sidecar init containers are immutable"))
			}
			continue
		}
		rp := p.Index(i).Child("resources")
		if removed(n[i].Resources.Requests, o[i].Resources.Requests) {
			errs = append(errs, field.Forbidden(rp.Child("requests"), "resource requests cannot be removed"))
		}
		if removed(n[i].Resources.Limits, o[i].Resources.Limits) {
			errs = append(errs, field.Forbidden(rp.Child("limits"), "resource limits cannot be removed"))
		}
		c := n[i].DeepCopy()
		c.Resources = withCPUMemoryOf(c.Resources, o[i].Resources)
		c.ResizePolicy = o[i].ResizePolicy
		if !apiequality.Semantic.DeepEqual(*c, o[i]) {
			errs = append(errs, field.Forbidden(p.Index(i), "only cpu and memory resources are mutable"))
		}
	}
	return errs
}

func removed(n, o corev1.ResourceList) bool {
	for name := range o {
		if _, ok := n[name]; !ok {
			return true
		}
	}
	return false
}

// withCPUMemoryOf is r with the cpu and memory entries of o
// (dropCPUMemoryResourcesFromContainer), to compare everything else.
func withCPUMemoryOf(r, o corev1.ResourceRequirements) corev1.ResourceRequirements {
	fix := func(n, o corev1.ResourceList) corev1.ResourceList {
		out := corev1.ResourceList{}
		for k, v := range n {
			if k != corev1.ResourceCPU && k != corev1.ResourceMemory {
				out[k] = v
			}
		}
		for _, k := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			if v, ok := o[k]; ok {
				out[k] = v
			}
		}
		if len(out) == 0 && o == nil {
			return nil
		}
		return out
	}
	r = *r.DeepCopy()
	r.Requests, r.Limits = fix(r.Requests, o.Requests), fix(r.Limits, o.Limits)
	return r
}

// validateResizePolicy ports validateResizePolicy: cpu or memory once each,
// NotRequired or RestartContainer, and NotRequired in pods that never
// restart.
func validateResizePolicy(policies []corev1.ContainerResizePolicy, podPolicy corev1.RestartPolicy, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[corev1.ResourceName]()
	for i, rp := range policies {
		if seen.Has(rp.ResourceName) {
			errs = append(errs, field.Duplicate(p.Index(i), rp.ResourceName))
		}
		seen.Insert(rp.ResourceName)
		switch rp.ResourceName {
		case corev1.ResourceCPU, corev1.ResourceMemory:
		case "":
			errs = append(errs, field.Required(p, ""))
		default:
			errs = append(errs, field.NotSupported(p, rp.ResourceName, []string{string(corev1.ResourceCPU), string(corev1.ResourceMemory)}))
		}
		switch rp.RestartPolicy {
		case corev1.NotRequired, corev1.RestartContainer:
		case "":
			errs = append(errs, field.Required(p, ""))
		default:
			errs = append(errs, field.NotSupported(p, rp.RestartPolicy, []string{string(corev1.NotRequired), string(corev1.RestartContainer)}))
		}
		if podPolicy == corev1.RestartPolicyNever && rp.RestartPolicy != corev1.NotRequired {
			errs = append(errs, field.Invalid(p, rp.RestartPolicy, "must be 'NotRequired' when pod `restartPolicy` is 'Never'"))
		}
	}
	return errs
}
