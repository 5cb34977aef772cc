// Package resourcequota is kube-controller-manager's resource quota
// controller: it keeps every ResourceQuota's status.hard equal to its
// spec.hard and recounts status.used from the objects of its namespace
// whenever they change (the API server charges creates in the same
// transaction as the object; deletes and terminal pods are given back
// here). Counted: pods (non-terminal, with their compute requests and
// limits), services (and node ports, load balancers), configmaps, secrets,
// persistentvolumeclaims (and requested storage per class),
// replicationcontrollers, resourcequotas, and count/<resource>[.<group>]
// for those, the workload resources and podtemplates.
//
// Recounts read the shared cache, which may not show yet the objects
// admission has just charged: a recount that would lower status.used is
// redone from the API server before it is written (fresh.go), so room is
// never given back twice.
package resourcequota
