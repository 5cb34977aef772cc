package resource

import (
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

// Group is resource.k8s.io for server/registry/all.
func Group() registry.Group {
	return registry.Group{Name: resourcev1.GroupName, Resources: resources, AddToScheme: resourcev1.AddToScheme}
}

func resources(registry.Config) []*registry.Resource {
	gv := resourcev1.SchemeGroupVersion
	age := []metav1.TableColumnDefinition{registry.AgeColumn()}
	ageRow := func(o runtime.Object) []interface{} { return []interface{}{registry.Age(o)} }
	return registry.BuildAll(
		registry.Def{GroupVersion: gv, Resource: "deviceclasses", Kind: "DeviceClass",
			New: registry.NewObjects[resourcev1.DeviceClass](), NewList: registry.NewObjects[resourcev1.DeviceClassList](),
			Hooks: registry.Hooks{Generation: true,
				Validate:       func(o runtime.Object) field.ErrorList { return validateDeviceClassSpec(&classOf(o).Spec) },
				ValidateUpdate: func(o, _ runtime.Object) field.ErrorList { return validateDeviceClassSpec(&classOf(o).Spec) },
				Columns:        age, Row: ageRow}},
		registry.Def{GroupVersion: gv, Resource: "resourceclaims", Kind: "ResourceClaim", Namespaced: true, HasStatus: true,
			New: registry.NewObjects[resourcev1.ResourceClaim](), NewList: registry.NewObjects[resourcev1.ResourceClaimList](),
			Hooks: registry.Hooks{
				Defaults: func(o runtime.Object) { defaultClaimSpec(&claimOf(o).Spec) },
				Validate: func(o runtime.Object) field.ErrorList {
					return validateClaimSpec(&claimOf(o).Spec, field.NewPath("spec"))
				},
				ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
					return immutable(claimOf(o).Spec, claimOf(old).Spec, "spec")
				},
				PrepareStatus:  registry.ResetMetaForStatus,
				ValidateStatus: func(o, old runtime.Object) field.ErrorList { return validateClaimStatus(claimOf(o), claimOf(old)) },
				Columns: []metav1.TableColumnDefinition{
					registry.Col("State", "string", 0, "A summary of the current state (allocated, pending, reserved, etc.)."),
					registry.AgeColumn(),
				},
				Row: func(o runtime.Object) []interface{} { return []interface{}{claimState(claimOf(o)), registry.Age(o)} }}},
		registry.Def{GroupVersion: gv, Resource: "resourceclaimtemplates", Kind: "ResourceClaimTemplate", Namespaced: true,
			New: registry.NewObjects[resourcev1.ResourceClaimTemplate](), NewList: registry.NewObjects[resourcev1.ResourceClaimTemplateList](),
			Hooks: registry.Hooks{
				Defaults: func(o runtime.Object) { defaultClaimSpec(&templateOf(o).Spec.Spec) },
				Validate: func(o runtime.Object) field.ErrorList { return validateTemplateSpec(&templateOf(o).Spec) },
				ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
					return immutable(templateOf(o).Spec, templateOf(old).Spec, "spec")
				},
				Columns: age, Row: ageRow}},
		registry.Def{GroupVersion: gv, Resource: "resourceslices", Kind: "ResourceSlice",
			New: registry.NewObjects[resourcev1.ResourceSlice](), NewList: registry.NewObjects[resourcev1.ResourceSliceList](),
			Hooks: registry.Hooks{Generation: true,
				Defaults: func(o runtime.Object) { defaultSliceTaints(&sliceOf(o).Spec) },
				Validate: func(o runtime.Object) field.ErrorList { return validateSliceSpec(&sliceOf(o).Spec, nil) },
				ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
					return validateSliceSpec(&sliceOf(o).Spec, &sliceOf(old).Spec)
				},
				Fields: sliceFields,
				Columns: []metav1.TableColumnDefinition{
					registry.Col("Node", "string", 0, resourcev1.ResourceSliceSpec{}.SwaggerDoc()["nodeName"]),
					registry.Col("Driver", "string", 0, resourcev1.ResourceSliceSpec{}.SwaggerDoc()["driver"]),
					registry.Col("Pool", "string", 0, resourcev1.ResourcePool{}.SwaggerDoc()["name"]),
					registry.AgeColumn(),
				},
				Row: sliceRow}},
		registry.Def{GroupVersion: gv, Resource: "devicetaintrules", Kind: "DeviceTaintRule", HasStatus: true,
			New: registry.NewObjects[resourcev1.DeviceTaintRule](), NewList: registry.NewObjects[resourcev1.DeviceTaintRuleList](),
			Hooks: registry.Hooks{Generation: true,
				Defaults: func(o runtime.Object) { defaultTaint(&taintRuleOf(o).Spec.Taint) },
				Validate: func(o runtime.Object) field.ErrorList { return validateTaintRuleSpec(&taintRuleOf(o).Spec, nil) },
				ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
					return validateTaintRuleSpec(&taintRuleOf(o).Spec, &taintRuleOf(old).Spec)
				},
				PrepareStatus:  registry.ResetMetaForStatus,
				ValidateStatus: func(o, _ runtime.Object) field.ErrorList { return validateTaintRuleStatus(&taintRuleOf(o).Status) },
				Columns: []metav1.TableColumnDefinition{
					registry.Col("Key", "string", 0, resourcev1.DeviceTaint{}.SwaggerDoc()["key"]),
					registry.Col("Value", "string", 0, resourcev1.DeviceTaint{}.SwaggerDoc()["value"]),
					registry.Col("Effect", "string", 0, resourcev1.DeviceTaint{}.SwaggerDoc()["effect"]),
					registry.Col("TimeAdded", "string", 0, resourcev1.DeviceTaint{}.SwaggerDoc()["timeAdded"]),
					registry.AgeColumn(),
				},
				Row: taintRuleRow}},
	)
}

