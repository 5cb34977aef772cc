package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/test/testutil"
)

// TestIngressClassBootstrap: a new server creates the IngressClass orch as
// the default class, so an Ingress without a class gets it; restarted
// with `disable: [ingress]` in its config file, it deletes the class (the
// agents then free their ingress ports). A new server creates the class
// before it reports ready; a restarted one deletes it right after.
func TestIngressClassBootstrap(t *testing.T) {
	s := testutil.StartServer(t, testutil.Options{Quiet: true})
	ctx := context.Background()
	// Created by the leader's bootstrap, before the server reports ready.
	ic, err := s.Clientset.NetworkingV1().IngressClasses().Get(ctx, "orch", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("IngressClass orch once the server is ready: %v", err)
	}
	if ic.Spec.Controller != "orch.io/ingress" || ic.Annotations["ingressclass.kubernetes.io/is-default-class"] != "true" {
		t.Fatalf("IngressClass orch: controller %q, annotations %v", ic.Spec.Controller, ic.Annotations)
	}
	ing, err := s.Clientset.NetworkingV1().Ingresses("default").Create(ctx, &networkingv1.Ingress{
		ObjectMeta: metav1.ObjectMeta{Name: "classless"},
		Spec: networkingv1.IngressSpec{DefaultBackend: &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := ing.Spec.IngressClassName; c == nil || *c != "orch" {
		t.Errorf("an Ingress without a class got class %v, want orch (the default)", c)
	}
	cfg := filepath.Join(filepath.Dir(s.DataDir), "config.yaml")
	if err := os.WriteFile(cfg, []byte("disable:\n- ingress\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Restart()
	// A restarted server is ready as soon as its stored bootstrap objects
	// are there; the leader's steps (this one deletes the class) follow.
	var err2 error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err2 = s.Clientset.NetworkingV1().IngressClasses().Get(ctx, "orch", metav1.GetOptions{}); apierrors.IsNotFound(err2) {
			return
		}
	}
	t.Fatalf("IngressClass orch 30 s after a restart with --disable ingress: %v, want NotFound", err2)
}
