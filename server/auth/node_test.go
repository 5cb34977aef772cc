package auth

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// fakeGraph: pods "ns/name" → node; refs "node|resource|ns/name".
type fakeGraph struct {
	pods map[string]string
	refs map[string]bool
	err  error
}

func (g fakeGraph) PodNodeName(_ context.Context, ns, name string) (string, bool, error) {
	n, ok := g.pods[ns+"/"+name]
	return n, ok, g.err
}

func (g fakeGraph) References(_ context.Context, node, res, ns, name string) (bool, error) {
	return g.refs[node+"|"+res+"|"+ns+"/"+name], g.err
}

var n1 = &User{Name: "system:node:n1", Groups: []string{GroupNodes, GroupAuthenticated}}

func res(verb, group, resource, sub, ns, name string) Attributes {
	return Attributes{User: n1, Verb: verb, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name, IsResource: true}
}

func TestNodeRule(t *testing.T) {
	graph := fakeGraph{
		pods: map[string]string{"default/mine": "n1", "default/theirs": "n2"},
		refs: map[string]bool{"n1|serviceaccounts|default/sa1": true, "n1|secrets|default/s1": true, "n1|configmaps|default/c1": true, "n1|persistentvolumeclaims|default/v1": true},
	}
	tests := []struct {
		name string
		a    Attributes
		want Decision
		msg  string // substring of the reason
	}{
		{"list nodes", res("list", "", "nodes", "", "", ""), Allow, ""},
		{"watch pods", res("watch", "", "pods", "", "", ""), Allow, ""},
		{"get service", res("get", "", "services", "", "default", "kubernetes"), Allow, ""},
		{"list endpoints", res("list", "", "endpoints", "", "", ""), Allow, ""},
		{"watch endpointslices", res("watch", "discovery.k8s.io", "endpointslices", "", "", ""), Allow, ""},
		{"get namespace", res("get", "", "namespaces", "", "", "default"), Allow, ""},
		{"get pv", res("get", "", "persistentvolumes", "", "", "pv1"), Allow, ""},
		{"create own node", res("create", "", "nodes", "", "", ""), Allow, ""},
		{"update own node", res("update", "", "nodes", "", "", "n1"), Allow, ""},
		{"patch own node status", res("patch", "", "nodes", "status", "", "n1"), Allow, ""},
		{"get own node", res("get", "", "nodes", "", "", "n1"), Allow, ""},
		{"patch other node", res("patch", "", "nodes", "", "", "n2"), Deny, `node "n1" cannot modify node "n2"`},
		{"update other node status", res("update", "", "nodes", "status", "", "n2"), Deny, `cannot modify node "n2"`},
		{"delete own node", res("delete", "", "nodes", "", "", "n1"), Deny, "cannot delete"},
		{"create lease", res("create", "coordination.k8s.io", "leases", "", "kube-node-lease", ""), Allow, ""},
		{"update own lease", res("update", "coordination.k8s.io", "leases", "", "kube-node-lease", "n1"), Allow, ""},
		{"get own lease", res("get", "coordination.k8s.io", "leases", "", "kube-node-lease", "n1"), Allow, ""},
		{"update other lease", res("update", "coordination.k8s.io", "leases", "", "kube-node-lease", "n2"), Deny, `cannot modify lease "n2"`},
		{"lease elsewhere", res("get", "coordination.k8s.io", "leases", "", "kube-system", "n1"), Deny, "kube-node-lease"},
		{"delete own lease", res("delete", "coordination.k8s.io", "leases", "", "kube-node-lease", "n1"), Deny, "cannot delete"},
		{"status of own pod", res("patch", "", "pods", "status", "default", "mine"), Allow, ""},
		{"status of other pod", res("update", "", "pods", "status", "default", "theirs"), Deny, "spec.nodeName set to itself"},
		{"status of missing pod", res("patch", "", "pods", "status", "default", "gone"), Deny, "spec.nodeName"},
		{"delete own pod", res("delete", "", "pods", "", "default", "mine"), Allow, ""},
		{"delete other pod", res("delete", "", "pods", "", "default", "theirs"), Deny, "delete pods"},
		{"create pod", res("create", "", "pods", "", "default", ""), Deny, "cannot create"},
		{"evict pod", res("create", "", "pods", "eviction", "default", "mine"), Deny, "cannot create"},
		{"update pod spec", res("update", "", "pods", "", "default", "mine"), Deny, "cannot update"},
		{"get referenced secret", res("get", "", "secrets", "", "default", "s1"), Allow, ""},
		{"get other secret", res("get", "", "secrets", "", "default", "s2"), Deny, "no relationship"},
		{"list secrets", res("list", "", "secrets", "", "default", ""), Deny, "one at a time"},
		{"token for its pod's service account", res("create", "", "serviceaccounts", "token", "default", "sa1"), Allow, ""},
		{"token for another service account", res("create", "", "serviceaccounts", "token", "default", "sa2"), Deny, "no relationship"},
		{"get its pod's service account", res("get", "", "serviceaccounts", "", "default", "sa1"), Allow, ""},
		{"update a service account", res("update", "", "serviceaccounts", "", "default", "sa1"), Deny, "cannot update"},
		{"update secret", res("update", "", "secrets", "", "default", "s1"), Deny, "cannot update"},
		{"get referenced configmap", res("get", "", "configmaps", "", "default", "c1"), Allow, ""},
		{"get referenced claim", res("get", "", "persistentvolumeclaims", "", "default", "v1"), Allow, ""},
		{"core event", res("create", "", "events", "", "default", ""), Allow, ""},
		{"events.k8s.io patch", res("patch", "events.k8s.io", "events", "", "default", "e"), Allow, ""},
		{"delete event", res("delete", "", "events", "", "default", "e"), Deny, "cannot delete"},
		{"deployments", res("list", "apps", "deployments", "", "", ""), NoOpinion, `node "n1" cannot list resource "deployments"`},
		{"tokenreviews", res("create", "authentication.k8s.io", "tokenreviews", "", "", ""), Allow, "nodes may create"},
		{"discovery", Attributes{User: n1, Verb: "get", Path: "/apis/apps/v1"}, Allow, ""},
		{"metrics path", Attributes{User: n1, Verb: "get", Path: "/metrics"}, Deny, "cannot get path"},
		{"not a node", Attributes{User: &User{Name: "bob", Groups: []string{GroupNodes}}, Verb: "get", Resource: "nodes", IsResource: true}, NoOpinion, ""},
		{"prefix without group", Attributes{User: &User{Name: "system:node:n1"}, Verb: "get", Resource: "nodes", IsResource: true}, NoOpinion, ""},
		{"empty node name", Attributes{User: &User{Name: "system:node:", Groups: []string{GroupNodes}}, Verb: "get", Resource: "nodes", IsResource: true}, Deny, "unknown node"},
	}
	rule := NodeRule(graph)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, reason, err := rule(context.Background(), tt.a)
			if err != nil {
				t.Fatal(err)
			}
			if d != tt.want || !strings.Contains(reason, tt.msg) {
				t.Errorf("got %v %q, want %v containing %q", d, reason, tt.want, tt.msg)
			}
		})
	}
}

