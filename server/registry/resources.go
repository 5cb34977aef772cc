package registry

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// def is one row of the resource table.
type def struct {
	gv         schema.GroupVersion
	resource   string
	kind       string
	short      []string
	all        bool // member of the "all" category
	namespaced bool
	hasStatus  bool
	scale      *ScaleAccess
	orphan     bool // OrphanDependents
	subs       map[string]SubresourceStrategy
	newObj     func() runtime.Object
	newList    func() runtime.Object
	rules      rules
	storedAs   *StoredAs
}

// All returns every resource orch serves, with its strategy. cfg zero values
// take DefaultConfig's.
func All(cfg Config) []*Resource {
	cfg = cfg.withDefaults()
	defs := append(coreDefs(cfg), groupDefs()...)
	out := make([]*Resource, 0, len(defs))
	for _, d := range defs {
		out = append(out, d.build())
	}
	return out
}

func (d def) build() *Resource {
	d.rules.namespaced = d.namespaced
	d.rules.hasStatus = d.hasStatus
	r := &Resource{
		GroupVersion:     d.gv,
		Resource:         d.resource,
		Kind:             d.kind,
		SingularName:     lower(d.kind),
		ShortNames:       d.short,
		Namespaced:       d.namespaced,
		HasStatus:        d.hasStatus,
		Scale:            d.scale,
		OrphanDependents: d.orphan,
		Subresources:     d.subs,
		New:              d.newObj,
		NewList:          d.newList,
		StoredAs:         d.storedAs,
	}
	if d.all {
		r.Categories = []string{"all"}
	}
	st := newStrategy(d.rules)
	if d.rules.allocator != nil {
		r.Strategy = &allocatingStrategy{strategy: st, Allocator: d.rules.allocator}
	} else {
		r.Strategy = st
	}
	return r
}

// allocatingStrategy is a Strategy that is also an Allocator (Services).
type allocatingStrategy struct {
	*strategy
	Allocator
}

var (
	_ Strategy  = (*allocatingStrategy)(nil)
	_ Allocator = (*allocatingStrategy)(nil)
)

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func objs[T any, PT interface {
	*T
	runtime.Object
}]() func() runtime.Object {
	return func() runtime.Object { return PT(new(T)) }
}

func coreDefs(cfg Config) []def {
	v1 := corev1.SchemeGroupVersion
	return []def{
		{gv: v1, resource: "namespaces", kind: "Namespace", short: []string{"ns"}, hasStatus: true,
			newObj: objs[corev1.Namespace](), newList: objs[corev1.NamespaceList](), rules: namespaceRules()},
		{gv: v1, resource: "pods", kind: "Pod", short: []string{"po"}, all: true, namespaced: true, hasStatus: true,
			newObj: objs[corev1.Pod](), newList: objs[corev1.PodList](), rules: podRules(),
			subs: podSubresources()},
		{gv: v1, resource: "services", kind: "Service", short: []string{"svc"}, all: true, namespaced: true, hasStatus: true,
			newObj: objs[corev1.Service](), newList: objs[corev1.ServiceList](), rules: serviceRules(cfg)},
		{gv: v1, resource: "endpoints", kind: "Endpoints", short: []string{"ep"}, namespaced: true,
			newObj: objs[corev1.Endpoints](), newList: objs[corev1.EndpointsList](), rules: endpointsRules()},
		{gv: v1, resource: "configmaps", kind: "ConfigMap", short: []string{"cm"}, namespaced: true,
			newObj: objs[corev1.ConfigMap](), newList: objs[corev1.ConfigMapList](), rules: configMapRules()},
		{gv: v1, resource: "secrets", kind: "Secret", namespaced: true,
			newObj: objs[corev1.Secret](), newList: objs[corev1.SecretList](), rules: secretRules()},
		{gv: v1, resource: "nodes", kind: "Node", short: []string{"no"}, hasStatus: true,
			newObj: objs[corev1.Node](), newList: objs[corev1.NodeList](), rules: nodeRules()},
		{gv: v1, resource: "events", kind: "Event", short: []string{"ev"}, namespaced: true,
			newObj: objs[corev1.Event](), newList: objs[corev1.EventList](), rules: eventRules()},
		{gv: v1, resource: "serviceaccounts", kind: "ServiceAccount", short: []string{"sa"}, namespaced: true,
			newObj: objs[corev1.ServiceAccount](), newList: objs[corev1.ServiceAccountList](), rules: serviceAccountRules()},
		{gv: v1, resource: "persistentvolumes", kind: "PersistentVolume", short: []string{"pv"}, hasStatus: true,
			newObj: objs[corev1.PersistentVolume](), newList: objs[corev1.PersistentVolumeList](), rules: pvRules()},
		{gv: v1, resource: "persistentvolumeclaims", kind: "PersistentVolumeClaim", short: []string{"pvc"}, namespaced: true, hasStatus: true,
			newObj: objs[corev1.PersistentVolumeClaim](), newList: objs[corev1.PersistentVolumeClaimList](), rules: pvcRules()},
		{gv: v1, resource: "resourcequotas", kind: "ResourceQuota", short: []string{"quota"}, namespaced: true, hasStatus: true,
			newObj: objs[corev1.ResourceQuota](), newList: objs[corev1.ResourceQuotaList](), rules: resourceQuotaRules()},
		{gv: v1, resource: "limitranges", kind: "LimitRange", short: []string{"limits"}, namespaced: true,
			newObj: objs[corev1.LimitRange](), newList: objs[corev1.LimitRangeList](), rules: limitRangeRules()},
	}
}

