package integration

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("LabelSelectors", testLabelSelectors)
	register("FieldSelectors", testFieldSelectors)
	register("Pagination", testPagination)
}

func cmNames(items []corev1.ConfigMap) []string {
	var out []string
	for _, i := range items {
		out = append(out, i.Name)
	}
	slices.Sort(out)
	return out
}

func testLabelSelectors(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	for name, labels := range map[string]map[string]string{
		"a": {"app": "web", "tier": "front"},
		"b": {"app": "web", "tier": "back"},
		"c": {"app": "db"},
		"d": nil,
	} {
		o := cm(ns, name, nil)
		o.Labels = labels
		_, err := c.Create(ctx, o, metav1.CreateOptions{})
		must(t, err, "create %s", name)
	}
	for sel, want := range map[string][]string{
		"app=web":            {"a", "b"},
		"app!=web":           {"c", "d"},
		"app in (web,db)":    {"a", "b", "c"},
		"app notin (web)":    {"c", "d"},
		"tier":               {"a", "b"},
		"!tier":              {"c", "d"},
		"app=web,tier=front": {"a"},
		"app=none":           nil,
	} {
		l, err := c.List(ctx, metav1.ListOptions{LabelSelector: sel})
		must(t, err, "list -l %s", sel)
		if got := cmNames(l.Items); !slices.Equal(got, want) {
			t.Errorf("label selector %q: got %v, want %v", sel, got, want)
		}
	}
	_, err := c.List(ctx, metav1.ListOptions{LabelSelector: "app in (web"})
	wantCode(t, err, 400, "malformed label selector")
}

func testFieldSelectors(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	pods := cs.CoreV1().Pods(ns)
	// Another scheduler's pods: p2 must stay unbound even when other tests
	// running in parallel create Nodes orch's scheduler could bind it to.
	for i, node := range []string{"node-a", "node-b", ""} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", i)},
			Spec: corev1.PodSpec{NodeName: node, SchedulerName: "not-orch",
				Containers: []corev1.Container{{Name: "c", Image: "nginx:1.25"}}},
		}
		_, err := pods.Create(ctx, p, metav1.CreateOptions{})
		must(t, err, "create pod %d", i)
	}
	p1, err := pods.Get(ctx, "p1", metav1.GetOptions{})
	must(t, err, "get p1")
	p1.Status.Phase = corev1.PodRunning
	_, err = pods.UpdateStatus(ctx, p1, metav1.UpdateOptions{})
	must(t, err, "update status of p1")
	podNames := func(sel string) []string {
		l, err := pods.List(ctx, metav1.ListOptions{FieldSelector: sel})
		must(t, err, "list pods --field-selector %s", sel)
		var out []string
		for _, p := range l.Items {
			out = append(out, p.Name)
		}
		slices.Sort(out)
		return out
	}
	for sel, want := range map[string][]string{
		"metadata.name=p0":                          {"p0"},
		"metadata.name!=p0":                         {"p1", "p2"},
		"spec.nodeName=node-b":                      {"p1"},
		"spec.nodeName=":                            {"p2"},
		"status.phase=Running":                      {"p1"},
		"status.phase=Pending":                      {"p0", "p2"},
		"spec.nodeName=node-b,status.phase=Running": {"p1"},
		"metadata.namespace=" + ns:                  {"p0", "p1", "p2"},
	} {
		if got := podNames(sel); !slices.Equal(got, want) {
			t.Errorf("pod field selector %q: got %v, want %v", sel, got, want)
		}
	}
	_, err = pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.bogus=x"})
	wantCode(t, err, 400, "field selector on an unsupported field")

	evs := cs.CoreV1().Events(ns)
	for _, target := range []string{"p0", "p1", "p1"} {
		e := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{GenerateName: "ev-"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: target, Namespace: ns},
			Reason:         "Test", Message: "hello", Type: corev1.EventTypeNormal,
		}
		_, err := evs.Create(ctx, e, metav1.CreateOptions{})
		must(t, err, "create event for %s", target)
	}
	l, err := evs.List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=p1"})
	must(t, err, "list events by involvedObject.name")
	if len(l.Items) != 2 {
		t.Errorf("events with involvedObject.name=p1: %d, want 2", len(l.Items))
	}
	l, err = evs.List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Pod,reason=Test"})
	must(t, err, "list events by kind and reason")
	if len(l.Items) != 3 {
		t.Errorf("events with involvedObject.kind=Pod,reason=Test: %d, want 3", len(l.Items))
	}
}

func testPagination(t *testing.T, s *testutil.Server) {
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	c := cs.CoreV1().ConfigMaps(ns)
	const n = 120
	for i := range n {
		_, err := c.Create(ctx, cm(ns, fmt.Sprintf("cm-%03d", i), map[string]string{"i": fmt.Sprint(i)}), metav1.CreateOptions{})
		must(t, err, "create %d", i)
	}
	var names []string
	opts := metav1.ListOptions{Limit: 25}
	var firstRV string
	pages := 0
	for {
		l, err := c.List(ctx, opts)
		must(t, err, "list page %d", pages)
		pages++
		if len(l.Items) > 25 {
			t.Fatalf("page %d has %d items > limit 25", pages, len(l.Items))
		}
		if firstRV == "" {
			firstRV = l.ResourceVersion
		} else if l.ResourceVersion != firstRV {
			t.Errorf("page %d read at rv %s, first page at %s: pages must be one snapshot", pages, l.ResourceVersion, firstRV)
		}
		names = append(names, cmNames(l.Items)...)
		if pages == 1 {
			// A write between pages must not show up in later pages.
			_, err := c.Create(ctx, cm(ns, "cm-zzz-late", nil), metav1.CreateOptions{})
			must(t, err, "create between pages")
			if l.RemainingItemCount != nil && *l.RemainingItemCount != n-25 {
				t.Errorf("remainingItemCount %d, want %d", *l.RemainingItemCount, n-25)
			}
		}
		if l.Continue == "" {
			break
		}
		opts.Continue = l.Continue
		if pages > n {
			t.Fatalf("pagination does not end")
		}
	}
	if pages != 5 || len(names) != n {
		t.Fatalf("pagination: %d pages, %d names; want 5 pages, %d names", pages, len(names), n)
	}
	for i, name := range names {
		if want := fmt.Sprintf("cm-%03d", i); name != want {
			t.Fatalf("item %d = %s, want %s (order, duplicates or gaps)", i, name, want)
		}
	}
	_, err := c.List(ctx, metav1.ListOptions{Limit: 10, Continue: "garbage!!"})
	wantCode(t, err, 400, "list with a malformed continue token")
}