func TestNodeRuleWithoutGraph(t *testing.T) {
	rule := NodeRule(nil)
	for _, a := range []Attributes{
		res("get", "", "secrets", "", "default", "any"),
		res("list", "", "configmaps", "", "", ""),
		res("patch", "", "pods", "status", "default", "any"),
	} {
		if d, _, _ := rule(context.Background(), a); d != Allow {
			t.Errorf("%s: got %v, want the documented degraded Allow", describe(a), d)
		}
	}
}

func TestNodeRuleGraphErrors(t *testing.T) {
	boom := errors.New("boom")
	z := NewAuthorizer(nil, NodeRule(fakeGraph{err: boom}))
	ok, _, err := z.Authorize(context.Background(), res("get", "", "secrets", "", "default", "s1"))
	if ok || !errors.Is(err, boom) {
		t.Fatalf("got allowed=%v err=%v, want a wrapped lookup error", ok, err)
	}
}

func TestNodeRuleInAuthorizer(t *testing.T) {
	z := NewAuthorizer(nil, NodeRule(fakeGraph{}))
	if ok, reason, _ := z.Authorize(context.Background(), res("update", "", "nodes", "", "", "n2")); ok || !strings.Contains(reason, "cannot modify node") {
		t.Errorf("node n1 updating n2: allowed=%v %q", ok, reason)
	}
	admin := Attributes{User: &User{Name: "admin", Groups: []string{GroupMasters}}, Verb: "delete", Resource: "nodes", Name: "n2", IsResource: true}
	if ok, _, _ := z.Authorize(context.Background(), admin); !ok {
		t.Error("masters must still be allowed")
	}
}

