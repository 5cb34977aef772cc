package eventttl

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func event(ns, name string, created, last time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:    metav1.ObjectMeta{Namespace: ns, Name: name, CreationTimestamp: metav1.NewTime(created)},
		LastTimestamp: metav1.NewTime(last),
	}
}

func TestSweepDeletesOnlyExpired(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	old := now.Add(-2 * time.Hour)
	series := event("a", "old-but-series", old, old)
	series.Series = &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(now.Add(-time.Minute))}
	client := fake.NewClientset(
		event("a", "expired", old, old),
		event("b", "expired-too", old, now.Add(-61*time.Minute)),
		event("a", "recently-repeated", old, now.Add(-5*time.Minute)),
		event("b", "fresh", now.Add(-time.Minute), time.Time{}),
		series,
	)
	s := New(Config{Client: client, Now: func() time.Time { return now }, Logger: zaptest.NewLogger(t)})
	n, err := s.Sweep(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("Sweep = %d, %v; want 2 deleted", n, err)
	}
	left, err := client.CoreV1().Events("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, ev := range left.Items {
		got[ev.Name] = true
	}
	for _, want := range []string{"recently-repeated", "fresh", "old-but-series"} {
		if !got[want] {
			t.Errorf("%s was deleted; left %v", want, got)
		}
	}
	if len(got) != 3 {
		t.Errorf("left %v, want 3 events", got)
	}
}

func TestSweepEventsV1(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	mk := func(name string, seen time.Time) *eventsv1.Event {
		return &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: name,
			CreationTimestamp: metav1.NewTime(now.Add(-3 * time.Hour))}, EventTime: metav1.NewMicroTime(seen)}
	}
	client := fake.NewClientset(mk("old", now.Add(-2*time.Hour)), mk("new", now.Add(-time.Minute)))
	n, err := New(Config{Client: client, Now: func() time.Time { return now }}).Sweep(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	if _, err := client.EventsV1().Events("a").Get(context.Background(), "new", metav1.GetOptions{}); err != nil {
		t.Fatalf("the fresh event is gone: %v", err)
	}
}
