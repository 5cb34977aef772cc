package apiregistration

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// localPriorities are kube-aggregator's priorities of the built-in groups
// (pkg/controlplane/apiserver/aggregator.go); unknown groups get 15000/10.
var localPriorities = map[string][2]int32{
	"":                             {18000, 1},
	"apiregistration.k8s.io":       {18000, 15},
	"apps":                         {17800, 15},
	"events.k8s.io":                {17750, 15},
	"authentication.k8s.io":        {17700, 15},
	"authorization.k8s.io":         {17600, 15},
	"autoscaling":                  {17500, 30},
	"batch":                        {17400, 15},
	"certificates.k8s.io":          {17300, 15},
	"networking.k8s.io":            {17200, 15},
	"policy":                       {17100, 15},
	"rbac.authorization.k8s.io":    {17000, 15},
	"storage.k8s.io":               {16800, 15},
	"apiextensions.k8s.io":         {16700, 15},
	"admissionregistration.k8s.io": {16700, 15},
	"scheduling.k8s.io":            {16600, 15},
	"coordination.k8s.io":          {16500, 15},
	"node.k8s.io":                  {16300, 15},
	"discovery.k8s.io":             {16200, 15},
	"flowcontrol.apiserver.k8s.io": {16100, 21},
	"storagemigration.k8s.io":      {15800, 15},
	// metrics.k8s.io is served by orch itself (server/metricsapi) with the
	// priorities of metrics-server's APIService.
	"metrics.k8s.io": {100, 100},
}

// LocalAPIService is the APIService kube-aggregator keeps for a group/version
// served by the API server itself: no service, Available True "Local".
func LocalAPIService(gv schema.GroupVersion, now metav1.Time) *APIService {
	p, ok := localPriorities[gv.Group]
	if !ok {
		p = [2]int32{15000, 10}
	}
	a := &APIService{
		TypeMeta:   metav1.TypeMeta{APIVersion: SchemeGroupVersion.String(), Kind: "APIService"},
		ObjectMeta: metav1.ObjectMeta{Name: gv.Version + "." + gv.Group, Labels: map[string]string{"kube-aggregator.kubernetes.io/automanaged": "onstart"}},
		Spec:       APIServiceSpec{Group: gv.Group, Version: gv.Version, GroupPriorityMinimum: p[0], VersionPriority: p[1]},
	}
	a.Status.Conditions = []APIServiceCondition{{Type: Available, Status: ConditionTrue, LastTransitionTime: now,
		Reason: "Local", Message: "Local APIServices are always available"}}
	return a
}
