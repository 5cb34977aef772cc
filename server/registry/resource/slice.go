package resource

import (
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

// validateSliceSpec: a driver and pool (driver, pool name and node name
// immutable), exactly one of the node fields, and at most 128 uniquely
// named devices (64 with taints or counters), or shared counters instead.
func validateSliceSpec(s, old *resourcev1.ResourceSliceSpec) field.ErrorList {
	p := field.NewPath("spec")
	errs := validateDriverName(s.Driver, p.Child("driver"))
	pp := p.Child("pool")
	errs = append(errs, validatePoolName(s.Pool.Name, pp.Child("name"))...)
	if s.Pool.ResourceSliceCount <= 0 {
		errs = append(errs, field.Invalid(pp.Child("resourceSliceCount"), s.Pool.ResourceSliceCount, "must be greater than zero"))
	}
	if s.Pool.Generation < 0 {
		errs = append(errs, field.Invalid(pp.Child("generation"), s.Pool.Generation, "must be greater than or equal to zero"))
	}
	if old != nil {
		errs = append(errs, immutable(s.Pool.Name, old.Pool.Name, "spec.pool.name")...)
		errs = append(errs, immutable(s.Driver, old.Driver, "spec.driver")...)
		errs = append(errs, immutable(s.NodeName, old.NodeName, "spec.nodeName")...)
	}
	errs = append(errs, validateSliceNodes(s, p)...)
	if s.SharedCounters != nil && s.Devices != nil {
		errs = append(errs, field.Invalid(p, "", "only one of `sharedCounters` or `devices` is allowed"))
	}
	return append(errs, validateDevices(s, p.Child("devices"))...)
}

// validateSliceNodes: exactly one of nodeName, nodeSelector, allNodes and
// perDeviceNodeSelection.
func validateSliceNodes(s *resourcev1.ResourceSliceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	var set []string
	if n := s.NodeName; n != nil {
		if *n == "" {
			errs = append(errs, field.Invalid(p.Child("nodeName"), *n, "must be either unset or set to a non-empty string"))
		} else {
			set = append(set, "`nodeName`")
			errs = append(errs, validateSubdomain(*n, p.Child("nodeName"))...)
		}
	}
	if ns := s.NodeSelector; ns != nil {
		set = append(set, "`nodeSelector`")
		errs = append(errs, registry.ValidateNodeSelector(ns, p.Child("nodeSelector"))...)
		if len(ns.NodeSelectorTerms) != 1 {
			errs = append(errs, field.Invalid(p.Child("nodeSelector", "nodeSelectorTerms"), ns.NodeSelectorTerms, "must have exactly one node selector term"))
		}
	}
	for _, b := range []struct {
		v    *bool
		name string
	}{{s.AllNodes, "allNodes"}, {s.PerDeviceNodeSelection, "perDeviceNodeSelection"}} {
		switch {
		case b.v == nil:
		case *b.v:
			set = append(set, "`"+b.name+"`")
		default:
			errs = append(errs, field.Invalid(p.Child(b.name), *b.v, "must be either unset or set to true"))
		}
	}
	const msg = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
	switch len(set) {
	case 0:
		errs = append(errs, field.Required(p, msg))
	case 1:
	default:
		errs = append(errs, field.Invalid(p, fmtFields(set), msg+", but multiple fields are set"))
	}
	return errs
}

func validateDevices(s *resourcev1.ResourceSliceSpec, p *field.Path) field.ErrorList {
	max := resourcev1.ResourceSliceMaxDevices
	for _, d := range s.Devices {
		if len(d.Taints) > 0 || len(d.ConsumesCounters) > 0 {
			max = resourcev1.ResourceSliceMaxDevicesWithAdvancedFeatures
		}
	}
	errs := tooMany(len(s.Devices), max, p)
	names := make([]string, len(s.Devices))
	perDevice := s.PerDeviceNodeSelection != nil && *s.PerDeviceNodeSelection
	for i, d := range s.Devices {
		names[i] = d.Name
		errs = append(errs, validateDevice(d, perDevice, p.Index(i))...)
	}
	return append(errs, validateUnique(names, p, "name")...)
}

func validateDevice(d resourcev1.Device, perDevice bool, p *field.Path) field.ErrorList {
	errs := validateDNSLabel(d.Name, p.Child("name"))
	if n := len(d.Attributes) + len(d.Capacity); n > resourcev1.ResourceSliceMaxAttributesAndCapacitiesPerDevice {
		errs = append(errs, field.Invalid(p, n, "the total number of attributes and capacities must not exceed 32"))
	}
	tp := p.Child("taints")
	errs = append(errs, tooMany(len(d.Taints), resourcev1.DeviceTaintsMaxLength, tp)...)
	for i := range d.Taints {
		errs = append(errs, validateTaint(&d.Taints[i], nil, tp.Index(i))...)
	}
	nodeFields := d.NodeName != nil || d.NodeSelector != nil || d.AllNodes != nil
	if !perDevice && nodeFields {
		errs = append(errs, field.Invalid(p, nil, "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"))
	}
	if perDevice && !nodeFields {
		errs = append(errs, field.Required(p, "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"))
	}
	return errs
}
