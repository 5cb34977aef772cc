package history

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"
	appslisters "k8s.io/client-go/listers/apps/v1"
	"k8s.io/client-go/tools/cache"
)

// storeOnFake is a Store on the fake clientset whose lister is refreshed
// from the clientset before each step (an always-synced cache).
type storeOnFake struct {
	*Store
	cs  *fake.Clientset
	idx cache.Indexer
}

func newStoreOnFake() *storeOnFake {
	cs := fake.NewClientset()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	return &storeOnFake{Store: &Store{Client: cs, Lister: appslisters.NewControllerRevisionLister(idx)}, cs: cs, idx: idx}
}

func (s *storeOnFake) refresh(t *testing.T) {
	t.Helper()
	l, err := s.cs.AppsV1().ControllerRevisions("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]any, 0, len(l.Items))
	for i := range l.Items {
		objs = append(objs, &l.Items[i])
	}
	if err := s.idx.Replace(objs, ""); err != nil {
		t.Fatal(err)
	}
}

func TestSyncNumbersRevisionsAndUndo(t *testing.T) {
	s := newStoreOnFake()
	ctx := context.Background()
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", UID: "u1"}}
	p := Parent{Object: ds, Kind: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), Selector: labels.Everything()}
	step := func(image string, wantRev int64, wantOld int) *appsv1.ControllerRevision {
		t.Helper()
		s.refresh(t)
		p.Template = tpl(image)
		cur, old, err := s.Sync(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if cur.Revision != wantRev || len(old) != wantOld {
			t.Fatalf("%s: revision %d with %d old, want %d with %d", image, cur.Revision, len(old), wantRev, wantOld)
		}
		if cur.Name != "d-"+cur.Labels[HashLabel] || metav1.GetControllerOf(cur).UID != "u1" {
			t.Fatalf("revision %s labels %v", cur.Name, cur.Labels)
		}
		return cur
	}
	first := step("busybox:1.36", 1, 0)
	step("busybox:1.36", 1, 0) // unchanged: same revision
	step("busybox:1.37", 2, 1)
	back := step("busybox:1.36", 3, 1) // undo: revision 1 renumbered
	if back.Name != first.Name {
		t.Fatalf("undo made a new revision %s, want %s renumbered", back.Name, first.Name)
	}
	step("busybox:1.38", 4, 2)
	s.refresh(t)
	owned, _ := s.Owned(p)
	var old []*appsv1.ControllerRevision
	for _, cr := range owned {
		if cr.Revision != 4 {
			old = append(old, cr)
		}
	}
	// limit 0, but the pods still run revision 3's hash: only revision 2 goes.
	if err := s.Truncate(ctx, old, 0, map[string]bool{back.Labels[HashLabel]: true}); err != nil {
		t.Fatal(err)
	}
	l, _ := s.cs.AppsV1().ControllerRevisions("ns").List(ctx, metav1.ListOptions{})
	if len(l.Items) != 2 {
		t.Fatalf("after truncate: %d revisions, want 2", len(l.Items))
	}
}

func TestSyncCollision(t *testing.T) {
	s := newStoreOnFake()
	ctx := context.Background()
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", UID: "u1"}}
	p := Parent{Object: ds, Kind: appsv1.SchemeGroupVersion.WithKind("DaemonSet"), Selector: labels.Everything(), Template: tpl("a")}
	data, _ := Patch(tpl("a"))
	// Someone else's revision squats on the name.
	squat := &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Name: "d-" + Hash(data, nil), Namespace: "ns"}}
	squat.Data.Raw = []byte(`{}`)
	if _, err := s.cs.AppsV1().ControllerRevisions("ns").Create(ctx, squat, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s.refresh(t)
	if _, _, err := s.Sync(ctx, p); err == nil || !isCollision(err) {
		t.Fatalf("Sync = %v, want ErrCollision", err)
	}
	one := int32(1)
	p.CollisionCount = &one
	if cur, _, err := s.Sync(ctx, p); err != nil || cur.Name == squat.Name {
		t.Fatalf("with collisionCount 1: %v %v", cur, err)
	}
}

func isCollision(err error) bool { return errors.Is(err, ErrCollision) }
