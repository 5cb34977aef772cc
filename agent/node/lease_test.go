package node

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestLeaseRenewerReadsOnlyWhenNeeded: the Lease is created once, then
// renewed from the copy the last write returned; a conflict makes the
// next renewal read the Lease first.
func TestLeaseRenewerReadsOnlyWhenNeeded(t *testing.T) {
	client := fake.NewClientset()
	r := &leaseRenewer{client: client, name: "n1", period: 10 * time.Second}
	verbs := func() []string {
		var out []string
		for _, a := range client.Actions() {
			out = append(out, a.GetVerb())
		}
		client.ClearActions()
		return out
	}
	ctx := context.Background()
	for i := range 3 {
		if err := r.renew(ctx); err != nil {
			t.Fatal(err)
		}
		want := "update"
		if i == 0 {
			want = "get create"
		}
		if got := strings.Join(verbs(), " "); got != want {
			t.Fatalf("renewal %d: %s, want %s", i, got, want)
		}
	}
	conflicts := 1
	client.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts == 0 {
			return false, nil, nil
		}
		conflicts--
		return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}, "n1", nil)
	})
	if err := r.renew(ctx); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(verbs(), " "); got != "update get update" {
		t.Fatalf("after a conflict: %s", got)
	}
	l, err := client.CoordinationV1().Leases(LeaseNamespace).Get(ctx, "n1", metav1.GetOptions{})
	if err != nil || *l.Spec.HolderIdentity != "n1" || *l.Spec.LeaseDurationSeconds != 40 {
		t.Fatalf("lease %+v %v", l, err)
	}
}
