package serviceaccount

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/kit/kittest"
)

const testCA = "-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n"

func TestDefaultServiceAccountAndRootCA(t *testing.T) {
	client, _ := kittest.Run(t, New,
		kittest.KitOptions(kit.Options{ClusterCAPEM: []byte(testCA)}),
		kittest.Also(func(kc *kit.Context) (*RootCA, error) { return NewRootCA(kc, kc.Options.ClusterCAPEM) }))
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSA(t, client, "team-a")
	waitCA(t, client, "team-a")

	// Deleted objects come back; an edited CA bundle is restored.
	if err := client.CoreV1().ServiceAccounts("team-a").Delete(ctx, DefaultName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitSA(t, client, "team-a")
	kittest.Update(t, client.CoreV1().ConfigMaps("team-a"), RootCAConfigMap, func(cm *corev1.ConfigMap) {
		cm.Data[RootCAKey] = "tampered"
	})
	waitCA(t, client, "team-a")
	if err := client.CoreV1().ConfigMaps("team-a").Delete(ctx, RootCAConfigMap, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitCA(t, client, "team-a")
}

func waitSA(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	kittest.Eventually(t, 10*time.Second, "default ServiceAccount in "+ns, func() (bool, string) {
		_, err := c.CoreV1().ServiceAccounts(ns).Get(context.Background(), DefaultName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not there"
		}
		return err == nil, errString(err)
	})
}

func waitCA(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	kittest.Eventually(t, 10*time.Second, "kube-root-ca.crt in "+ns, func() (bool, string) {
		cm, err := c.CoreV1().ConfigMaps(ns).Get(context.Background(), RootCAConfigMap, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cm.Data[RootCAKey] == testCA, "ca.crt = " + cm.Data[RootCAKey]
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
