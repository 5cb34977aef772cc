package flowcontrol

import (
	"fmt"
	"slices"
	"strings"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap"
	"k8s.io/apiserver/pkg/util/shufflesharding"
)

// maxQueues is upstream's priorityLevelConfigurationQueuingMaxQueues.
const maxQueues = 10 * 1000 * 1000

var (
	supportedVerbs = sets.New("get", "list", "create", "update", "delete", "deletecollection", "patch", "watch", "proxy")
	subjectKinds   = []string{string(flowcontrolv1.SubjectKindGroup), string(flowcontrolv1.SubjectKindServiceAccount),
		string(flowcontrolv1.SubjectKindUser)}
	distinguishers = []string{string(flowcontrolv1.FlowDistinguisherMethodByNamespaceType), string(flowcontrolv1.FlowDistinguisherMethodByUserType)}
)

// validateFlowSchema is upstream's ValidateFlowSchema minus the metadata,
// which the generic strategy checks.
func validateFlowSchema(fs *flowcontrolv1.FlowSchema) field.ErrorList {
	sp := field.NewPath("spec")
	errs := validateFlowSchemaSpec(fs.Name, &fs.Spec, sp)
	if mand := mandatoryFlowSchema(fs.Name); mand != nil && !apiequality.Semantic.DeepEqual(fs.Spec, mand.Spec) {
		errs = append(errs, field.Invalid(sp, fs.Spec, fmt.Sprintf("spec of '%s' must equal the fixed value", fs.Name)))
	}
	return append(errs, validateFlowSchemaStatus(&fs.Status)...)
}

