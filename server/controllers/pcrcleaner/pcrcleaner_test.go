package pcrcleaner

import (
	"context"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestSweep: requests older than 15 minutes go, younger ones stay.
func TestSweep(t *testing.T) {
	now := time.Now()
	pcr := func(ns, name string, age time.Duration) *certificatesv1.PodCertificateRequest {
		return &certificatesv1.PodCertificateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			UID: "uid-" + "x", CreationTimestamp: metav1.NewTime(now.Add(-age))}}
	}
	cs := fake.NewClientset(pcr("a", "old", 16*time.Minute), pcr("b", "older", 2*time.Hour), pcr("a", "young", 14*time.Minute))
	c := New(Config{Client: cs, Now: func() time.Time { return now }})
	n, err := c.Sweep(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("swept %d (%v), want 2", n, err)
	}
	l, _ := cs.CertificatesV1().PodCertificateRequests("").List(context.Background(), metav1.ListOptions{})
	if len(l.Items) != 1 || l.Items[0].Name != "young" {
		t.Fatalf("left %v", l.Items)
	}
}
