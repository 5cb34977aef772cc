package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// serviceAccountToken: a pod gets the kube-api-access volume from
// ServiceAccount admission, the agent mints a token bound to the pod and
// mounts it with ca.crt and namespace; the token authenticates as the
// pod's ServiceAccount and stops working once the pod is deleted.
func serviceAccountToken(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	const sa = "/var/run/secrets/kubernetes.io/serviceaccount"
	p := createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sa-token"}, Spec: corev1.PodSpec{
		NodeName: e.node,
		Containers: []corev1.Container{bbContainer("c",
			"cat "+sa+"/namespace; echo; head -c 27 "+sa+"/ca.crt; echo; echo TOKEN=$(cat "+sa+"/token); sleep 3600")},
	}})
	if p.Spec.ServiceAccountName != "default" || len(p.Spec.Volumes) != 1 || !strings.HasPrefix(p.Spec.Volumes[0].Name, "kube-api-access-") {
		t.Fatalf("admission gave the pod sa %q volumes %+v", p.Spec.ServiceAccountName, p.Spec.Volumes)
	}
	waitPod(t, cs, "sa-token", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	logPath := filepath.Join(e.dataDir, "agent", "logs", "default_sa-token_"+string(p.UID), "c", "0.log")
	var token string
	waitFor(t, 20*time.Second, "the pod to print its namespace, CA and token", func() (bool, error) {
		b, err := os.ReadFile(logPath)
		s := string(b)
		if i := strings.Index(s, "TOKEN="); i >= 0 {
			token = strings.TrimSpace(strings.SplitN(s[i+len("TOKEN="):], "\n", 2)[0])
		}
		return strings.Contains(s, "stdout F default") && strings.Contains(s, "-----BEGIN CERTIFICATE-----") && token != "", err
	})
	who := tokenWhoami(t, e, token)
	if who.Username != "system:serviceaccount:default:default" || who.Extra["authentication.kubernetes.io/pod-uid"][0] != string(p.UID) {
		t.Fatalf("the pod's token is %+v", who)
	}
	if err := cs.CoreV1().Pods("default").Delete(context.Background(), "sa-token", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the pod to be gone", func() (bool, error) {
		_, err := cs.CoreV1().Pods("default").Get(context.Background(), "sa-token", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	_, err := tokenClient(t, e, token).AuthenticationV1().SelfSubjectReviews().Create(context.Background(),
		&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if !apierrors.IsUnauthorized(err) {
		t.Fatalf("token of a deleted pod: %v, want 401", err)
	}
}

func tokenClient(t *testing.T, e *agentEnv, token string) kubernetes.Interface {
	t.Helper()
	c := e.server.Config
	cfg := &rest.Config{Host: c.Host, BearerToken: token, Timeout: 30 * time.Second,
		TLSClientConfig: rest.TLSClientConfig{CAData: c.CAData, CAFile: c.CAFile, ServerName: c.ServerName}}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func tokenWhoami(t *testing.T, e *agentEnv, token string) authenticationv1.UserInfo {
	t.Helper()
	r, err := tokenClient(t, e, token).AuthenticationV1().SelfSubjectReviews().Create(context.Background(),
		&authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("whoami with the pod's token: %v", err)
	}
	return r.Status.UserInfo
}