func validateFlowSchemaSpec(name string, spec *flowcontrolv1.FlowSchemaSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	mp := p.Child("matchingPrecedence")
	switch {
	case spec.MatchingPrecedence <= 0:
		errs = append(errs, field.Invalid(mp, spec.MatchingPrecedence, "must be a positive value"))
	case spec.MatchingPrecedence > flowcontrolv1.FlowSchemaMaxMatchingPrecedence:
		errs = append(errs, field.Invalid(mp, spec.MatchingPrecedence, fmt.Sprintf("must not be greater than %v", flowcontrolv1.FlowSchemaMaxMatchingPrecedence)))
	case spec.MatchingPrecedence == 1 && name != flowcontrolv1.FlowSchemaNameExempt:
		errs = append(errs, field.Invalid(mp, spec.MatchingPrecedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
	}
	if dm := spec.DistinguisherMethod; dm != nil && !slices.Contains(distinguishers, string(dm.Type)) {
		errs = append(errs, field.NotSupported(p.Child("distinguisherMethod", "type"), dm, distinguishers))
	}
	plp := p.Child("priorityLevelConfiguration", "name")
	if pl := spec.PriorityLevelConfiguration.Name; pl == "" {
		errs = append(errs, field.Required(plp, "must reference a priority level"))
	} else {
		for _, msg := range apivalidation.NameIsDNSSubdomain(pl, false) {
			errs = append(errs, field.Invalid(plp, pl, msg))
		}
	}
	for i := range spec.Rules {
		errs = append(errs, validateRule(&spec.Rules[i], p.Child("rules").Index(i))...)
	}
	return errs
}

func validateRule(r *flowcontrolv1.PolicyRulesWithSubjects, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(r.Subjects) == 0 {
		errs = append(errs, field.Required(p.Child("subjects"), "subjects must contain at least one value"))
	}
	for i := range r.Subjects {
		errs = append(errs, validateSubject(&r.Subjects[i], p.Child("subjects").Index(i))...)
	}
	if len(r.ResourceRules) == 0 && len(r.NonResourceRules) == 0 {
		errs = append(errs, field.Required(p, "at least one of resourceRules and nonResourceRules has to be non-empty"))
	}
	for i := range r.ResourceRules {
		errs = append(errs, validateResourceRule(&r.ResourceRules[i], p.Child("resourceRules").Index(i))...)
	}
	for i := range r.NonResourceRules {
		errs = append(errs, validateNonResourceRule(&r.NonResourceRules[i], p.Child("nonResourceRules").Index(i))...)
	}
	return errs
}

func validateSubject(s *flowcontrolv1.Subject, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	forbid := func(set bool, child, kind string) {
		if set {
			errs = append(errs, field.Forbidden(p.Child(child), fmt.Sprintf("%s is forbidden when subject kind is not '%s'", child, kind)))
		}
	}
	switch s.Kind {
	case flowcontrolv1.SubjectKindServiceAccount:
		errs = append(errs, validateServiceAccountSubject(s.ServiceAccount, p.Child("serviceAccount"))...)
		forbid(s.User != nil, "user", "User")
		forbid(s.Group != nil, "group", "Group")
	case flowcontrolv1.SubjectKindUser:
		if s.User == nil {
			errs = append(errs, field.Required(p.Child("user"), "user is required when subject kind is 'User'"))
		} else if s.User.Name == "" {
			errs = append(errs, field.Required(p.Child("user", "name"), ""))
		}
		forbid(s.ServiceAccount != nil, "serviceAccount", "ServiceAccount")
		forbid(s.Group != nil, "group", "Group")
	case flowcontrolv1.SubjectKindGroup:
		if s.Group == nil {
			errs = append(errs, field.Required(p.Child("group"), "group is required when subject kind is 'Group'"))
		} else if s.Group.Name == "" {
			errs = append(errs, field.Required(p.Child("group", "name"), ""))
		}
		forbid(s.ServiceAccount != nil, "serviceAccount", "ServiceAccount")
		forbid(s.User != nil, "user", "User")
	default:
		errs = append(errs, field.NotSupported(p.Child("kind"), s.Kind, subjectKinds))
	}
	return errs
}

func validateServiceAccountSubject(sa *flowcontrolv1.ServiceAccountSubject, p *field.Path) field.ErrorList {
	if sa == nil {
		return field.ErrorList{field.Required(p, "serviceAccount is required when subject kind is 'ServiceAccount'")}
	}
	var errs field.ErrorList
	if sa.Name == "" {
		errs = append(errs, field.Required(p.Child("name"), ""))
	} else if sa.Name != flowcontrolv1.NameAll {
		for _, msg := range apivalidation.ValidateServiceAccountName(sa.Name, false) {
			errs = append(errs, field.Invalid(p.Child("name"), sa.Name, msg))
		}
	}
	if sa.Namespace == "" {
		return append(errs, field.Required(p.Child("namespace"), "must specify namespace for service account"))
	}
	for _, msg := range apivalidation.ValidateNamespaceName(sa.Namespace, false) {
		errs = append(errs, field.Invalid(p.Child("namespace"), sa.Namespace, msg))
	}
	return errs
}

func validateVerbs(verbs []string, p *field.Path) field.ErrorList {
	switch {
	case len(verbs) == 0:
		return field.ErrorList{field.Required(p, "verbs must contain at least one value")}
	case slices.Contains(verbs, flowcontrolv1.VerbAll):
		if len(verbs) > 1 {
			return field.ErrorList{field.Invalid(p, verbs, "if '*' is present, must not specify other verbs")}
		}
	case !supportedVerbs.HasAll(verbs...):
		return field.ErrorList{field.NotSupported(p, verbs, sets.List(supportedVerbs))}
	}
	return nil
}

// lonelyWildcard checks a list that must be non-empty and may hold '*'
// only on its own.
func lonelyWildcard(vals []string, p *field.Path, required, what string) field.ErrorList {
	if len(vals) == 0 {
		return field.ErrorList{field.Required(p, required)}
	}
	if len(vals) > 1 && slices.Contains(vals, "*") {
		return field.ErrorList{field.Invalid(p, vals, "if '*' is present, must not specify other "+what)}
	}
	return nil
}

func validateResourceRule(r *flowcontrolv1.ResourcePolicyRule, p *field.Path) field.ErrorList {
	errs := validateVerbs(r.Verbs, p.Child("verbs"))
	errs = append(errs, lonelyWildcard(r.APIGroups, p.Child("apiGroups"), "resource rules must supply at least one api group", "api groups")...)
	errs = append(errs, lonelyWildcard(r.Resources, p.Child("resources"), "resource rules must supply at least one resource", "resources")...)
	np := p.Child("namespaces")
	switch {
	case len(r.Namespaces) == 0 && !r.ClusterScope:
		errs = append(errs, field.Required(np, "resource rules that are not cluster scoped must supply at least one namespace"))
	case slices.Contains(r.Namespaces, flowcontrolv1.NamespaceEvery):
		if len(r.Namespaces) > 1 {
			errs = append(errs, field.Invalid(np, r.Namespaces, "if '*' is present, must not specify other namespaces"))
		}
	default:
		for i, ns := range r.Namespaces {
			for _, msg := range apivalidation.ValidateNamespaceName(ns, false) {
				errs = append(errs, field.Invalid(np.Index(i), ns, "each member of this list must be '*' or a DNS-1123 label; "+msg))
			}
		}
	}
	return errs
}

func validateNonResourceRule(r *flowcontrolv1.NonResourcePolicyRule, p *field.Path) field.ErrorList {
	errs := validateVerbs(r.Verbs, p.Child("verbs"))
	up := p.Child("nonResourceURLs")
	switch {
	case len(r.NonResourceURLs) == 0:
		errs = append(errs, field.Required(up, "nonResourceURLs must contain at least one value"))
	case slices.Contains(r.NonResourceURLs, flowcontrolv1.NonResourceAll):
		if len(r.NonResourceURLs) > 1 {
			errs = append(errs, field.Invalid(up, r.NonResourceURLs, "if '*' is present, must not specify other non-resource URLs"))
		}
	default:
		for i, u := range r.NonResourceURLs {
			if err := validateNonResourceURL(u, up.Index(i)); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// validateNonResourceURL is upstream's ValidateNonResourceURLPath: a path
// starting with a slash, without blanks or "//", a '*' only as a "/*" suffix.
func validateNonResourceURL(path string, p *field.Path) *field.Error {
	switch {
	case path == "":
		return field.Invalid(p, path, "must not be empty")
	case path == "/":
		return nil
	case !strings.HasPrefix(path, "/"):
		return field.Invalid(p, path, "must start with slash")
	case strings.Contains(path, " "):
		return field.Invalid(p, path, "must not contain white-space")
	case strings.Contains(path, "//"):
		return field.Invalid(p, path, "must not contain double slash")
	}
	if n := strings.Count(path, "*"); n > 1 || (n == 1 && !strings.HasSuffix(path, "/*")) {
		return field.Invalid(p, path, "wildcard can only do suffix matching")
	}
	return nil
}

func validateFlowSchemaStatus(st *flowcontrolv1.FlowSchemaStatus) field.ErrorList {
	types := make([]string, len(st.Conditions))
	for i, c := range st.Conditions {
		types[i] = string(c.Type)
	}
	return validateConditionTypes(types, field.NewPath("status", "conditions"))
}

func validateConditionTypes(types []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := sets.New[string]()
	for i, t := range types {
		if seen.Has(t) {
			errs = append(errs, field.Duplicate(p.Index(i).Child("type"), t))
		}
		seen.Insert(t)
		if t == "" {
			errs = append(errs, field.Required(p.Index(i).Child("type"), ""))
		}
	}
	return errs
}

// validatePriorityLevel is upstream's ValidatePriorityLevelConfiguration
// minus the metadata.
func validatePriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration) field.ErrorList {
	var errs field.ErrorList
	if _, ok := pl.Annotations["flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares"]; ok {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations"),
			"annotation 'flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares' is forbidden"))
	}
	sp := field.NewPath("spec")
	errs = append(errs, validatePriorityLevelSpec(&pl.Spec, pl.Name, sp)...)
	errs = append(errs, validateMandatoryPriorityLevel(pl, sp)...)
	return append(errs, validatePriorityLevelStatus(&pl.Status)...)
}

func validateMandatoryPriorityLevel(pl *flowcontrolv1.PriorityLevelConfiguration, p *field.Path) field.ErrorList {
	mand := mandatoryPriorityLevel(pl.Name)
	if mand == nil {
		return nil
	}
	want, have := &mand.Spec, pl.Spec.DeepCopy()
	msg := fmt.Sprintf("spec of '%s' must equal the fixed value", pl.Name)
	if pl.Name == flowcontrolv1.PriorityLevelConfigurationNameExempt {
		// Only spec.exempt of the exempt level may be changed.
		have.Exempt = want.Exempt
		msg = fmt.Sprintf("spec of '%s' except the 'spec.exempt' field must equal the fixed value", pl.Name)
	}
	if !apiequality.Semantic.DeepEqual(want, have) {
		return field.ErrorList{field.Invalid(p, pl.Spec, msg)}
	}
	return nil
}

func validatePriorityLevelSpec(spec *flowcontrolv1.PriorityLevelConfigurationSpec, name string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if (name == flowcontrolv1.PriorityLevelConfigurationNameExempt) != (spec.Type == flowcontrolv1.PriorityLevelEnablementExempt) {
		errs = append(errs, field.Invalid(p.Child("type"), spec.Type, "must be 'Exempt' if and only if `name` is 'exempt'"))
	}
	switch spec.Type {
	case flowcontrolv1.PriorityLevelEnablementExempt:
		if spec.Limited != nil {
			errs = append(errs, field.Forbidden(p.Child("limited"), "must be nil if the type is not Limited"))
		}
		if e := spec.Exempt; e != nil {
			errs = append(errs, nonNegative(e.NominalConcurrencyShares, p.Child("exempt", "nominalConcurrencyShares"))...)
			errs = append(errs, percent(e.LendablePercent, p.Child("exempt", "lendablePercent"))...)
		}
	case flowcontrolv1.PriorityLevelEnablementLimited:
		if spec.Exempt != nil {
			errs = append(errs, field.Forbidden(p.Child("exempt"), "must be nil if the type is Limited"))
		}
		if spec.Limited == nil {
			errs = append(errs, field.Required(p.Child("limited"), "must not be empty when type is Limited"))
		} else {
			errs = append(errs, validateLimited(spec.Limited, p.Child("limited"))...)
		}
	case "":
		errs = append(errs, field.Required(p.Child("type"), ""))
	default:
		errs = append(errs, field.NotSupported(p.Child("type"), spec.Type, []string{"Exempt", "Limited"}))
	}
	return errs
}

func nonNegative(v *int32, p *field.Path) field.ErrorList {
	if v != nil && *v < 0 {
		return field.ErrorList{field.Invalid(p, *v, "must be a non-negative integer")}
	}
	return nil
}

func percent(v *int32, p *field.Path) field.ErrorList {
	if v != nil && (*v < 0 || *v > 100) {
		return field.ErrorList{field.Invalid(p, *v, "must be between 0 and 100, inclusive")}
	}
	return nil
}

func validateLimited(l *flowcontrolv1.LimitedPriorityLevelConfiguration, p *field.Path) field.ErrorList {
	errs := nonNegative(l.NominalConcurrencyShares, p.Child("nominalConcurrencyShares"))
	errs = append(errs, validateLimitResponse(&l.LimitResponse, p.Child("limitResponse"))...)
	errs = append(errs, percent(l.LendablePercent, p.Child("lendablePercent"))...)
	if b := l.BorrowingLimitPercent; b != nil && *b < 0 {
		errs = append(errs, field.Invalid(p.Child("borrowingLimitPercent"), *b, "if specified, must be a non-negative integer"))
	}
	return errs
}

func validateLimitResponse(lr *flowcontrolv1.LimitResponse, p *field.Path) field.ErrorList {
	switch lr.Type {
	case flowcontrolv1.LimitResponseTypeReject:
		if lr.Queuing != nil {
			return field.ErrorList{field.Forbidden(p.Child("queuing"), "must be nil if limited.limitResponse.type is not Limited")}
		}
	case flowcontrolv1.LimitResponseTypeQueue:
		if lr.Queuing == nil {
			return field.ErrorList{field.Required(p.Child("queuing"), "must not be empty if limited.limitResponse.type is Limited")}
		}
		return validateQueuing(lr.Queuing, p.Child("queuing"))
	case "":
		return field.ErrorList{field.Required(p.Child("type"), "")}
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), lr.Type, []string{"Queue", "Reject"})}
	}
	return nil
}

