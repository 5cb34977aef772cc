package resource

import (
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

// requestNames are the names a claim's constraints, config and allocation
// results may refer to: each request, and request/sub-request.
func requestNames(d *resourcev1.DeviceClaim) sets.Set[string] {
	names := sets.New[string]()
	for _, r := range d.Requests {
		names.Insert(r.Name)
		for _, sub := range r.FirstAvailable {
			names.Insert(r.Name + "/" + sub.Name)
		}
	}
	return names
}

// validateClaimSpec: at most 32 uniquely named requests, each exactly one
// of exactly or firstAvailable; constraints and config that name requests
// of the claim.
func validateClaimSpec(s *resourcev1.ResourceClaimSpec, p *field.Path) field.ErrorList {
	dp := p.Child("devices")
	d := &s.Devices
	rp := dp.Child("requests")
	errs := tooMany(len(d.Requests), resourcev1.DeviceRequestsMaxSize, rp)
	names := make([]string, len(d.Requests))
	for i, r := range d.Requests {
		names[i] = r.Name
		errs = append(errs, validateRequest(r, rp.Index(i))...)
	}
	errs = append(errs, validateUnique(names, rp, "name")...)
	refs := requestNames(d)
	cp := dp.Child("constraints")
	errs = append(errs, tooMany(len(d.Constraints), resourcev1.DeviceConstraintsMaxSize, cp)...)
	for i, c := range d.Constraints {
		errs = append(errs, validateConstraint(c, refs, cp.Index(i))...)
	}
	gp := dp.Child("config")
	errs = append(errs, tooMany(len(d.Config), resourcev1.DeviceConfigMaxSize, gp)...)
	for i, c := range d.Config {
		errs = append(errs, validateRequestRefs(c.Requests, refs, gp.Index(i).Child("requests"))...)
		errs = append(errs, validateConfiguration(c.DeviceConfiguration, gp.Index(i))...)
	}
	return errs
}

func validateRequest(r resourcev1.DeviceRequest, p *field.Path) field.ErrorList {
	errs := validateDNSLabel(r.Name, p.Child("name"))
	switch {
	case r.Exactly == nil && len(r.FirstAvailable) == 0:
		errs = append(errs, field.Required(p, "exactly one of `exactly` or `firstAvailable` is required"))
	case r.Exactly != nil && len(r.FirstAvailable) > 0:
		errs = append(errs, field.Invalid(p, nil, "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"))
	case r.Exactly != nil:
		e, ep := r.Exactly, p.Child("exactly")
		errs = append(errs, validateDeviceChoice(e.DeviceClassName, e.Selectors, e.AllocationMode, e.Count, e.Tolerations, ep)...)
	default:
		fp := p.Child("firstAvailable")
		errs = append(errs, tooMany(len(r.FirstAvailable), resourcev1.FirstAvailableDeviceRequestMaxSize, fp)...)
		subs := make([]string, len(r.FirstAvailable))
		for i, s := range r.FirstAvailable {
			subs[i] = s.Name
			sp := fp.Index(i)
			errs = append(errs, validateDNSLabel(s.Name, sp.Child("name"))...)
			errs = append(errs, validateDeviceChoice(s.DeviceClassName, s.Selectors, s.AllocationMode, s.Count, s.Tolerations, sp)...)
		}
		errs = append(errs, validateUnique(subs, fp, "name")...)
	}
	return errs
}

// validateDeviceChoice checks what exact requests and sub-requests share.
func validateDeviceChoice(class string, sels []resourcev1.DeviceSelector, mode resourcev1.DeviceAllocationMode, count int64,
	tols []resourcev1.DeviceToleration, p *field.Path) field.ErrorList {
	errs := validateSubdomain(class, p.Child("deviceClassName"))
	errs = append(errs, validateSelectors(sels, p.Child("selectors"))...)
	switch mode {
	case resourcev1.DeviceAllocationModeAll:
		if count != 0 {
			errs = append(errs, field.Invalid(p.Child("count"), count, fmt.Sprintf("must not be specified when allocationMode is '%s'", mode)))
		}
	case resourcev1.DeviceAllocationModeExactCount:
		if count <= 0 {
			errs = append(errs, field.Invalid(p.Child("count"), count, "must be greater than zero"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("allocationMode"), mode,
			[]resourcev1.DeviceAllocationMode{resourcev1.DeviceAllocationModeAll, resourcev1.DeviceAllocationModeExactCount}))
	}
	tp := p.Child("tolerations")
	errs = append(errs, tooMany(len(tols), resourcev1.DeviceTolerationsMaxLength, tp)...)
	for i, t := range tols {
		errs = append(errs, validateToleration(t, tp.Index(i))...)
	}
	return errs
}

func validateConstraint(c resourcev1.DeviceConstraint, refs sets.Set[string], p *field.Path) field.ErrorList {
	errs := validateRequestRefs(c.Requests, refs, p.Child("requests"))
	switch {
	case c.MatchAttribute != nil && c.DistinctAttribute != nil:
		errs = append(errs, field.Invalid(p, nil, `exactly one of "matchAttribute" or "distinctAttribute" is required, but multiple fields are set`))
	case c.MatchAttribute != nil:
		errs = append(errs, validateFullyQualifiedName(string(*c.MatchAttribute), p.Child("matchAttribute"))...)
	case c.DistinctAttribute != nil:
		errs = append(errs, validateFullyQualifiedName(string(*c.DistinctAttribute), p.Child("distinctAttribute"))...)
	default:
		errs = append(errs, field.Required(p, `exactly one of "matchAttribute" or "distinctAttribute" is required`))
	}
	return errs
}

// validateFullyQualifiedName: <driver-like domain>/<C identifier>.
func validateFullyQualifiedName(name string, p *field.Path) field.ErrorList {
	domain, id, ok := strings.Cut(name, "/")
	if !ok {
		return field.ErrorList{field.Invalid(p, name, "a fully qualified name must be a domain and a name separated by a slash")}
	}
	errs := validateDriverName(domain, p)
	return append(errs, validateCIdentifier(id, p)...)
}

func validateCIdentifier(id string, p *field.Path) field.ErrorList {
	if len(id) > resourcev1.DeviceMaxIDLength {
		return field.ErrorList{field.TooLong(p, "", resourcev1.DeviceMaxIDLength)}
	}
	if !cIdentifier(id) {
		return field.ErrorList{field.Invalid(p, id, "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'")}
	}
	return nil
}

func cIdentifier(id string) bool {
	for i, c := range id {
		alpha := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !alpha && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return id != ""
}

// validateClaimStatus: reservedFor only on an allocated claim, unique by
// UID, and not growing while the claim is deleted; an allocation is
// immutable once set, and a new one names requests of the claim.
func validateClaimStatus(c, old *resourcev1.ResourceClaim) field.ErrorList {
	p := field.NewPath("status")
	st := &c.Status
	rp := p.Child("reservedFor")
	errs := tooMany(len(st.ReservedFor), resourcev1.ResourceClaimReservedForMaxSize, rp)
	uids := make([]string, len(st.ReservedFor))
	for i, r := range st.ReservedFor {
		uids[i] = string(r.UID)
		errs = append(errs, validateConsumer(r, rp.Index(i))...)
	}
	errs = append(errs, validateUnique(uids, rp, "uid")...)
	if len(st.ReservedFor) > 0 && st.Allocation == nil {
		errs = append(errs, field.Forbidden(rp, "may not be specified when `allocated` is not set"))
	}
	if len(st.ReservedFor) > 0 && c.DeletionTimestamp != nil &&
		sets.New(st.ReservedFor...).Difference(sets.New(old.Status.ReservedFor...)).Len() > 0 {
		errs = append(errs, field.Forbidden(rp, "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"))
	}
	switch {
	case st.Allocation != nil && old.Status.Allocation != nil:
		errs = append(errs, immutable(st.Allocation, old.Status.Allocation, "status.allocation")...)
	case st.Allocation != nil:
		errs = append(errs, validateAllocation(st.Allocation, requestNames(&c.Spec.Devices), p.Child("allocation"))...)
	}
	return errs
}

func validateConsumer(r resourcev1.ResourceClaimConsumerReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct{ v, name string }{{r.Resource, "resource"}, {r.Name, "name"}, {string(r.UID), "uid"}} {
		if f.v == "" {
			errs = append(errs, field.Required(p.Child(f.name), ""))
		}
	}
	return errs
}

func validateAllocation(a *resourcev1.AllocationResult, refs sets.Set[string], p *field.Path) field.ErrorList {
	dp := p.Child("devices")
	rp := dp.Child("results")
	errs := tooMany(len(a.Devices.Results), resourcev1.AllocationResultsMaxSize, rp)
	for i, r := range a.Devices.Results {
		ip := rp.Index(i)
		if !refs.Has(r.Request) {
			errs = append(errs, field.Invalid(ip.Child("request"), r.Request, requestNotFound))
		}
		errs = append(errs, validateDriverName(r.Driver, ip.Child("driver"))...)
		errs = append(errs, validatePoolName(r.Pool, ip.Child("pool"))...)
		errs = append(errs, validateDNSLabel(r.Device, ip.Child("device"))...)
	}
	cp := dp.Child("config")
	errs = append(errs, tooMany(len(a.Devices.Config), 2*resourcev1.DeviceConfigMaxSize, cp)...)
	for i, c := range a.Devices.Config {
		ip := cp.Index(i)
		switch c.Source {
		case resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass:
		case "":
			errs = append(errs, field.Required(ip.Child("source"), ""))
		default:
			errs = append(errs, field.NotSupported(ip.Child("source"), c.Source,
				[]resourcev1.AllocationConfigSource{resourcev1.AllocationConfigSourceClaim, resourcev1.AllocationConfigSourceClass}))
		}
		errs = append(errs, validateRequestRefs(c.Requests, refs, ip.Child("requests"))...)
		errs = append(errs, validateConfiguration(c.DeviceConfiguration, ip)...)
	}
	if a.NodeSelector != nil {
		errs = append(errs, registry.ValidateNodeSelector(a.NodeSelector, p.Child("nodeSelector"))...)
	}
	return errs
}
