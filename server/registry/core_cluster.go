package registry

import (
	"net"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func namespaceRules() rules {
	return rules{
		nameFn: apivalidation.ValidateNamespaceName,
		defaults: func(obj runtime.Object) {
			ns := obj.(*corev1.Namespace)
			if ns.Name != "" {
				if ns.Labels == nil {
					ns.Labels = map[string]string{}
				}
				ns.Labels[corev1.LabelMetadataName] = ns.Name
			}
			if ns.Status.Phase == "" {
				ns.Status.Phase = corev1.NamespaceActive
			}
		},
		prepareCreate: func(obj runtime.Object) {
			ns := obj.(*corev1.Namespace)
			ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
			for _, f := range ns.Spec.Finalizers {
				if f == corev1.FinalizerKubernetes {
					return
				}
			}
			ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
		},
		prepareUpdate: func(obj, old runtime.Object) {
			// spec.finalizers change only through namespaces/<name>/finalize.
			obj.(*corev1.Namespace).Spec.Finalizers = old.(*corev1.Namespace).Spec.Finalizers
		},
		validate: func(obj runtime.Object) field.ErrorList { return validateNamespace(obj.(*corev1.Namespace)) },
		validateStatus: func(obj, old runtime.Object) field.ErrorList {
			n := obj.(*corev1.Namespace)
			p := field.NewPath("status", "Phase") // sic, as upstream
			switch {
			case n.DeletionTimestamp.IsZero() && n.Status.Phase != corev1.NamespaceActive:
				return field.ErrorList{field.Invalid(p, n.Status.Phase, "may only be 'Active' if `deletionTimestamp` is empty")}
			case !n.DeletionTimestamp.IsZero() && n.Status.Phase != corev1.NamespaceTerminating:
				return field.ErrorList{field.Invalid(p, n.Status.Phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")}
			}
			return nil
		},
		fields: func(obj runtime.Object, set fields.Set) {
			set["status.phase"] = string(obj.(*corev1.Namespace).Status.Phase)
		},
		columns: []metav1.TableColumnDefinition{col("Status", "string", 0, "The status of the namespace"), ageColumn()},
		row: func(obj runtime.Object) []interface{} {
			ns := obj.(*corev1.Namespace)
			return []interface{}{string(ns.Status.Phase), age(ns)}
		},
	}
}

func validateNamespace(ns *corev1.Namespace) field.ErrorList {
	var errs field.ErrorList
	for i, f := range ns.Spec.Finalizers {
		p := field.NewPath("spec", "finalizers").Index(i)
		if !strings.Contains(string(f), "/") && f != corev1.FinalizerKubernetes {
			errs = append(errs, field.Invalid(p, f, "name is neither a standard finalizer name nor is it fully qualified"))
			continue
		}
		errs = append(errs, msgs(f, p, validation.IsQualifiedName(strings.ToLower(string(f))))...)
	}
	return errs
}

func nodeRules() rules {
	return rules{
		keepStatusOnCreate: true,
		defaults: func(obj runtime.Object) {
			st := &obj.(*corev1.Node).Status
			if st.Allocatable == nil && st.Capacity != nil {
				st.Allocatable = st.Capacity.DeepCopy()
			}
		},
		validate: func(obj runtime.Object) field.ErrorList { return validateNode(obj.(*corev1.Node)) },
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*corev1.Node), old.(*corev1.Node)
			errs := validateNode(n)
			if len(o.Spec.PodCIDRs) > 0 && !apiequality.Semantic.DeepEqual(n.Spec.PodCIDRs, o.Spec.PodCIDRs) {
				errs = append(errs, field.Forbidden(field.NewPath("spec", "podCIDRs"), "node updates may not change podCIDR except from \"\" to valid"))
			}
			if o.Spec.ProviderID != "" && n.Spec.ProviderID != o.Spec.ProviderID {
				errs = append(errs, field.Invalid(field.NewPath("spec", "providerID"), nil, "field cannot be modified once set"))
			}
			return errs
		},
		validateStatus: func(obj, _ runtime.Object) field.ErrorList { return validateNode(obj.(*corev1.Node)) },
		fields: func(obj runtime.Object, set fields.Set) {
			set["spec.unschedulable"] = strconv.FormatBool(obj.(*corev1.Node).Spec.Unschedulable)
		},
		columns: nodeColumns,
		row:     func(obj runtime.Object) []interface{} { return nodeRow(obj.(*corev1.Node)) },
	}
}

func validateNode(node *corev1.Node) field.ErrorList {
	spec := field.NewPath("spec")
	var errs field.ErrorList
	errs = append(errs, validateTaints(node.Spec.Taints, spec.Child("taints"))...)
	if node.Spec.PodCIDR != "" && (len(node.Spec.PodCIDRs) == 0 || node.Spec.PodCIDRs[0] != node.Spec.PodCIDR) {
		errs = append(errs, field.Invalid(spec.Child("podCIDRs"), node.Spec.PodCIDRs, "first value must match `podCIDR`"))
	}
	for i, c := range node.Spec.PodCIDRs {
		if _, _, err := net.ParseCIDR(c); err != nil {
			errs = append(errs, field.Invalid(spec.Child("podCIDRs").Index(i), c, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"))
		}
	}
	seen := sets.New[corev1.NodeAddress]()
	for i, a := range node.Status.Addresses {
		if seen.Has(a) {
			errs = append(errs, field.Duplicate(field.NewPath("status", "addresses").Index(i), a))
		}
		seen.Insert(a)
	}
	for _, list := range []struct {
		name string
		rl   corev1.ResourceList
	}{{"capacity", node.Status.Capacity}, {"allocatable", node.Status.Allocatable}} {
		for k, q := range list.rl {
			errs = append(errs, validateResourceQuantity(string(k), q, field.NewPath("status", list.name).Key(string(k)))...)
		}
	}
	return errs
}

func validateTaints(taints []corev1.Taint, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	unique := map[corev1.TaintEffect]sets.Set[string]{}
	for i, t := range taints {
		ip := p.Index(i)
		errs = append(errs, metav1validation.ValidateLabelName(t.Key, ip.Child("key"))...)
		if ms := validation.IsValidLabelValue(t.Value); len(ms) != 0 {
			errs = append(errs, field.Invalid(ip.Child("value"), t.Value, strings.Join(ms, ";")))
		}
		errs = append(errs, oneOf(t.Effect, ip.Child("effect"), corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute)...)
		if unique[t.Effect].Has(t.Key) {
			d := field.Duplicate(ip, t)
			d.Detail = "taints must be unique by key and effect pair"
			errs = append(errs, d)
			continue
		}
		if unique[t.Effect] == nil {
			unique[t.Effect] = sets.New[string]()
		}
		unique[t.Effect].Insert(t.Key)
	}
	return errs
}

var nodeColumns = []metav1.TableColumnDefinition{
	col("Status", "string", 0, "The status of the node"),
	col("Roles", "string", 0, "The roles of the node"),
	ageColumn(),
	col("Version", "string", 0, corev1.NodeSystemInfo{}.SwaggerDoc()["kubeletVersion"]),
	col("Internal-IP", "string", 1, corev1.NodeStatus{}.SwaggerDoc()["addresses"]),
	col("External-IP", "string", 1, corev1.NodeStatus{}.SwaggerDoc()["addresses"]),
	col("OS-Image", "string", 1, corev1.NodeSystemInfo{}.SwaggerDoc()["osImage"]),
	col("Kernel-Version", "string", 1, corev1.NodeSystemInfo{}.SwaggerDoc()["kernelVersion"]),
	col("Container-Runtime", "string", 1, corev1.NodeSystemInfo{}.SwaggerDoc()["containerRuntimeVersion"]),
}

const (
	labelNodeRolePrefix = "node-role.kubernetes.io/"
	nodeLabelRole       = "kubernetes.io/role"
)

// nodeRow ports printNode.
func nodeRow(node *corev1.Node) []interface{} {
	var status []string
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				status = append(status, string(c.Type))
			} else {
				status = append(status, "Not"+string(c.Type))
			}
			break
		}
	}
	if len(status) == 0 {
		status = append(status, "Unknown")
	}
	if node.Spec.Unschedulable {
		status = append(status, "SchedulingDisabled")
	}
	roles := sets.New[string]()
	for k, v := range node.Labels {
		switch {
		case strings.HasPrefix(k, labelNodeRolePrefix):
			if r := strings.TrimPrefix(k, labelNodeRolePrefix); r != "" {
				roles.Insert(r)
			}
		case k == nodeLabelRole && v != "":
			roles.Insert(v)
		}
	}
	info := node.Status.NodeInfo
	unknown := func(s string) string {
		if s == "" {
			return "<unknown>"
		}
		return s
	}
	kernel := unknown(info.KernelVersion)
	if info.Architecture != "" {
		kernel += " (" + info.Architecture + ")"
	}
	return []interface{}{strings.Join(status, ","), orNone(strings.Join(sets.List(roles), ",")), age(node), info.KubeletVersion,
		nodeAddress(node, corev1.NodeInternalIP), nodeAddress(node, corev1.NodeExternalIP),
		unknown(info.OSImage), kernel, unknown(info.ContainerRuntimeVersion)}
}

func nodeAddress(node *corev1.Node, t corev1.NodeAddressType) string {
	for _, a := range node.Status.Addresses {
		if a.Type == t {
			return a.Address
		}
	}
	return "<none>"
}
