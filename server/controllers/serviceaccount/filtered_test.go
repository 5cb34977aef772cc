package serviceaccount

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/orch/orch/server/controllers/kit"
	"github.com/orch/orch/server/controllers/kit/kittest"
)

// TestRootCACachesOnlyItsConfigMap: the publisher's cache holds the
// kube-root-ca.crt ConfigMaps, not the namespaces' other ConfigMaps.
func TestRootCACachesOnlyItsConfigMap(t *testing.T) {
	client, c := kittest.Run(t, func(kc *kit.Context) (*RootCA, error) { return NewRootCA(kc, []byte(testCA)) })
	ctx := context.Background()
	waitCA(t, client, "default")
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other"}, Data: map[string]string{"k": "v"}}
	if _, err := client.CoreV1().ConfigMaps("default").Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// An event after "other" on the same watch: once it is handled, an
	// unfiltered cache would hold "other" too.
	kittest.Update(t, client.CoreV1().ConfigMaps("default"), RootCAConfigMap, func(cm *corev1.ConfigMap) {
		cm.Data[RootCAKey] = "tampered"
	})
	waitCA(t, client, "default")
	cms, err := c.cms.List(labels.Everything())
	if err != nil || len(cms) == 0 {
		t.Fatalf("cached ConfigMaps: %d, %v", len(cms), err)
	}
	for _, cm := range cms {
		if cm.Name != RootCAConfigMap {
			t.Fatalf("the publisher caches %s/%s", cm.Namespace, cm.Name)
		}
	}
}

// TestTokensCachesOnlyTokenSecrets: the tokens controller fills in a
// token Secret and holds no other Secret.
func TestTokensCachesOnlyTokenSecrets(t *testing.T) {
	issue := func(ns, sa, uid, name string) (string, error) { return "tok-" + ns + "-" + sa, nil }
	client, c := kittest.Run(t, func(kc *kit.Context) (*Tokens, error) { return NewTokens(kc, issue, []byte(testCA)) },
		kittest.Also(New))
	ctx := context.Background()
	waitSA(t, client, "default")
	secrets := client.CoreV1().Secrets("default")
	opaque := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "opaque"}, StringData: map[string]string{"k": "v"}}
	if _, err := secrets.Create(ctx, opaque, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tok := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tok", Annotations: map[string]string{corev1.ServiceAccountNameKey: DefaultName}},
		Type: corev1.SecretTypeServiceAccountToken}
	if _, err := secrets.Create(ctx, tok, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 10*time.Second, "token filled in", func() (bool, string) {
		s, err := secrets.Get(ctx, "tok", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return string(s.Data[corev1.ServiceAccountTokenKey]) == "tok-default-default", string(s.Data[corev1.ServiceAccountTokenKey])
	})
	all, err := c.secs.List(labels.Everything())
	if err != nil || len(all) == 0 {
		t.Fatalf("cached Secrets: %d, %v", len(all), err)
	}
	for _, s := range all {
		if s.Type != corev1.SecretTypeServiceAccountToken {
			t.Fatalf("the tokens controller caches %s/%s of type %s", s.Namespace, s.Name, s.Type)
		}
	}
}
