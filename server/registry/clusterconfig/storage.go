package clusterconfig

import (
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/server/registry"
)

// Upstream's limits on StorageClass and VolumeAttributesClass parameters.
const (
	maxParameters    = 512
	maxParameterSize = 256 * (1 << 10)
)

func volumeAttributesClass() registry.Def {
	vac := func(o runtime.Object) *storagev1.VolumeAttributesClass { return o.(*storagev1.VolumeAttributesClass) }
	return registry.Def{GroupVersion: storagev1.SchemeGroupVersion, Resource: "volumeattributesclasses", Kind: "VolumeAttributesClass",
		ShortNames: []string{"vac"},
		New:        registry.NewObjects[storagev1.VolumeAttributesClass](), NewList: registry.NewObjects[storagev1.VolumeAttributesClassList](),
		Hooks: registry.Hooks{
			Validate: func(o runtime.Object) field.ErrorList { return validateVolumeAttributesClass(vac(o)) },
			ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
				n, p := vac(o), vac(old)
				var errs field.ErrorList
				if n.DriverName != p.DriverName {
					errs = append(errs, field.Forbidden(field.NewPath("driverName"), "updates to driverName are forbidden."))
				}
				if !apiequality.Semantic.DeepEqual(n.Parameters, p.Parameters) {
					errs = append(errs, field.Forbidden(field.NewPath("parameters"), "updates to parameters are forbidden."))
				}
				return append(errs, validateVolumeAttributesClass(n)...)
			},
			Columns: []metav1.TableColumnDefinition{
				registry.Col("DriverName", "string", 0, storagev1.VolumeAttributesClass{}.SwaggerDoc()["driverName"]),
				registry.AgeColumn(),
			},
			Row: func(o runtime.Object) []interface{} { return []interface{}{vac(o).DriverName, registry.Age(o)} },
		}}
}

// validateVolumeAttributesClass is upstream's ValidateVolumeAttributesClass
// minus the metadata: a qualified driver name and at least one parameter.
func validateVolumeAttributesClass(c *storagev1.VolumeAttributesClass) field.ErrorList {
	var errs field.ErrorList
	dp := field.NewPath("driverName")
	if c.DriverName == "" {
		errs = append(errs, field.Required(dp, ""))
	} else {
		for _, msg := range content.IsLabelKey(strings.ToLower(c.DriverName)) {
			errs = append(errs, field.Invalid(dp, c.DriverName, msg))
		}
	}
	return append(errs, validateParameters(c.Parameters, field.NewPath("parameters"))...)
}

// validateParameters is upstream's validateParameters with allowEmpty false.
func validateParameters(params map[string]string, p *field.Path) field.ErrorList {
	if len(params) > maxParameters {
		return field.ErrorList{field.TooLong(p, "", maxParameters)}
	}
	var errs field.ErrorList
	size := 0
	for k, v := range params {
		if k == "" {
			errs = append(errs, field.Invalid(p, k, "field can not be empty."))
		}
		size += len(k) + len(v)
	}
	if size > maxParameterSize {
		errs = append(errs, field.TooLong(p, "", maxParameterSize))
	}
	if len(params) == 0 {
		errs = append(errs, field.Required(p, "must contain at least one key/value pair"))
	}
	return errs
}

func csiStorageCapacity() registry.Def {
	csc := func(o runtime.Object) *storagev1.CSIStorageCapacity { return o.(*storagev1.CSIStorageCapacity) }
	return registry.Def{GroupVersion: storagev1.SchemeGroupVersion, Resource: "csistoragecapacities", Kind: "CSIStorageCapacity",
		Namespaced: true,
		New:        registry.NewObjects[storagev1.CSIStorageCapacity](), NewList: registry.NewObjects[storagev1.CSIStorageCapacityList](),
		Hooks: registry.Hooks{
			Validate: func(o runtime.Object) field.ErrorList { return validateCSIStorageCapacity(csc(o)) },
			ValidateUpdate: func(o, old runtime.Object) field.ErrorList {
				n, p := csc(o), csc(old)
				errs := validateCSIStorageCapacity(n)
				// The inputs of the driver's GetCapacity call are immutable.
				if !apiequality.Semantic.DeepEqual(n.NodeTopology, p.NodeTopology) {
					errs = append(errs, field.Invalid(field.NewPath("nodeTopology"), n.NodeTopology, "field is immutable"))
				}
				if n.StorageClassName != p.StorageClassName {
					errs = append(errs, field.Invalid(field.NewPath("storageClassName"), n.StorageClassName, "field is immutable"))
				}
				return errs
			},
			Columns: []metav1.TableColumnDefinition{
				registry.Col("StorageClassName", "string", 0, storagev1.CSIStorageCapacity{}.SwaggerDoc()["storageClassName"]),
				registry.Col("Capacity", "string", 0, storagev1.CSIStorageCapacity{}.SwaggerDoc()["capacity"]),
			},
			Row: func(o runtime.Object) []interface{} {
				c, capacity := csc(o), "<unset>"
				if c.Capacity != nil {
					capacity = c.Capacity.String()
				}
				return []interface{}{c.StorageClassName, capacity}
			},
		}}
}

// validateCSIStorageCapacity is upstream's ValidateCSIStorageCapacity minus
// the metadata.
func validateCSIStorageCapacity(c *storagev1.CSIStorageCapacity) field.ErrorList {
	errs := metav1validation.ValidateLabelSelector(c.NodeTopology, metav1validation.LabelSelectorValidationOptions{}, field.NewPath("nodeTopology"))
	for _, msg := range apivalidation.NameIsDNSSubdomain(c.StorageClassName, false) {
		errs = append(errs, field.Invalid(field.NewPath("storageClassName"), c.StorageClassName, msg))
	}
	if q := c.Capacity; q != nil && q.Sign() < 0 {
		errs = append(errs, field.Invalid(field.NewPath("capacity"), q.String(), "must be greater than or equal to 0"))
	}
	return errs
}
