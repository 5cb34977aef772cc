package integration

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("EventsBothGroups", testEventsBothGroups)
}

// testEventsBothGroups: one Event served through events.k8s.io/v1 and
// core/v1, as kube-apiserver serves it (conformance: Events API). An event
// reported through events.k8s.io is listed, selected (source falls back to
// reportingController), read and deleted through core/v1, and the other way.
func testEventsBothGroups(t *testing.T, s *testutil.Server) {
	ctx := ctxT(t)
	ns := newNamespace(t, s.Clientset)
	ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "both", Labels: map[string]string{"e": "1"}},
		Regarding: corev1.ObjectReference{Namespace: ns, Kind: "Pod", Name: "p"}, EventTime: metav1.NewMicroTime(time.Unix(1505828956, 0)),
		Note: "This is both", Action: "Do", Reason: "Test", Type: "Normal", ReportingController: "test-controller", ReportingInstance: "test-node"}
	_, err := s.Clientset.EventsV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{})
	must(t, err, "create events.k8s.io event")
	l, err := s.Clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "source=test-controller"})
	must(t, err, "core list by source")
	if len(l.Items) != 1 || l.Items[0].Name != "both" || l.Items[0].Message != "This is both" || l.Items[0].InvolvedObject.Name != "p" {
		t.Fatalf("core list by source: %+v", l.Items)
	}
	l, err = s.Clientset.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "reportingComponent=test-controller,involvedObject.name=p"})
	must(t, err, "core list across namespaces")
	if len(l.Items) != 1 {
		t.Fatalf("core list across namespaces: %d events", len(l.Items))
	}
	core := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "legacy"}, InvolvedObject: corev1.ObjectReference{Namespace: ns, Kind: "Pod", Name: "q"},
		Reason: "Legacy", Message: "from core", Type: "Warning", Source: corev1.EventSource{Component: "old-style"}}
	_, err = s.Clientset.CoreV1().Events(ns).Create(ctx, core, metav1.CreateOptions{})
	must(t, err, "create core event")
	got, err := s.Clientset.EventsV1().Events(ns).Get(ctx, "legacy", metav1.GetOptions{})
	must(t, err, "get core event through events.k8s.io")
	if got.Note != "from core" || got.Regarding.Name != "q" || got.DeprecatedSource.Component != "old-style" {
		t.Fatalf("core event as events.k8s.io: %+v", got)
	}
	must(t, s.Clientset.CoreV1().Events(ns).Delete(ctx, "both", metav1.DeleteOptions{}), "delete through core")
	el, err := s.Clientset.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	must(t, err, "events.k8s.io list")
	if len(el.Items) != 1 || el.Items[0].Name != "legacy" {
		t.Fatalf("events.k8s.io list after delete: %+v", el.Items)
	}
}
