package clusterconfig

import (
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	storagev1 "k8s.io/api/storage/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/registry"
)

// Group is this package's resources for server/registry/all.
func Group() registry.Group {
	return registry.Group{Name: "clusterconfig", Resources: resources, AddToScheme: func(s *runtime.Scheme) error {
		for _, add := range []func(*runtime.Scheme) error{networkingv1.AddToScheme, nodev1.AddToScheme, storagev1.AddToScheme} {
			utilruntime.Must(add(s))
		}
		return nil
	}}
}

// DefaultIngressClassAnnotation marks the IngressClass used when an
// Ingress names none.
const DefaultIngressClassAnnotation = "ingressclass.kubernetes.io/is-default-class"

func resources(registry.Config) []*registry.Resource {
	defs := []registry.Def{ingressClass(), runtimeClass(), csiDriver(), csiNode(), volumeAttachment(),
		volumeAttributesClass(), csiStorageCapacity()}
	return registry.BuildAll(defs...)
}

func ingressClass() registry.Def {
	ic := func(o runtime.Object) *networkingv1.IngressClass { return o.(*networkingv1.IngressClass) }
	return registry.Def{GroupVersion: networkingv1.SchemeGroupVersion, Resource: "ingressclasses", Kind: "IngressClass",
		New: registry.NewObjects[networkingv1.IngressClass](), NewList: registry.NewObjects[networkingv1.IngressClassList](),
		Hooks: registry.Hooks{
			Validate:       func(o runtime.Object) field.ErrorList { return validateIngressClass(ic(o)) },
			ValidateUpdate: func(o, old runtime.Object) field.ErrorList { return validateIngressClassUpdate(ic(o), ic(old)) },
			Columns: []metav1.TableColumnDefinition{
				registry.Col("Controller", "string", 0, "Controller that is responsible for handling this class"),
				registry.Col("Parameters", "string", 0, "A reference to a resource with additional parameters"),
				registry.AgeColumn(),
			},
			Row: func(o runtime.Object) []interface{} {
				c := ic(o)
				params := "<none>"
				if p := c.Spec.Parameters; p != nil {
					params = p.Kind + "/" + p.Name
					if p.APIGroup != nil && *p.APIGroup != "" {
						params = p.Kind + "." + *p.APIGroup + "/" + p.Name
					}
				}
				return []interface{}{c.Spec.Controller, params, registry.Age(o)}
			},
		}}
}

func validateIngressClass(c *networkingv1.IngressClass) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec", "controller")
	switch {
	case c.Spec.Controller == "":
		errs = append(errs, field.Required(p, ""))
	case len(c.Spec.Controller) > 250:
		errs = append(errs, field.TooLong(p, "", 250))
	default:
		domain, _, _ := strings.Cut(c.Spec.Controller, "/")
		for _, msg := range utilvalidation.IsDNS1123Subdomain(domain) {
			errs = append(errs, field.Invalid(p, c.Spec.Controller, "must be a domain-prefixed path (such as \"acme.io/foo\"): "+msg))
		}
	}
	if prm := c.Spec.Parameters; prm != nil {
		pp := field.NewPath("spec", "parameters")
		if prm.Kind == "" {
			errs = append(errs, field.Required(pp.Child("kind"), ""))
		}
		if prm.Name == "" {
			errs = append(errs, field.Required(pp.Child("name"), ""))
		}
		if s := prm.Scope; s != nil && *s != networkingv1.IngressClassParametersReferenceScopeCluster && *s != networkingv1.IngressClassParametersReferenceScopeNamespace {
			errs = append(errs, field.NotSupported(pp.Child("scope"), *s, []string{"Cluster", "Namespace"}))
		}
		if ptr.Deref(prm.Scope, "") == networkingv1.IngressClassParametersReferenceScopeNamespace && ptr.Deref(prm.Namespace, "") == "" {
			errs = append(errs, field.Required(pp.Child("namespace"), "`parameters.scope` is set to 'Namespace'"))
		}
	}
	return errs
}

func validateIngressClassUpdate(c, old *networkingv1.IngressClass) field.ErrorList {
	errs := validateIngressClass(c)
	return append(errs, apivalidation.ValidateImmutableField(c.Spec.Controller, old.Spec.Controller, field.NewPath("spec", "controller"))...)
}

func runtimeClass() registry.Def {
	rc := func(o runtime.Object) *nodev1.RuntimeClass { return o.(*nodev1.RuntimeClass) }
	return registry.Def{GroupVersion: nodev1.SchemeGroupVersion, Resource: "runtimeclasses", Kind: "RuntimeClass",
		New: registry.NewObjects[nodev1.RuntimeClass](), NewList: registry.NewObjects[nodev1.RuntimeClassList](),
		Hooks: registry.Hooks{
			Validate: func(o runtime.Object) field.ErrorList { return validateRuntimeClass(rc(o)) },
			ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
				return append(validateRuntimeClass(rc(o)), apivalidation.ValidateImmutableField(rc(o).Handler, rc(old).Handler, field.NewPath("handler"))...)
			},
			Columns: []metav1.TableColumnDefinition{registry.Col("Handler", "string", 0, "Handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class."), registry.AgeColumn()},
			Row:     func(o runtime.Object) []interface{} { return []interface{}{rc(o).Handler, registry.Age(o)} },
		}}
}

func validateRuntimeClass(c *nodev1.RuntimeClass) field.ErrorList {
	p := field.NewPath("handler")
	if c.Handler == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	var errs field.ErrorList
	for _, msg := range utilvalidation.IsDNS1123Label(c.Handler) {
		errs = append(errs, field.Invalid(p, c.Handler, msg))
	}
	return errs
}

