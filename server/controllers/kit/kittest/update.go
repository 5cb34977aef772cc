package kittest

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// Client is the part of a typed client (such as
// cs.AppsV1().DaemonSets(ns)) that Update uses.
type Client[T any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Update(ctx context.Context, obj T, opts metav1.UpdateOptions) (T, error)
}

// Update reads the object name through c, applies change and writes it
// back, retrying on conflict: a controller's own writes (status) may land
// between the read and the write. It fails the test on any other error.
func Update[T any](t testing.TB, c Client[T], name string, change func(T)) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		change(cur)
		_, err = c.Update(context.Background(), cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
