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

// volGraph adds volume lookups ("name" → node label) to fakeGraph.
type volGraph struct {
	fakeGraph
	vols map[string]string
}

func (g volGraph) VolumeNode(_ context.Context, name string) (string, bool, error) {
	n, ok := g.vols[name]
	return n, ok, g.err
}

func TestNodeRuleVolumes(t *testing.T) {
	g := volGraph{vols: map[string]string{"mine": "n1", "theirs": "n2", "unlabelled": ""}}
	tests := []struct {
		name string
		a    Attributes
		want Decision
		msg  string
	}{
		{"list", res("list", "", "persistentvolumes", "", "", ""), Allow, ""},
		{"watch", res("watch", "", "persistentvolumes", "", "", ""), Allow, ""},
		{"get", res("get", "", "persistentvolumes", "", "", "theirs"), Allow, ""},
		{"update own", res("update", "", "persistentvolumes", "", "", "mine"), Allow, ""},
		{"patch own", res("patch", "", "persistentvolumes", "", "", "mine"), Allow, ""},
		{"update other node's", res("update", "", "persistentvolumes", "", "", "theirs"), Deny, "labelled orch.io/local-path-node=n1"},
		{"update unlabelled", res("update", "", "persistentvolumes", "", "", "unlabelled"), Deny, "labelled"},
		{"update missing", res("update", "", "persistentvolumes", "", "", "gone"), Deny, "labelled"},
		{"own status", res("update", "", "persistentvolumes", "status", "", "mine"), Deny, "cannot update"},
		{"delete own", res("delete", "", "persistentvolumes", "", "", "mine"), Deny, "cannot delete"},
		{"create", res("create", "", "persistentvolumes", "", "", ""), Deny, "cannot create"},
	}
	rule := NodeRule(g)
	for _, tt := range tests {
		d, reason, err := rule(context.Background(), tt.a)
		if err != nil || d != tt.want || !strings.Contains(reason, tt.msg) {
			t.Errorf("%s: %v %q %v; want %v containing %q", tt.name, d, reason, err, tt.want, tt.msg)
		}
	}
	if d, _, _ := NodeRule(fakeGraph{})(context.Background(), res("update", "", "persistentvolumes", "", "", "mine")); d != Deny {
		t.Error("a graph without volume lookups must deny volume writes")
	}
	g.err = errors.New("boom")
	if d, _, err := NodeRule(g)(context.Background(), res("patch", "", "persistentvolumes", "", "", "mine")); d != NoOpinion || err == nil {
		t.Errorf("graph error: %v %v", d, err)
	}
}

func TestPodListerGraphVolumeNode(t *testing.T) {
	pvIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = pvIdx.Add(&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv1", Labels: map[string]string{VolumeNodeLabel: "n1"}}})
	g := NewPodListerGraph(corelisters.NewPodLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})), nil)
	if _, found, err := g.VolumeNode(context.Background(), "pv1"); found || err != nil {
		t.Fatalf("no volume lister: found=%v err=%v", found, err)
	}
	g.volumes = corelisters.NewPersistentVolumeLister(pvIdx)
	late := &LateGraph{}
	late.Set(g)
	if n, found, err := late.VolumeNode(context.Background(), "pv1"); n != "n1" || !found || err != nil {
		t.Errorf("VolumeNode(pv1) = %q %v %v", n, found, err)
	}
	if _, found, err := late.VolumeNode(context.Background(), "nope"); found || err != nil {
		t.Errorf("VolumeNode(nope) found=%v err=%v", found, err)
	}
}
