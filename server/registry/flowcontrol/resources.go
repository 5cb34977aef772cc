package flowcontrol

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

// Group is this package's resources for server/registry/all.
func Group() registry.Group {
	return registry.Group{Name: "flowcontrol", Resources: resources, AddToScheme: func(s *runtime.Scheme) error {
		utilruntime.Must(flowcontrolv1.AddToScheme(s))
		return nil
	}}
}

func resources(registry.Config) []*registry.Resource {
	return registry.BuildAll(flowSchemas(), priorityLevels())
}

func fsOf(o runtime.Object) *flowcontrolv1.FlowSchema { return o.(*flowcontrolv1.FlowSchema) }

func plOf(o runtime.Object) *flowcontrolv1.PriorityLevelConfiguration {
	return o.(*flowcontrolv1.PriorityLevelConfiguration)
}

func flowSchemas() registry.Def {
	return registry.Def{GroupVersion: flowcontrolv1.SchemeGroupVersion, Resource: "flowschemas", Kind: "FlowSchema", HasStatus: true,
		New: registry.NewObjects[flowcontrolv1.FlowSchema](), NewList: registry.NewObjects[flowcontrolv1.FlowSchemaList](),
		Hooks: registry.Hooks{
			Generation:     true,
			Defaults:       func(o runtime.Object) { DefaultFlowSchema(fsOf(o)) },
			Validate:       func(o runtime.Object) field.ErrorList { return validateFlowSchema(fsOf(o)) },
			PrepareStatus:  registry.ResetMetaForStatus,
			ValidateStatus: func(o, _ runtime.Object) field.ErrorList { return validateFlowSchemaStatus(&fsOf(o).Status) },
			Columns: []metav1.TableColumnDefinition{
				registry.Col("PriorityLevel", "string", 0, flowcontrolv1.PriorityLevelConfigurationReference{}.SwaggerDoc()["name"]),
				registry.Col("MatchingPrecedence", "string", 0, flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["matchingPrecedence"]),
				registry.Col("DistinguisherMethod", "string", 0, flowcontrolv1.FlowSchemaSpec{}.SwaggerDoc()["distinguisherMethod"]),
				registry.AgeColumn(),
				registry.Col("MissingPL", "string", 0, "references a broken or non-existent PriorityLevelConfiguration"),
			},
			Row: flowSchemaRow,
		}}
}

func flowSchemaRow(o runtime.Object) []interface{} {
	fs := fsOf(o)
	dm := "<none>"
	if fs.Spec.DistinguisherMethod != nil {
		dm = string(fs.Spec.DistinguisherMethod.Type)
	}
	missing := "?"
	for _, c := range fs.Status.Conditions {
		if c.Type == flowcontrolv1.FlowSchemaConditionDangling {
			missing = string(c.Status)
			break
		}
	}
	return []interface{}{fs.Spec.PriorityLevelConfiguration.Name, int64(fs.Spec.MatchingPrecedence), dm, registry.Age(o), missing}
}

func priorityLevels() registry.Def {
	return registry.Def{GroupVersion: flowcontrolv1.SchemeGroupVersion, Resource: "prioritylevelconfigurations",
		Kind: "PriorityLevelConfiguration", HasStatus: true,
		New:     registry.NewObjects[flowcontrolv1.PriorityLevelConfiguration](),
		NewList: registry.NewObjects[flowcontrolv1.PriorityLevelConfigurationList](),
		Hooks: registry.Hooks{
			Generation:     true,
			Defaults:       func(o runtime.Object) { DefaultPriorityLevel(plOf(o)) },
			Validate:       func(o runtime.Object) field.ErrorList { return validatePriorityLevel(plOf(o)) },
			PrepareStatus:  registry.ResetMetaForStatus,
			ValidateStatus: func(o, _ runtime.Object) field.ErrorList { return validatePriorityLevelStatus(&plOf(o).Status) },
			Columns: []metav1.TableColumnDefinition{
				registry.Col("Type", "string", 0, flowcontrolv1.PriorityLevelConfigurationSpec{}.SwaggerDoc()["type"]),
				registry.Col("NominalConcurrencyShares", "string", 0, flowcontrolv1.LimitedPriorityLevelConfiguration{}.SwaggerDoc()["nominalConcurrencyShares"]),
				registry.Col("Queues", "string", 0, flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queues"]),
				registry.Col("HandSize", "string", 0, flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["handSize"]),
				registry.Col("QueueLengthLimit", "string", 0, flowcontrolv1.QueuingConfiguration{}.SwaggerDoc()["queueLengthLimit"]),
				registry.AgeColumn(),
			},
			Row: priorityLevelRow,
		}}
}

func priorityLevelRow(o runtime.Object) []interface{} {
	pl := plOf(o)
	var ncs, queues, hand, qlen interface{} = "<none>", "<none>", "<none>", "<none>"
	if l := pl.Spec.Limited; l != nil {
		if l.NominalConcurrencyShares != nil {
			ncs = int64(*l.NominalConcurrencyShares)
		}
		if q := l.LimitResponse.Queuing; q != nil {
			queues, hand, qlen = int64(q.Queues), int64(q.HandSize), int64(q.QueueLengthLimit)
		}
	}
	return []interface{}{string(pl.Spec.Type), ncs, queues, hand, qlen, registry.Age(o)}
}