func classOf(o runtime.Object) *resourcev1.DeviceClass   { return o.(*resourcev1.DeviceClass) }
func claimOf(o runtime.Object) *resourcev1.ResourceClaim { return o.(*resourcev1.ResourceClaim) }
func templateOf(o runtime.Object) *resourcev1.ResourceClaimTemplate {
	return o.(*resourcev1.ResourceClaimTemplate)
}
func sliceOf(o runtime.Object) *resourcev1.ResourceSlice { return o.(*resourcev1.ResourceSlice) }
func taintRuleOf(o runtime.Object) *resourcev1.DeviceTaintRule {
	return o.(*resourcev1.DeviceTaintRule)
}

// The field selectors of ResourceSlices (upstream's
// resource.ResourceSliceSelector*).
const (
	selectorNodeName = "spec.nodeName"
	selectorDriver   = "spec.driver"
	selectorPoolName = "spec.pool.name"
)

func sliceFields(o runtime.Object, set fields.Set) {
	s := sliceOf(o)
	set[selectorNodeName] = ""
	if s.Spec.NodeName != nil {
		set[selectorNodeName] = *s.Spec.NodeName
	}
	set[selectorDriver] = s.Spec.Driver
	set[selectorPoolName] = s.Spec.Pool.Name
}

func sliceRow(o runtime.Object) []interface{} {
	s, node := sliceOf(o), ""
	if s.Spec.NodeName != nil {
		node = *s.Spec.NodeName
	}
	return []interface{}{node, s.Spec.Driver, s.Spec.Pool.Name, registry.Age(o)}
}

func taintRuleRow(o runtime.Object) []interface{} {
	t, added := taintRuleOf(o).Spec.Taint, ""
	if t.TimeAdded != nil {
		added = registry.Since(*t.TimeAdded)
	}
	return []interface{}{t.Key, t.Value, string(t.Effect), added, registry.Age(o)}
}

// claimState is kubectl's State column: deleted, pending, allocated,
// reserved.
func claimState(c *resourcev1.ResourceClaim) string {
	var states []string
	if c.DeletionTimestamp != nil {
		states = append(states, "deleted")
	}
	switch {
	case c.Status.Allocation == nil && c.DeletionTimestamp == nil:
		states = append(states, "pending")
	case c.Status.Allocation != nil:
		states = append(states, "allocated")
		if len(c.Status.ReservedFor) > 0 {
			states = append(states, "reserved")
		}
	}
	return strings.Join(states, ",")
}
