package cluster

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"
)

// Exec runs a command in a pod's first container through the API server
// (pods/exec, as kubectl exec does: WebSocket, falling back to SPDY) and
// returns its stdout and stderr. A non-zero exit status is an error
// (k8s.io/utils/exec.CodeExitError).
func (c *Cluster) Exec(ctx context.Context, ns, pod string, cmd ...string) (string, string, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return "", "", fmt.Errorf("loading %s: %w", c.Kubeconfig, err)
	}
	u := c.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec).URL()
	ws, err := remotecommand.NewWebSocketExecutor(cfg, http.MethodGet, u.String())
	if err != nil {
		return "", "", fmt.Errorf("exec in %s/%s: %w", ns, pod, err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(cfg, http.MethodPost, u)
	if err != nil {
		return "", "", fmt.Errorf("exec in %s/%s: %w", ns, pod, err)
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, httpstream.IsUpgradeFailure)
	if err != nil {
		return "", "", fmt.Errorf("exec in %s/%s: %w", ns, pod, err)
	}
	var stdout, stderr bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		err = fmt.Errorf("exec %q in %s/%s: %w", cmd, ns, pod, err)
	}
	return stdout.String(), stderr.String(), err
}
