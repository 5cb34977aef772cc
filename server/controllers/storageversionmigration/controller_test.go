package storageversionmigration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	svmv1 "k8s.io/api/storagemigration/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

func state(client kubernetes.Interface, name string) string {
	s, err := client.StoragemigrationV1().StorageVersionMigrations().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return err.Error()
	}
	var parts []string
	for _, t := range []svmv1.MigrationConditionType{svmv1.MigrationRunning, svmv1.MigrationSucceeded, svmv1.MigrationFailed} {
		if c := meta.FindStatusCondition(s.Status.Conditions, string(t)); c != nil {
			parts = append(parts, fmt.Sprintf("%s=%s", t, c.Status))
		}
	}
	if s.Status.ResourceVersion != "" {
		parts = append(parts, "rv")
	}
	return strings.Join(parts, ",")
}

func create(t *testing.T, client kubernetes.Interface, name, group, resource string) {
	t.Helper()
	svm := &svmv1.StorageVersionMigration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: svmv1.StorageVersionMigrationSpec{Resource: metav1.GroupResource{Group: group, Resource: resource}}}
	if _, err := client.StoragemigrationV1().StorageVersionMigrations().Create(context.Background(), svm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestMigration: a migration of ConfigMaps runs through Running, the
// recorded resourceVersion and Succeeded, then Running goes False; a
// second one of the same resource waits for the first.
func TestMigration(t *testing.T) {
	client, _ := kittest.Run(t, New)
	ctx := context.Background()
	for i := range 3 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm%d", i), Namespace: "default"}, Data: map[string]string{"a": "b"}}
		if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create(t, client, "first", "", "configmaps")
	create(t, client, "second", "", "configmaps")
	done := "Running=False,Succeeded=True,rv"
	kittest.Until(t, "first done", func() bool { return state(client, "first") == done })
	kittest.Until(t, "second done", func() bool { return state(client, "second") == done })
	s, _ := client.StoragemigrationV1().StorageVersionMigrations().Get(ctx, "first", metav1.GetOptions{})
	if c := meta.FindStatusCondition(s.Status.Conditions, string(svmv1.MigrationSucceeded)); c.Reason != reasonSucceeded {
		t.Errorf("succeeded condition %+v", c)
	}
}

// TestMissingResource: a resource or group discovery does not know fails
// after the grace period.
func TestMissingResource(t *testing.T) {
	client, _ := kittest.Run(t, New, kittest.Before(func(c *Controller) {
		c.now = func() time.Time { return time.Now().Add(2 * discoveryGrace) }
	}))
	create(t, client, "foo", "", "foo")
	kittest.Until(t, "missing resource failed", func() bool { return state(client, "foo") == "Running=False,Failed=True" })
	create(t, client, "nogroup", "example.com", "widgets")
	kittest.Until(t, "missing group failed", func() bool { return state(client, "nogroup") == "Running=False,Failed=True" })
}