func TestPodListerGraph(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"}, Spec: corev1.PodSpec{
		NodeName:           "n1",
		ServiceAccountName: "robot",
		ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "pull"}},
		Volumes: []corev1.Volume{
			{Name: "a", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "vol-secret"}}},
			{Name: "b", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "proj-cm"}}}}}}},
			{Name: "c", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			{Name: "eph", VolumeSource: corev1.VolumeSource{Ephemeral: &corev1.EphemeralVolumeSource{}}},
		},
		Containers: []corev1.Container{{Name: "c",
			Env: []corev1.EnvVar{{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "env-secret"}}}}},
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "envfrom-cm"}}}},
		}},
	}}
	if err := idx.Add(pod); err != nil {
		t.Fatal(err)
	}
	g := NewPodListerGraph(corelisters.NewPodLister(idx), nil)
	tests := []struct {
		node, resource, name string
		want                 bool
	}{
		{"n1", "secrets", "pull", true},
		{"n1", "serviceaccounts", "robot", true},
		{"n1", "serviceaccounts", "default", false},
		{"n1", "secrets", "vol-secret", true},
		{"n1", "secrets", "env-secret", true},
		{"n1", "configmaps", "proj-cm", true},
		{"n1", "configmaps", "envfrom-cm", true},
		{"n1", "persistentvolumeclaims", "data", true},
		{"n1", "persistentvolumeclaims", "web-eph", true},
		{"n1", "secrets", "other", false},
		{"n1", "configmaps", "vol-secret", false},
		{"n2", "secrets", "pull", false},
	}
	for _, tt := range tests {
		got, err := g.References(context.Background(), tt.node, tt.resource, "default", tt.name)
		if err != nil || got != tt.want {
			t.Errorf("References(%s, %s, %s) = %v, %v; want %v", tt.node, tt.resource, tt.name, got, err, tt.want)
		}
	}
	if n, found, err := g.PodNodeName(context.Background(), "default", "web"); n != "n1" || !found || err != nil {
		t.Errorf("PodNodeName(web) = %q %v %v", n, found, err)
	}
	if _, found, err := g.PodNodeName(context.Background(), "default", "nope"); found || err != nil {
		t.Errorf("PodNodeName(nope) found=%v err=%v", found, err)
	}
}

func TestGraphNotReady(t *testing.T) {
	synced := false
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	g := NewPodListerGraph(corelisters.NewPodLister(idx), func() bool { return synced })
	late := &LateGraph{}
	ctx := context.Background()
	if _, _, err := late.PodNodeName(ctx, "default", "p"); !errors.Is(err, ErrGraphNotReady) {
		t.Fatalf("unset LateGraph: %v", err)
	}
	late.Set(g)
	if _, err := late.References(ctx, "n1", "secrets", "default", "s"); !errors.Is(err, ErrGraphNotReady) {
		t.Fatalf("unsynced graph: %v", err)
	}
	synced = true
	if _, found, err := late.PodNodeName(ctx, "default", "p"); found || err != nil {
		t.Fatalf("synced graph: found=%v err=%v", found, err)
	}
}

// TestNodeRuleTrust: nodes read ClusterTrustBundles, create
// PodCertificateRequests (admission checks them) and list or watch only
// their own; status and other verbs get no opinion, as upstream.
func TestNodeRuleTrust(t *testing.T) {
	r := NodeRule(fakeGraph{})
	sel := func(a Attributes, fs string) Attributes { a.FieldSelector = fs; return a }
	const g = "certificates.k8s.io"
	for _, c := range []struct {
		name string
		a    Attributes
		want Decision
	}{
		{"list bundles", res("list", g, "clustertrustbundles", "", "", ""), Allow},
		{"get bundle", res("get", g, "clustertrustbundles", "", "", "b"), Allow},
		{"create bundle", res("create", g, "clustertrustbundles", "", "", ""), NoOpinion},
		{"create request", res("create", g, "podcertificaterequests", "", "ns", ""), Allow},
		{"watch own requests", sel(res("watch", g, "podcertificaterequests", "", "", ""), "spec.nodeName=n1"), Allow},
		{"list own requests with more terms", sel(res("list", g, "podcertificaterequests", "", "", ""), "spec.nodeName=n1,spec.signerName=a/b"), Allow},
		{"list every request", res("list", g, "podcertificaterequests", "", "", ""), NoOpinion},
		{"list another node's", sel(res("list", g, "podcertificaterequests", "", "", ""), "spec.nodeName=n2"), NoOpinion},
		{"update status", res("update", g, "podcertificaterequests", "status", "ns", "r"), NoOpinion},
		{"delete request", res("delete", g, "podcertificaterequests", "", "ns", "r"), NoOpinion},
	} {
		if d, reason, err := r(context.Background(), c.a); d != c.want || err != nil {
			t.Errorf("%s: %v (%s, %v), want %v", c.name, d, reason, err, c.want)
		}
	}
}