func validateQueuing(q *flowcontrolv1.QueuingConfiguration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if q.QueueLengthLimit <= 0 {
		errs = append(errs, field.Invalid(p.Child("queueLengthLimit"), q.QueueLengthLimit, "must be positive"))
	}
	switch {
	case q.Queues <= 0:
		errs = append(errs, field.Invalid(p.Child("queues"), q.Queues, "must be positive"))
	case q.Queues > maxQueues:
		errs = append(errs, field.Invalid(p.Child("queues"), q.Queues, fmt.Sprintf("must not be greater than %d", maxQueues)))
	}
	hp := p.Child("handSize")
	switch {
	case q.HandSize <= 0:
		errs = append(errs, field.Invalid(hp, q.HandSize, "must be positive"))
	case q.HandSize > q.Queues:
		errs = append(errs, field.Invalid(hp, q.HandSize, fmt.Sprintf("should not be greater than queues (%d)", q.Queues)))
	case shufflesharding.RequiredEntropyBits(int(q.Queues), int(q.HandSize)) > shufflesharding.MaxHashBits:
		errs = append(errs, field.Invalid(hp, q.HandSize, fmt.Sprintf("required entropy bits of deckSize %d and handSize %d should not be greater than %d",
			q.Queues, q.HandSize, shufflesharding.MaxHashBits)))
	}
	return errs
}

func validatePriorityLevelStatus(st *flowcontrolv1.PriorityLevelConfigurationStatus) field.ErrorList {
	types := make([]string, len(st.Conditions))
	for i, c := range st.Conditions {
		types[i] = string(c.Type)
	}
	return validateConditionTypes(types, field.NewPath("status", "conditions"))
}

// mandatoryFlowSchema is the defaulted mandatory FlowSchema of a name, nil
// for other names.
func mandatoryFlowSchema(name string) *flowcontrolv1.FlowSchema {
	for _, fs := range bootstrap.MandatoryFlowSchemas {
		if fs.Name == name {
			c := fs.DeepCopy()
			DefaultFlowSchema(c)
			return c
		}
	}
	return nil
}

// mandatoryPriorityLevel is the defaulted mandatory priority level of a
// name, nil for other names.
func mandatoryPriorityLevel(name string) *flowcontrolv1.PriorityLevelConfiguration {
	for _, pl := range bootstrap.MandatoryPriorityLevelConfigurations {
		if pl.Name == name {
			c := pl.DeepCopy()
			DefaultPriorityLevel(c)
			return c
		}
	}
	return nil
}
