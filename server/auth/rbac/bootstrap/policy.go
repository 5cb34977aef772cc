package bootstrap

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Verb sets of the policy.
var (
	write     = []string{"create", "update", "patch", "delete", "deletecollection"}
	readWrite = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}
	read      = []string{"get", "list", "watch"}
)

// Aggregation labels of the user-facing roles.
const (
	AggregateToAdmin = "rbac.authorization.k8s.io/aggregate-to-admin"
	AggregateToEdit  = "rbac.authorization.k8s.io/aggregate-to-edit"
	AggregateToView  = "rbac.authorization.k8s.io/aggregate-to-view"
)

// rule is a resource rule: verbs on resources of one API group.
func rule(verbs []string, group string, resources ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, APIGroups: []string{group}, Resources: resources}
}

// named is rule limited to resourceNames.
func named(verbs []string, group, resource string, names ...string) rbacv1.PolicyRule {
	r := rule(verbs, group, resource)
	r.ResourceNames = names
	return r
}

// urls is a non-resource rule.
func urls(verbs []string, paths ...string) rbacv1.PolicyRule {
	return rbacv1.PolicyRule{Verbs: verbs, NonResourceURLs: paths}
}

func v(verbs ...string) []string { return verbs }

func clusterRole(name string, labels map[string]string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
	return rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Rules: rules}
}

func aggregated(name string, labels map[string]string, selectorLabel string) rbacv1.ClusterRole {
	r := clusterRole(name, labels)
	r.AggregationRule = &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{
		{MatchLabels: map[string]string{selectorLabel: "true"}},
	}}
	return r
}

func label(k string) map[string]string { return map[string]string{k: "true"} }

// ClusterRoles returns the default ClusterRoles (without the bootstrapping
// label and autoupdate annotation; Objects adds them).
func ClusterRoles() []rbacv1.ClusterRole {
	return append(append(userRoles(), systemRoles()...), approverRoles()...)
}

// userRoles are cluster-admin and the aggregated admin/edit/view.
func userRoles() []rbacv1.ClusterRole {
	return []rbacv1.ClusterRole{
		clusterRole("cluster-admin", nil,
			rule(v("*"), "*", "*"),
			urls(v("*"), "*")),
		aggregated("admin", nil, AggregateToAdmin),
		aggregated("edit", label(AggregateToAdmin), AggregateToEdit),
		aggregated("view", label(AggregateToEdit), AggregateToView),
		clusterRole("system:aggregate-to-admin", label(AggregateToAdmin),
			rule(v("create"), "authorization.k8s.io", "localsubjectaccessreviews"),
			rule(readWrite, "rbac.authorization.k8s.io", "roles", "rolebindings")),
		clusterRole("system:aggregate-to-edit", label(AggregateToEdit), editRules()...),
		clusterRole("system:aggregate-to-view", label(AggregateToView), viewRules()...),
	}
}

func editRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		rule(read, "", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy"),
		rule(v("impersonate"), "", "serviceaccounts"),
		rule(write, "", "pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"),
		rule(write, "", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
			"services", "services/proxy", "persistentvolumeclaims", "configmaps", "secrets"),
		rule(write, "apps", "statefulsets", "statefulsets/scale", "daemonsets", "deployments", "deployments/scale",
			"deployments/rollback", "replicasets", "replicasets/scale"),
		rule(write, "autoscaling", "horizontalpodautoscalers"),
		rule(write, "batch", "jobs", "cronjobs"),
		rule(write, "extensions", "daemonsets", "deployments", "deployments/scale", "deployments/rollback", "ingresses",
			"replicasets", "replicasets/scale", "replicationcontrollers/scale", "networkpolicies"),
		rule(write, "policy", "poddisruptionbudgets"),
		rule(write, "networking.k8s.io", "networkpolicies", "ingresses"),
		rule(write, "resource.k8s.io", "resourceclaims", "resourceclaimtemplates"),
	}
}

func viewRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		rule(read, "", "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
			"services", "services/status", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status", "configmaps"),
		rule(read, "", "limitranges", "resourcequotas", "bindings", "events", "pods/status", "resourcequotas/status",
			"namespaces/status", "replicationcontrollers/status", "pods/log"),
		rule(read, "", "namespaces"),
		rule(read, "discovery.k8s.io", "endpointslices"),
		rule(read, "apps", "controllerrevisions", "statefulsets", "statefulsets/status", "statefulsets/scale",
			"daemonsets", "daemonsets/status", "deployments", "deployments/status", "deployments/scale",
			"replicasets", "replicasets/status", "replicasets/scale"),
		rule(read, "autoscaling", "horizontalpodautoscalers", "horizontalpodautoscalers/status"),
		rule(read, "batch", "jobs", "cronjobs", "cronjobs/status", "jobs/status"),
		rule(read, "extensions", "daemonsets", "daemonsets/status", "deployments", "deployments/scale", "deployments/status",
			"ingresses", "ingresses/status", "replicasets", "replicasets/scale", "replicasets/status",
			"replicationcontrollers/scale", "networkpolicies"),
		rule(read, "policy", "poddisruptionbudgets", "poddisruptionbudgets/status"),
		rule(read, "networking.k8s.io", "networkpolicies", "ingresses", "ingresses/status"),
		rule(read, "resource.k8s.io", "resourceclaims", "resourceclaims/status", "resourceclaimtemplates"),
	}
}

