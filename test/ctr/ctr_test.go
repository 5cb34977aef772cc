package ctr

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/test/testutil"
)

// TestCtr runs a pod on a real agent and looks at it with `orch ctr` and a
// `ctr` symlink to orch, against that agent's containerd.
func TestCtr(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	waitFor(t, 2*time.Minute, "node "+e.node+" Ready", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
		return err == nil && nodeReady(n), err
	})
	id := runPod(t, e, cs, "ctr-sleeper")
	bin := testutil.Binary(t)
	link := filepath.Join(t.TempDir(), "ctr")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	sock := e.socket()

	t.Run("OrchCtrContainersLs", func(t *testing.T) {
		out := ok(t, nil, bin, "ctr", "--address", sock, "-n", e.ns, "containers", "ls")
		contains(t, out, "CONTAINER", id, "docker.io/library/busybox:1.36", "io.containerd.runc.v2")
	})
	t.Run("SymlinkContainersLs", func(t *testing.T) {
		contains(t, ok(t, nil, link, "--address", sock, "-n", e.ns, "containers", "ls"), id)
	})
	t.Run("EnvTasksLs", func(t *testing.T) {
		env := []string{"CONTAINERD_ADDRESS=" + sock, "CONTAINERD_NAMESPACE=" + e.ns}
		out := ok(t, env, bin, "ctr", "tasks", "ls")
		if !hasLine(out, id, "RUNNING") {
			t.Fatalf("tasks ls has no RUNNING line for %s:\n%s", id, out)
		}
	})
	t.Run("ImagesAndNamespaces", func(t *testing.T) {
		contains(t, ok(t, nil, bin, "ctr", "-a", sock, "-n", e.ns, "images", "ls", "-q"), "docker.io/library/busybox:1.36")
		contains(t, ok(t, nil, link, "-a", sock, "namespaces", "ls"), e.ns)
	})
	t.Run("DefaultNamespaceIsOrch", func(t *testing.T) { defaultNamespace(t, link, sock) })
	t.Run("DefaultsInHelp", func(t *testing.T) {
		contains(t, ok(t, nil, bin, "ctr", "--help"), `(default: "/run/orch/containerd/containerd.sock")`,
			`(default: "orch")`, "$CONTAINERD_ADDRESS", "$CONTAINERD_NAMESPACE")
	})
	t.Run("MissingSocket", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "none.sock")
		_, errOut, err := run(nil, bin, "ctr", "--address", missing, "containers", "ls")
		if err == nil || !strings.Contains(errOut, "cannot access socket "+missing) {
			t.Fatalf("ctr against %s: %v\n%s", missing, err, errOut)
		}
	})
	t.Run("DeletedPodLeavesCtr", func(t *testing.T) {
		deletePod(t, cs, "ctr-sleeper")
		waitFor(t, time.Minute, "container "+id+" gone from ctr containers ls", func() (bool, error) {
			out, errOut, err := run(nil, bin, "ctr", "--address", sock, "-n", e.ns, "containers", "ls", "-q")
			if err != nil {
				return false, &runError{err, errOut}
			}
			return !strings.Contains(out, id), nil
		})
	})
}

// defaultNamespace: without -n, ctr works in namespace orch: a lease made
// there is listed with -n orch and not in namespace default.
func defaultNamespace(t *testing.T, ctr, sock string) {
	lease := strings.TrimSpace(ok(t, nil, ctr, "--address", sock, "leases", "create", "--expires", "10m"))
	if lease == "" {
		t.Fatal("leases create printed no id")
	}
	defer run(nil, ctr, "--address", sock, "-n", "orch", "leases", "rm", lease) //nolint:errcheck
	contains(t, ok(t, nil, ctr, "--address", sock, "-n", "orch", "leases", "ls"), lease)
	if out := ok(t, nil, ctr, "--address", sock, "-n", "default", "leases", "ls"); strings.Contains(out, lease) {
		t.Fatalf("lease %s made without -n is in namespace default:\n%s", lease, out)
	}
}

// runPod creates a busybox pod on the agent's node, waits for it to run and
// returns its container's containerd id. The pod is deleted in t.Cleanup
// (through the API, so the agent removes its shim and runc state).
func runPod(t *testing.T, e *agentEnv, cs kubernetes.Interface, name string) string {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{
		NodeName: e.node, TerminationGracePeriodSeconds: ptr.To(int64(1)),
		Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36", Command: []string{"sleep", "3600"}}},
	}}
	if _, err := cs.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating pod %s: %v", name, err)
	}
	t.Cleanup(func() { deletePod(t, cs, name) })
	var id string
	waitFor(t, 2*time.Minute, "pod "+name+" Running", func() (bool, error) {
		p, err := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil || p.Status.Phase != corev1.PodRunning || len(p.Status.ContainerStatuses) != 1 {
			return false, err
		}
		id = strings.TrimPrefix(p.Status.ContainerStatuses[0].ContainerID, "containerd://")
		return id != "", nil
	})
	return id
}

// deletePod deletes the pod and waits until it is gone (the agent has
// stopped and removed its containers).
func deletePod(t *testing.T, cs kubernetes.Interface, name string) {
	err := cs.CoreV1().Pods("default").Delete(context.Background(), name, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		return
	}
	if err != nil {
		t.Errorf("deleting pod %s: %v", name, err)
		return
	}
	waitFor(t, time.Minute, "pod "+name+" gone", func() (bool, error) {
		_, err := cs.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// run runs name with args (and env added to the test's environment).
func run(env []string, name string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// ok runs the command and fails the test if it fails.
func ok(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	out, errOut, err := run(env, name, args...)
	if err != nil {
		t.Fatalf("%s %q: %v\n%s%s", filepath.Base(name), args, err, out, errOut)
	}
	return out
}

type runError struct {
	err    error
	stderr string
}

func (e *runError) Error() string { return e.err.Error() + ": " + e.stderr }

func contains(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("output lacks %q:\n%s", w, out)
		}
	}
}

// hasLine tells whether one line of out contains every word.
func hasLine(out string, words ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		all := true
		for _, w := range words {
			all = all && strings.Contains(line, w)
		}
		if all {
			return true
		}
	}
	return false
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		done, err := cond()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s (last error: %v)", timeout, what, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
