package servers

import (
	"context"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/tools/bench/internal/load"
	"github.com/orch/orch/tools/bench/internal/proc"
)

// waitReady polls GET /readyz with the kubeconfig's credentials (the file may
// not exist yet: servers write it while starting) until it answers 200.
// It returns the time since since.
func waitReady(ctx context.Context, kubeconfig, logPath string, p *proc.Proc, since time.Time, timeout time.Duration) (time.Duration, error) {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if exited, err := p.Exited(); exited {
			return 0, fmt.Errorf("%s exited while starting: %v\n--- log tail ---\n%s", p.Name, err, tail(logPath, 3000))
		}
		if last = probeReady(ctx, kubeconfig); last == nil {
			return time.Since(since), nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return 0, fmt.Errorf("%s not ready after %s (last error: %v)\n--- log tail ---\n%s", p.Name, timeout, last, tail(logPath, 3000))
}

func probeReady(ctx context.Context, kubeconfig string) error {
	if _, err := os.Stat(kubeconfig); err != nil {
		return err
	}
	cfg, err := load.LoadConfig(kubeconfig)
	if err != nil {
		return err
	}
	cfg.Timeout = 2 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	_, err = cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}

// EnsureNamespace waits for namespace ns to exist, creating it if absent.
func EnsureNamespace(ctx context.Context, kubeconfig, ns string, timeout time.Duration) error {
	cfg, err := load.LoadConfig(kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("clientset: %w", err)
	}
	deadline := time.Now().Add(timeout)
	for {
		_, err = cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
			_, err = cs.CoreV1().Namespaces().Create(ctx, obj, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				err = nil
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("namespace %s: %w", ns, ctx.Err())
		}
		if err == nil || time.Now().After(deadline) {
			if err != nil {
				return fmt.Errorf("namespace %s: %w", ns, err)
			}
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Version returns the server's reported gitVersion, or "?".
func Version(kubeconfig string) string {
	cfg, err := load.LoadConfig(kubeconfig)
	if err != nil {
		return "?"
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "?"
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return "?"
	}
	return v.GitVersion
}