// systemRoles are the system:* roles components and charts bind to.
func systemRoles() []rbacv1.ClusterRole {
	events := rule(v("create", "update", "patch"), "", "events")
	eventsV1 := rule(v("create", "update", "patch"), "events.k8s.io", "events")
	return []rbacv1.ClusterRole{
		clusterRole("system:discovery", nil, urls(v("get"), "/livez", "/readyz", "/healthz", "/version", "/version/",
			"/openapi", "/openapi/*", "/api", "/api/*", "/apis", "/apis/*")),
		clusterRole("system:public-info-viewer", nil, urls(v("get"), "/livez", "/readyz", "/healthz", "/version", "/version/")),
		clusterRole("system:basic-user", nil,
			rule(v("create"), "authorization.k8s.io", "selfsubjectaccessreviews", "selfsubjectrulesreviews"),
			rule(v("create"), "authentication.k8s.io", "selfsubjectreviews")),
		clusterRole("system:service-account-issuer-discovery", nil,
			urls(v("get"), "/.well-known/openid-configuration", "/.well-known/openid-configuration/", "/openid/v1/jwks", "/openid/v1/jwks/")),
		clusterRole("system:monitoring", nil, urls(v("get"), "/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz",
			"/livez/*", "/readyz/*", "/healthz/*")),
		clusterRole("system:auth-delegator", nil,
			rule(v("create"), "authentication.k8s.io", "tokenreviews"),
			rule(v("create"), "authorization.k8s.io", "subjectaccessreviews")),
		clusterRole("system:heapster", nil,
			rule(read, "", "events", "pods", "nodes", "namespaces"),
			rule(read, "extensions", "deployments")),
		clusterRole("system:node", nil, nodeRules()...),
		clusterRole("system:node-proxier", nil,
			rule(v("list", "watch"), "", "services", "endpoints"),
			rule(read, "", "nodes"),
			rule(v("list", "watch"), "networking.k8s.io", "servicecidrs"),
			rule(v("list", "watch"), "discovery.k8s.io", "endpointslices"),
			events, eventsV1),
		clusterRole("system:node-problem-detector", nil,
			rule(v("get"), "", "nodes"), rule(v("patch"), "", "nodes/status"), events, eventsV1),
		clusterRole("system:kubelet-api-admin", nil,
			rule(read, "", "nodes"), rule(v("proxy"), "", "nodes"),
			rule(v("*"), "", "nodes/proxy", "nodes/metrics", "nodes/spec", "nodes/stats", "nodes/log", "nodes/pods", "nodes/healthz", "nodes/configz")),
		clusterRole("system:node-bootstrapper", nil,
			rule(v("create", "get", "list", "watch"), "certificates.k8s.io", "certificatesigningrequests")),
		clusterRole("system:kube-aggregator", nil, rule(read, "", "services", "endpoints")),
		clusterRole("system:cluster-trust-bundle-discovery", nil, rule(read, "certificates.k8s.io", "clustertrustbundles")),
		clusterRole("system:kube-dns", nil, rule(v("list", "watch"), "", "endpoints", "services")),
		clusterRole("system:persistent-volume-provisioner", nil,
			rule(v("get", "list", "watch", "create", "delete"), "", "persistentvolumes"),
			rule(v("get", "list", "watch", "update"), "", "persistentvolumeclaims"),
			rule(read, "storage.k8s.io", "storageclasses"),
			rule(v("watch"), "", "events"), events, eventsV1),
		clusterRole("system:volume-scheduler", nil,
			rule(v("get", "list", "watch", "update", "patch"), "", "persistentvolumes"),
			rule(read, "storage.k8s.io", "storageclasses"),
			rule(v("get", "list", "watch", "update", "patch"), "", "persistentvolumeclaims")),
	}
}

