package auth

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/fields"
)

// nodes: read all; create (the name in the body is not visible here); get,
// update and patch of its own Node and nodes/status only.
func (r *nodeRule) nodes(node string, a Attributes) (Decision, string, error) {
	switch {
	case a.Subresource == "" && isRead(a.Verb):
		return Allow, "nodes may read nodes", nil
	case a.Subresource == "" && a.Verb == "create":
		return Allow, "nodes may register themselves", nil
	case a.Subresource != "" && a.Subresource != "status":
		return Deny, fmt.Sprintf("node %q cannot %s", node, describe(a)), nil
	case !slices.Contains([]string{"get", "update", "patch"}, a.Verb):
		return Deny, fmt.Sprintf("node %q cannot %s", node, describe(a)), nil
	case a.Name != node:
		return Deny, fmt.Sprintf("node %q cannot modify node %q", node, a.Name), nil
	}
	return Allow, "a node may update its own Node", nil
}

// pods: read all; update/patch pods/status and delete only for pods bound
// to this node.
func (r *nodeRule) pods(ctx context.Context, node string, a Attributes) (Decision, string, error) {
	switch {
	case a.Subresource == "" && isRead(a.Verb):
		return Allow, "nodes may read pods", nil
	case a.Subresource == "status" && (a.Verb == "update" || a.Verb == "patch"):
		return r.boundPod(ctx, node, a, "update pod status")
	case a.Subresource == "" && a.Verb == "delete":
		return r.boundPod(ctx, node, a, "delete pods")
	}
	return Deny, fmt.Sprintf("node %q cannot %s", node, describe(a)), nil
}

func (r *nodeRule) boundPod(ctx context.Context, node string, a Attributes, what string) (Decision, string, error) {
	if a.Name == "" {
		return Deny, fmt.Sprintf("node %q can only %s of a named pod", node, what), nil
	}
	if r.graph == nil {
		return Allow, "nodes may " + what + " (no pod graph: spec.nodeName not checked)", nil
	}
	bound, found, err := r.graph.PodNodeName(ctx, a.Namespace, a.Name)
	if err != nil {
		return NoOpinion, "", fmt.Errorf("looking up pod %s/%s: %w", a.Namespace, a.Name, err)
	}
	if !found || bound != node {
		return Deny, fmt.Sprintf("node %q can only %s for pods with spec.nodeName set to itself", node, what), nil
	}
	return Allow, "pod is bound to node " + node, nil
}

// referenced: secrets, configmaps and claims can be read one at a time by
// name when a pod bound to the node references them.
func (r *nodeRule) referenced(ctx context.Context, node string, a Attributes) (Decision, string, error) {
	if a.Subresource != "" || !isRead(a.Verb) {
		return Deny, fmt.Sprintf("node %q cannot %s", node, describe(a)), nil
	}
	if r.graph == nil {
		return Allow, "nodes may read " + a.Resource + " (no pod graph: references not checked)", nil
	}
	if a.Name == "" {
		return Deny, fmt.Sprintf("node %q cannot %s %s: only %s referenced by its pods can be read, one at a time by name",
			node, a.Verb, a.Resource, a.Resource), nil
	}
	ok, err := r.graph.References(ctx, node, a.Resource, a.Namespace, a.Name)
	if err != nil {
		return NoOpinion, "", fmt.Errorf("looking up references to %s %s/%s: %w", a.Resource, a.Namespace, a.Name, err)
	}
	if !ok {
		return Deny, fmt.Sprintf("no relationship found between node %q and this object", node), nil
	}
	return Allow, "referenced by a pod bound to node " + node, nil
}

// serviceAccounts: a node may read the ServiceAccounts of its pods and
// request their tokens (projected serviceAccountToken volumes).
func (r *nodeRule) serviceAccounts(ctx context.Context, node string, a Attributes) (Decision, string, error) {
	if a.Subresource == "token" && a.Verb == "create" {
		b := a
		b.Subresource, b.Verb = "", "get"
		return r.referenced(ctx, node, b)
	}
	return r.referenced(ctx, node, a)
}

// leases: a node's own Lease in kube-node-lease.
func (r *nodeRule) leases(node string, a Attributes) (Decision, string, error) {
	if a.Namespace != NodeLeaseNamespace || a.Subresource != "" {
		return Deny, fmt.Sprintf("node %q can only access leases in the %s namespace", node, NodeLeaseNamespace), nil
	}
	switch {
	case a.Verb == "create" && a.Name == "":
		return Allow, "nodes may create their Lease", nil
	case !slices.Contains([]string{"create", "get", "update", "patch"}, a.Verb):
		return Deny, fmt.Sprintf("node %q cannot %s", node, describe(a)), nil
	case a.Name != node:
		return Deny, fmt.Sprintf("node %q cannot modify lease %q", node, a.Name), nil
	}
	return Allow, "a node may renew its own Lease", nil
}

// volumes: read all; update and patch (no subresource) of a volume labelled
// with this node only (the local-path clean-up finalizer), checked against
// the stored object through the graph.
func (r *nodeRule) volumes(ctx context.Context, node string, a Attributes) (Decision, string, error) {
	if a.Subresource == "" && isRead(a.Verb) {
		return Allow, "nodes may read persistentvolumes", nil
	}
	if a.Subresource != "" || (a.Verb != "update" && a.Verb != "patch") || a.Name == "" {
		return Deny, fmt.Sprintf("node %q cannot %s", node, describe(a)), nil
	}
	vg, ok := r.graph.(VolumeGraph)
	if !ok {
		return Deny, fmt.Sprintf("node %q cannot %s (no volume graph)", node, describe(a)), nil
	}
	owner, found, err := vg.VolumeNode(ctx, a.Name)
	if err != nil {
		return NoOpinion, "", fmt.Errorf("looking up persistentvolume %s: %w", a.Name, err)
	}
	if !found || owner != node {
		return Deny, fmt.Sprintf("node %q can only update persistentvolumes labelled %s=%s", node, VolumeNodeLabel, node), nil
	}
	return Allow, "the volume's data lives on node " + node, nil
}

// podCertificateRequests: a node may create requests (NodeRestriction
// admission checks what for) and list or watch those whose spec.nodeName
// is itself; nothing else, the status least of all (that is the
// signer's). Like upstream, what is not allowed gets no opinion.
func podCertificateRequests(node string, a Attributes) (Decision, string, error) {
	switch {
	case a.Subresource != "":
		return NoOpinion, "nodes may not access the status subresource of PodCertificateRequests", nil
	case a.Verb == "create":
		return Allow, "nodes may request pod certificates (checked by admission)", nil
	case a.Verb == "list" || a.Verb == "watch":
		if sel, err := fields.ParseSelector(a.FieldSelector); err == nil {
			if v, ok := sel.RequiresExactMatch("spec.nodeName"); ok && v == node {
				return Allow, "nodes may read their own podcertificaterequests", nil
			}
		}
		return NoOpinion, "can only list/watch podcertificaterequests with nodeName field selector", nil
	}
	return NoOpinion, fmt.Sprintf("nodes may not %s podcertificaterequests", a.Verb), nil
}
