package auth

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// NodeLeaseNamespace holds the nodes' heartbeat Leases.
const NodeLeaseNamespace = "kube-node-lease"

// NodeGraph answers what the node rule must know about pods, like the graph
// behind kube's Node authorizer.
type NodeGraph interface {
	// PodNodeName returns spec.nodeName of a pod; found is false when the
	// pod does not exist.
	PodNodeName(ctx context.Context, namespace, name string) (nodeName string, found bool, err error)
	// References reports whether a pod bound to node references the object
	// (resource is "secrets", "configmaps" or "persistentvolumeclaims").
	References(ctx context.Context, node, resource, namespace, name string) (bool, error)
}

// VolumeNodeLabel on a PersistentVolume names the node that holds its data
// (agent/localpath.NodeLabel): that node's agent may update the volume to
// drop its clean-up finalizer.
const VolumeNodeLabel = "orch.io/local-path-node"

// VolumeGraph may also be implemented by the NodeGraph: it answers which
// node a PersistentVolume's data lives on (label VolumeNodeLabel).
type VolumeGraph interface {
	VolumeNode(ctx context.Context, name string) (nodeName string, found bool, err error)
}

// nodeRule holds the state of NodeRule.
type nodeRule struct{ graph NodeGraph }

// NodeRule is kube's Node authorizer plus the NodeRestriction essentials
// for users system:node:<name> in group system:nodes. Other users get no
// opinion. With a nil graph, secrets, configmaps and claims are readable by
// every node and pod status updates and deletions are not checked against
// spec.nodeName (a degraded mode; pass a graph).
func NodeRule(graph NodeGraph) Rule {
	r := &nodeRule{graph: graph}
	return r.decide
}

func (r *nodeRule) decide(ctx context.Context, a Attributes) (Decision, string, error) {
	node, ok := nodeName(a.User)
	if !ok {
		return NoOpinion, "", nil
	}
	if node == "" {
		return Deny, "unknown node: the user name must be system:node:<node name>", nil
	}
	if !a.IsResource {
		return r.nonResource(node, a)
	}
	switch a.APIGroup + "/" + a.Resource {
	case "/nodes":
		return r.nodes(node, a)
	case "/pods":
		return r.pods(ctx, node, a)
	case "/secrets", "/configmaps", "/persistentvolumeclaims":
		return r.referenced(ctx, node, a)
	case "/serviceaccounts":
		return r.serviceAccounts(ctx, node, a)
	case "/persistentvolumes":
		return r.volumes(ctx, node, a)
	case "/services", "/endpoints", "/namespaces", "discovery.k8s.io/endpointslices",
		// the agent enforces NetworkPolicy and serves Ingresses (agent/ingress)
		"networking.k8s.io/networkpolicies", "networking.k8s.io/ingresses", "networking.k8s.io/ingressclasses":
		return readOnly(node, a)
	case "coordination.k8s.io/leases":
		return r.leases(node, a)
	case "/events", "events.k8s.io/events":
		return events(node, a)
	case "certificates.k8s.io/podcertificaterequests":
		return podCertificateRequests(node, a)
	}
	return nodeExtras(node, a)
}

// nodeExtraRules are what upstream's system:node rules grant beyond the
// graph: the reviews a kubelet delegates its own API's authentication and
// authorization to, its certificate requests, and the cluster-wide objects
// it reads.
var nodeExtraRules = map[string][]string{
	"authentication.k8s.io/tokenreviews":             {"create"},
	"authorization.k8s.io/subjectaccessreviews":      {"create"},
	"authorization.k8s.io/localsubjectaccessreviews": {"create"},
	"certificates.k8s.io/certificatesigningrequests": {"create", "get", "list", "watch"},
	"certificates.k8s.io/clustertrustbundles":        readVerbs, // clusterTrustBundle projections
	"node.k8s.io/runtimeclasses":                     readVerbs,
	"storage.k8s.io/csidrivers":                      readVerbs,
	"storage.k8s.io/storageclasses":                  readVerbs,
	"storage.k8s.io/csinodes":                        {"create", "get", "list", "watch", "update", "patch", "delete"},
}

// nodeExtras allows nodeExtraRules; anything else gets no opinion, so RBAC
// may still grant it (upstream's Node authorizer does the same).
func nodeExtras(node string, a Attributes) (Decision, string, error) {
	if verbs, ok := nodeExtraRules[a.APIGroup+"/"+a.Resource]; ok && a.Subresource == "" && slices.Contains(verbs, a.Verb) {
		return Allow, "nodes may " + a.Verb + " " + a.Resource, nil
	}
	return NoOpinion, fmt.Sprintf("node %q cannot %s", node, describe(a)), nil
}

// nodeName returns the node of a system:node:<name> user in system:nodes.
func nodeName(u *User) (string, bool) {
	if u == nil || !strings.HasPrefix(u.Name, NodeUserPrefix) || !slices.Contains(u.Groups, GroupNodes) {
		return "", false
	}
	return strings.TrimPrefix(u.Name, NodeUserPrefix), true
}

var readVerbs = []string{"get", "list", "watch"}

func isRead(verb string) bool { return slices.Contains(readVerbs, verb) }

// nonResource allows the discovery, version and health paths clients read.
func (r *nodeRule) nonResource(node string, a Attributes) (Decision, string, error) {
	if a.Verb == "get" || a.Verb == "head" {
		for _, p := range []string{"/api", "/apis", "/version", "/healthz", "/livez", "/readyz", "/openapi"} {
			if a.Path == p || strings.HasPrefix(a.Path, p+"/") {
				return Allow, "nodes may read " + p, nil
			}
		}
	}
	return Deny, fmt.Sprintf("node %q cannot %s", node, describe(a)), nil
}

func readOnly(node string, a Attributes) (Decision, string, error) {
	if a.Subresource == "" && isRead(a.Verb) {
		return Allow, "nodes may read " + a.Resource, nil
	}
	return Deny, fmt.Sprintf("node %q cannot %s", node, describe(a)), nil
}

func events(node string, a Attributes) (Decision, string, error) {
	if slices.Contains([]string{"create", "update", "patch"}, a.Verb) && a.Subresource == "" {
		return Allow, "nodes may record events", nil
	}
	return Deny, fmt.Sprintf("node %q cannot %s", node, describe(a)), nil
}
