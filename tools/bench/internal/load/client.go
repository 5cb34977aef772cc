package load

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// LoadConfig reads a kubeconfig and tunes it for load generation: no
// client-side rate limit, JSON on the wire (orch speaks JSON only, so the
// baseline is driven the same way), and never a proxy (loopback only).
func LoadConfig(kubeconfig string) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", kubeconfig, err)
	}
	if err := checkLoopback(cfg.Host); err != nil {
		return nil, err
	}
	cfg.QPS = -1
	cfg.Burst = 0
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	cfg.UserAgent = "orch-bench"
	cfg.Timeout = 60 * time.Second
	// A Proxy func also makes client-go skip its transport cache, so every
	// clientset built from a copy gets its own TCP/TLS connection.
	cfg.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	return cfg, nil
}

func checkLoopback(host string) error {
	u, err := url.Parse(host)
	if err != nil {
		return fmt.Errorf("parse server URL %q: %w", host, err)
	}
	h := u.Hostname()
	if h == "localhost" || h == "::1" || strings.HasPrefix(h, "127.") {
		return nil
	}
	return fmt.Errorf("server %q is not a loopback address; the benchmark only targets loopback", host)
}

// NewClient returns a clientset with its own connection.
func NewClient(cfg *rest.Config) (kubernetes.Interface, error) {
	c := rest.CopyConfig(cfg)
	c.Proxy = func(*http.Request) (*url.URL, error) { return nil, nil }
	cs, err := kubernetes.NewForConfig(c)
	if err != nil {
		return nil, fmt.Errorf("new clientset: %w", err)
	}
	return cs, nil
}

// Endpoint returns the server client i talks to: endpoints[i mod len].
func Endpoint(endpoints []*rest.Config, i int) (*rest.Config, error) {
	if len(endpoints) == 0 {
		return nil, errors.New("no server endpoints to load")
	}
	return endpoints[i%len(endpoints)], nil
}

// payload returns a deterministic string of n bytes.
func payload(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	var b strings.Builder
	b.Grow(n)
	for i := range n {
		b.WriteByte(alphabet[(i*7+i/36)%len(alphabet)])
	}
	return b.String()
}

func configMap(ns, name, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "orch-bench"}},
		Data:       map[string]string{"payload": data},
	}
}