func groupDefs() []def {
	apps := appsv1.SchemeGroupVersion
	return []def{
		{gv: apps, resource: "deployments", kind: "Deployment", short: []string{"deploy"}, all: true, namespaced: true, hasStatus: true,
			scale: deploymentScale, newObj: objs[appsv1.Deployment](), newList: objs[appsv1.DeploymentList](), rules: deploymentRules()},
		{gv: apps, resource: "replicasets", kind: "ReplicaSet", short: []string{"rs"}, all: true, namespaced: true, hasStatus: true,
			scale: replicaSetScale, newObj: objs[appsv1.ReplicaSet](), newList: objs[appsv1.ReplicaSetList](), rules: replicaSetRules()},
		{gv: apps, resource: "daemonsets", kind: "DaemonSet", short: []string{"ds"}, all: true, namespaced: true, hasStatus: true,
			newObj: objs[appsv1.DaemonSet](), newList: objs[appsv1.DaemonSetList](), rules: daemonSetRules()},
		{gv: apps, resource: "statefulsets", kind: "StatefulSet", short: []string{"sts"}, all: true, namespaced: true, hasStatus: true,
			scale: statefulSetScale, newObj: objs[appsv1.StatefulSet](), newList: objs[appsv1.StatefulSetList](), rules: statefulSetRules()},
		controllerRevisionDef(),
		{gv: batchv1.SchemeGroupVersion, resource: "jobs", kind: "Job", all: true, namespaced: true, hasStatus: true, orphan: true,
			newObj: objs[batchv1.Job](), newList: objs[batchv1.JobList](), rules: jobRules()},
		{gv: batchv1.SchemeGroupVersion, resource: "cronjobs", kind: "CronJob", short: []string{"cj"}, all: true, namespaced: true, hasStatus: true,
			newObj: objs[batchv1.CronJob](), newList: objs[batchv1.CronJobList](), rules: cronJobRules()},
		{gv: coordinationv1.SchemeGroupVersion, resource: "leases", kind: "Lease", namespaced: true,
			newObj: objs[coordinationv1.Lease](), newList: objs[coordinationv1.LeaseList](), rules: leaseRules()},
		{gv: discoveryv1.SchemeGroupVersion, resource: "endpointslices", kind: "EndpointSlice", namespaced: true,
			newObj: objs[discoveryv1.EndpointSlice](), newList: objs[discoveryv1.EndpointSliceList](), rules: endpointSliceRules()},
		{gv: networkingv1.SchemeGroupVersion, resource: "networkpolicies", kind: "NetworkPolicy", short: []string{"netpol"}, namespaced: true,
			newObj: objs[networkingv1.NetworkPolicy](), newList: objs[networkingv1.NetworkPolicyList](), rules: networkPolicyRules()},
		{gv: networkingv1.SchemeGroupVersion, resource: "ingresses", kind: "Ingress", short: []string{"ing"}, namespaced: true, hasStatus: true,
			newObj: objs[networkingv1.Ingress](), newList: objs[networkingv1.IngressList](), rules: ingressRules()},
		{gv: policyv1.SchemeGroupVersion, resource: "poddisruptionbudgets", kind: "PodDisruptionBudget", short: []string{"pdb"}, namespaced: true, hasStatus: true,
			newObj: objs[policyv1.PodDisruptionBudget](), newList: objs[policyv1.PodDisruptionBudgetList](), rules: pdbRules()},
		{gv: schedulingv1.SchemeGroupVersion, resource: "priorityclasses", kind: "PriorityClass", short: []string{"pc"},
			newObj: objs[schedulingv1.PriorityClass](), newList: objs[schedulingv1.PriorityClassList](), rules: priorityClassRules()},
		{gv: storagev1.SchemeGroupVersion, resource: "storageclasses", kind: "StorageClass", short: []string{"sc"},
			newObj: objs[storagev1.StorageClass](), newList: objs[storagev1.StorageClassList](), rules: storageClassRules()},
		{gv: eventsv1.SchemeGroupVersion, resource: "events", kind: "Event", short: []string{"ev"}, namespaced: true,
			newObj: objs[eventsv1.Event](), newList: objs[eventsv1.EventList](), rules: eventsV1Rules(), storedAs: eventsV1StoredAsCore()},
	}
}