// nodeRules are what a kubelet may do (upstream's NodeRules; orch's node
// authorizer enforces the per-node limits on top).
func nodeRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		rule(v("create"), "authentication.k8s.io", "tokenreviews"),
		rule(v("create"), "authorization.k8s.io", "subjectaccessreviews", "localsubjectaccessreviews"),
		rule(read, "", "services"),
		rule(v("create", "get", "list", "watch"), "", "nodes"),
		rule(v("update", "patch"), "", "nodes/status"),
		rule(v("update", "patch"), "", "nodes"),
		rule(v("create", "update", "patch"), "", "events"),
		rule(read, "", "pods"),
		rule(v("create", "delete"), "", "pods"),
		rule(v("update", "patch"), "", "pods/status"),
		rule(v("create"), "", "pods/eviction"),
		rule(read, "", "configmaps", "secrets"),
		rule(v("get"), "", "persistentvolumeclaims", "persistentvolumes"),
		rule(v("get"), "", "endpoints"),
		rule(v("create", "get", "list", "watch"), "certificates.k8s.io", "certificatesigningrequests"),
		rule(read, "certificates.k8s.io", "clustertrustbundles"),
		rule(v("get", "list", "watch", "create"), "certificates.k8s.io", "podcertificaterequests"),
		rule(v("get", "create", "update", "patch", "delete"), "coordination.k8s.io", "leases"),
		rule(v("get"), "storage.k8s.io", "volumeattachments"),
		rule(v("create"), "", "serviceaccounts/token"),
		rule(v("get", "update", "patch"), "", "persistentvolumeclaims/status"),
		rule(read, "storage.k8s.io", "csidrivers"),
		rule(v("get", "create", "update", "patch", "delete"), "storage.k8s.io", "csinodes"),
		rule(read, "node.k8s.io", "runtimeclasses"),
	}
}

// approverRoles let their holders approve CSRs for one signer each.
func approverRoles() []rbacv1.ClusterRole {
	approve := func(name, signer string) rbacv1.ClusterRole {
		return clusterRole("system:certificates.k8s.io:"+name, nil, named(v("approve"), "certificates.k8s.io", "signers", signer))
	}
	return []rbacv1.ClusterRole{
		approve("legacy-unknown-approver", "kubernetes.io/legacy-unknown"),
		approve("kubelet-serving-approver", "kubernetes.io/kubelet-serving"),
		approve("kube-apiserver-client-approver", "kubernetes.io/kube-apiserver-client"),
		approve("kube-apiserver-client-kubelet-approver", "kubernetes.io/kube-apiserver-client-kubelet"),
		clusterRole("system:certificates.k8s.io:certificatesigningrequests:nodeclient", nil,
			rule(v("create"), "certificates.k8s.io", "certificatesigningrequests/nodeclient")),
		clusterRole("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", nil,
			rule(v("create"), "certificates.k8s.io", "certificatesigningrequests/selfnodeclient")),
	}
}

func clusterBinding(role string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
	return rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   subjects,
	}
}

func group(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: name}
}

func user(name string) rbacv1.Subject {
	return rbacv1.Subject{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}
}

// ClusterRoleBindings returns the default ClusterRoleBindings.
func ClusterRoleBindings() []rbacv1.ClusterRoleBinding {
	return []rbacv1.ClusterRoleBinding{
		clusterBinding("cluster-admin", group("system:masters")),
		clusterBinding("system:discovery", group("system:authenticated")),
		clusterBinding("system:basic-user", group("system:authenticated")),
		clusterBinding("system:public-info-viewer", group("system:authenticated"), group("system:unauthenticated")),
		clusterBinding("system:service-account-issuer-discovery", group("system:serviceaccounts")),
		clusterBinding("system:cluster-trust-bundle-discovery", group("system:serviceaccounts")),
		clusterBinding("system:monitoring", group("system:monitoring")),
		clusterBinding("system:kube-dns", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "kube-system", Name: "kube-dns"}),
		clusterBinding("system:node-proxier", user("system:kube-proxy")),
		clusterBinding("system:volume-scheduler", user("system:kube-scheduler")),
		// Upstream keeps this binding with no subjects: the Node authorizer
		// grants nodes what they need.
		clusterBinding("system:node"),
	}
}

// ExtensionAuthReader is the Role in kube-system that lets extension API
// servers read the extension-apiserver-authentication ConfigMap.
const ExtensionAuthReader = "extension-apiserver-authentication-reader"

// NamespaceRoles returns the default Roles by namespace.
func NamespaceRoles() []rbacv1.Role {
	return []rbacv1.Role{{
		ObjectMeta: metav1.ObjectMeta{Name: ExtensionAuthReader, Namespace: metav1.NamespaceSystem},
		Rules:      []rbacv1.PolicyRule{named(read, "", "configmaps", "extension-apiserver-authentication")},
	}}
}

// NamespaceRoleBindings returns the default RoleBindings by namespace.
func NamespaceRoleBindings() []rbacv1.RoleBinding {
	return []rbacv1.RoleBinding{{
		ObjectMeta: metav1.ObjectMeta{Name: "system::" + ExtensionAuthReader, Namespace: metav1.NamespaceSystem},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: ExtensionAuthReader},
		Subjects:   []rbacv1.Subject{user("system:kube-controller-manager"), user("system:kube-scheduler")},
	}}
}