func csiDriver() registry.Def {
	d := func(o runtime.Object) *storagev1.CSIDriver { return o.(*storagev1.CSIDriver) }
	return registry.Def{GroupVersion: storagev1.SchemeGroupVersion, Resource: "csidrivers", Kind: "CSIDriver",
		New: registry.NewObjects[storagev1.CSIDriver](), NewList: registry.NewObjects[storagev1.CSIDriverList](),
		Hooks: registry.Hooks{
			Defaults: func(o runtime.Object) { defaultCSIDriver(d(o)) },
			Columns: []metav1.TableColumnDefinition{
				registry.Col("AttachRequired", "boolean", 0, "Indicates this CSI volume driver requires an attach operation"),
				registry.Col("PodInfoOnMount", "boolean", 0, "Indicates this CSI volume driver requires additional pod information"),
				registry.Col("StorageCapacity", "boolean", 0, "Indicates this CSI volume driver supports storage capacity"),
				registry.Col("TokenRequests", "string", 0, "Indicates this CSI volume driver requires service account tokens"),
				registry.Col("RequiresRepublish", "boolean", 0, "Indicates this CSI volume driver requires periodic republishing"),
				registry.Col("Modes", "string", 0, "Supported volume lifecycle modes"),
				registry.AgeColumn(),
			},
			Row: func(o runtime.Object) []interface{} {
				s := d(o).Spec
				var modes []string
				for _, m := range s.VolumeLifecycleModes {
					modes = append(modes, string(m))
				}
				tokens := "<unset>"
				if len(s.TokenRequests) > 0 {
					var auds []string
					for _, t := range s.TokenRequests {
						auds = append(auds, t.Audience)
					}
					tokens = strings.Join(auds, ",")
				}
				return []interface{}{ptr.Deref(s.AttachRequired, false), ptr.Deref(s.PodInfoOnMount, false),
					ptr.Deref(s.StorageCapacity, false), tokens, ptr.Deref(s.RequiresRepublish, false),
					strings.Join(modes, ","), registry.Age(o)}
			},
		}}
}

func defaultCSIDriver(d *storagev1.CSIDriver) {
	s := &d.Spec
	if s.AttachRequired == nil {
		s.AttachRequired = ptr.To(true) // upstream's default
	}
	for _, b := range []**bool{&s.PodInfoOnMount, &s.StorageCapacity, &s.RequiresRepublish} {
		if *b == nil {
			*b = ptr.To(false)
		}
	}
	if s.FSGroupPolicy == nil {
		s.FSGroupPolicy = ptr.To(storagev1.ReadWriteOnceWithFSTypeFSGroupPolicy)
	}
	if len(s.VolumeLifecycleModes) == 0 {
		s.VolumeLifecycleModes = []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent}
	}
}

func csiNode() registry.Def {
	n := func(o runtime.Object) *storagev1.CSINode { return o.(*storagev1.CSINode) }
	return registry.Def{GroupVersion: storagev1.SchemeGroupVersion, Resource: "csinodes", Kind: "CSINode",
		New: registry.NewObjects[storagev1.CSINode](), NewList: registry.NewObjects[storagev1.CSINodeList](),
		Hooks: registry.Hooks{
			Columns: []metav1.TableColumnDefinition{registry.Col("Drivers", "integer", 0, "Drivers indicates the number of CSI drivers registered on the node"), registry.AgeColumn()},
			Row: func(o runtime.Object) []interface{} {
				return []interface{}{int64(len(n(o).Spec.Drivers)), registry.Age(o)}
			},
		}}
}

func volumeAttachment() registry.Def {
	va := func(o runtime.Object) *storagev1.VolumeAttachment { return o.(*storagev1.VolumeAttachment) }
	return registry.Def{GroupVersion: storagev1.SchemeGroupVersion, Resource: "volumeattachments", Kind: "VolumeAttachment", HasStatus: true,
		New: registry.NewObjects[storagev1.VolumeAttachment](), NewList: registry.NewObjects[storagev1.VolumeAttachmentList](),
		Hooks: registry.Hooks{
			Validate: func(o runtime.Object) field.ErrorList { return validateVolumeAttachment(va(o)) },
			Columns: []metav1.TableColumnDefinition{
				registry.Col("Attacher", "string", 0, "Name of the attacher"),
				registry.Col("PV", "string", 0, "Name of the persistent volume to attach"),
				registry.Col("Node", "string", 0, "The node the volume will be attached to"),
				registry.Col("Attached", "boolean", 0, "Whether the volume is attached"),
				registry.AgeColumn(),
			},
			Row: func(o runtime.Object) []interface{} {
				v := va(o)
				return []interface{}{v.Spec.Attacher, ptr.Deref(v.Spec.Source.PersistentVolumeName, ""), v.Spec.NodeName, v.Status.Attached, registry.Age(o)}
			},
		}}
}

func validateVolumeAttachment(v *storagev1.VolumeAttachment) field.ErrorList {
	var errs field.ErrorList
	sp := field.NewPath("spec")
	if v.Spec.Attacher == "" {
		errs = append(errs, field.Required(sp.Child("attacher"), ""))
	}
	if v.Spec.NodeName == "" {
		errs = append(errs, field.Required(sp.Child("nodeName"), ""))
	}
	if (v.Spec.Source.PersistentVolumeName == nil) == (v.Spec.Source.InlineVolumeSpec == nil) {
		errs = append(errs, field.Required(sp.Child("source"), "must specify exactly one of persistentVolumeName and inlineVolumeSpec"))
	}
	return errs
}
