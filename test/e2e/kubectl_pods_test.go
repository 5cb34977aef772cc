package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/test/testutil"
)

// kubectlRunner runs the real kubectl against the e2e cluster.
type kubectlRunner struct {
	t    *testing.T
	bin  string
	conf string
}

func newKubectl(t *testing.T, e *agentEnv) *kubectlRunner {
	return &kubectlRunner{t: t, bin: testutil.Kubectl(t), conf: e.server.Kubeconfig}
}

// run runs kubectl with stdin (may be empty) and a 90 s bound; it returns
// the combined output and the error.
func (k *kubectlRunner) run(stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, append([]string{"--kubeconfig", k.conf}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// must runs kubectl and fails the test on a non-zero exit.
func (k *kubectlRunner) must(stdin string, args ...string) string {
	k.t.Helper()
	out, err := k.run(stdin, args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// kubectlStream is a long-running kubectl (logs -f, port-forward) whose
// output lines arrive on a channel; stop kills it and waits.
type kubectlStream struct {
	cmd   *exec.Cmd
	lines chan string
	done  chan struct{}
}

func (k *kubectlRunner) stream(args ...string) *kubectlStream {
	k.t.Helper()
	cmd := exec.Command(k.bin, append([]string{"--kubeconfig", k.conf}, args...)...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		k.t.Fatalf("starting kubectl %v: %v", args, err)
	}
	s := &kubectlStream{cmd: cmd, lines: make(chan string, 1000), done: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			select {
			case s.lines <- sc.Text():
			default:
			}
		}
		close(s.lines)
	}()
	go func() { _ = cmd.Wait(); _ = pw.Close(); close(s.done) }()
	k.t.Cleanup(s.stop)
	return s
}

func (s *kubectlStream) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.done
}

// waitLines reads lines until every want has been seen (in any order).
func (s *kubectlStream) waitLines(t *testing.T, timeout time.Duration, want ...string) []string {
	t.Helper()
	var got []string
	missing := map[string]bool{}
	for _, w := range want {
		missing[w] = true
	}
	deadline := time.After(timeout)
	for len(missing) > 0 {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("kubectl %v exited before printing %v; output:\n%s", s.cmd.Args[3:], keys(missing), strings.Join(got, "\n"))
			}
			got = append(got, l)
			for w := range missing {
				if strings.Contains(l, w) {
					delete(missing, w)
				}
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %v from kubectl %v; output:\n%s", keys(missing), s.cmd.Args[3:], strings.Join(got, "\n"))
		}
	}
	return got
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// seedManifests are seed 002's pods, ConfigMap and Secret, adapted to the
// test images: nginx:1.25 is busybox, so it serves with httpd.
func seedManifests(node string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  APP_COLOR: blue
  APP_MODE: production
  log_level: info
  nginx.conf: |
    server {
      listen 80;
      server_name example.com;
    }
---
apiVersion: v1
kind: Secret
metadata:
  name: app-secret
type: Opaque
data:
  DB_PASSWORD: czNjcmV0IQ==
  API_KEY: c2stYWJjMTIzeHl6
  DB_USERNAME: YWRtaW4=
---
apiVersion: v1
kind: Pod
metadata:
  name: web-server
  labels:
    app: web
    tier: frontend
spec:
  nodeName: %[1]s
  terminationGracePeriodSeconds: 2
  containers:
  - name: nginx
    image: nginx:1.25
    command: ["sh", "-c", "mkdir -p /www && echo '<h1>seed-002 web-server</h1>' > /www/index.html && exec httpd -f -p 80 -h /www"]
    ports:
    - containerPort: 80
    resources:
      requests:
        cpu: 250m
        memory: 128Mi
      limits:
        cpu: 500m
        memory: 256Mi
  restartPolicy: Always
---
apiVersion: v1
kind: Pod
metadata:
  name: init-pod
spec:
  nodeName: %[1]s
  terminationGracePeriodSeconds: 2
  initContainers:
  - name: prepare
    image: busybox:1.36
    command: ["sh", "-c", "echo prepared-by-init > /data/msg"]
    volumeMounts:
    - name: data
      mountPath: /data
  containers:
  - name: app
    image: busybox:1.36
    command: ["sh", "-c", "echo app-read: $(cat /data/msg); exec sleep 3600"]
    volumeMounts:
    - name: data
      mountPath: /data
  volumes:
  - name: data
    emptyDir: {}
---
apiVersion: v1
kind: Pod
metadata:
  name: config-pod
spec:
  nodeName: %[1]s
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: busybox:1.36
    command: ["sleep", "3600"]
    envFrom:
    - configMapRef:
        name: app-config
    - secretRef:
        name: app-secret
---
apiVersion: v1
kind: Pod
metadata:
  name: crasher
spec:
  nodeName: %[1]s
  terminationGracePeriodSeconds: 2
  restartPolicy: Always
  containers:
  - name: app
    image: busybox:1.36
    command: ["sh", "-c", "echo crasher-was-here; exit 1"]
`, node)
}

// TestKubectlPods drives real pods with the real kubectl: run, apply of the
// seed 002 manifests, logs -f, logs --previous, exec, port-forward,
// describe, get -o wide and delete.
func TestKubectlPods(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	waitFor(t, 90*time.Second, "node "+e.node+" Ready", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
		return err == nil && nodeReady(n), err
	})
	k := newKubectl(t, e)
	t.Run("Run", func(t *testing.T) { kubectlRun(t, k.with(t), e) })
	t.Run("ApplySeedPods", func(t *testing.T) { applySeedPods(t, k.with(t), e) })
	t.Run("LogsFollow", func(t *testing.T) { logsFollow(t, k.with(t)) })
	t.Run("LogsInitAndEmptyDir", func(t *testing.T) {
		out := k.with(t).must("", "logs", "init-pod", "-c", "app")
		if !strings.Contains(out, "app-read: prepared-by-init") {
			t.Fatalf("kubectl logs init-pod:\n%s", out)
		}
	})
	t.Run("LogsPrevious", func(t *testing.T) { logsPrevious(t, k.with(t), e) })
	t.Run("ExecEnvFrom", func(t *testing.T) { execEnvFrom(t, k.with(t)) })
	t.Run("PortForward", func(t *testing.T) { portForward(t, k.with(t)) })
	t.Run("DescribePod", func(t *testing.T) { describePod(t, k.with(t)) })
	t.Run("GetWide", func(t *testing.T) { getWide(t, k.with(t), e) })
	t.Run("DeleteWaits", func(t *testing.T) { deleteWaits(t, k.with(t), e) })
}

func (k *kubectlRunner) with(t *testing.T) *kubectlRunner {
	return &kubectlRunner{t: t, bin: k.bin, conf: k.conf}
}

func kubectlRun(t *testing.T, k *kubectlRunner, e *agentEnv) {
	overrides := fmt.Sprintf(`{"apiVersion":"v1","spec":{"nodeName":%q,"terminationGracePeriodSeconds":2}}`, e.node)
	out := k.must("", "run", "ticker", "--image=busybox:1.36", "--restart=Never", "--labels=made-by=kubectl-run",
		"--overrides="+overrides, "--command", "--", "sh", "-c", "i=0; while true; do i=$((i+1)); echo tick $i; sleep 1; done")
	if !strings.Contains(out, "pod/ticker created") {
		t.Fatalf("kubectl run output:\n%s", out)
	}
	p := waitPod(t, e.server.Clientset, "ticker", "Ready", podReady)
	if p.Spec.NodeName != e.node || p.Labels["made-by"] != "kubectl-run" {
		t.Errorf("pod made by kubectl run: node %q labels %v", p.Spec.NodeName, p.Labels)
	}
}

func applySeedPods(t *testing.T, k *kubectlRunner, e *agentEnv) {
	out := k.must(seedManifests(e.node), "apply", "-f", "-")
	for _, w := range []string{"configmap/app-config created", "secret/app-secret created", "pod/web-server created",
		"pod/init-pod created", "pod/config-pod created", "pod/crasher created"} {
		if !strings.Contains(out, w) {
			t.Errorf("kubectl apply output lacks %q:\n%s", w, out)
		}
	}
	for _, name := range []string{"web-server", "init-pod", "config-pod"} {
		waitPod(t, e.server.Clientset, name, "Ready", podReady)
	}
	p, err := e.server.Clientset.CoreV1().Pods("default").Get(context.Background(), "web-server", metav1.GetOptions{})
	if err != nil || p.Status.QOSClass != corev1.PodQOSBurstable {
		t.Errorf("web-server qosClass: %v (%v)", p.Status.QOSClass, err)
	}
}

func logsFollow(t *testing.T, k *kubectlRunner) {
	// The ticker prints "tick N" every second: -f must show ticks printed
	// after it started, not only what was in the log already.
	before := strings.Fields(k.must("", "logs", "--tail=1", "ticker"))
	if len(before) != 2 || before[0] != "tick" {
		t.Fatalf("kubectl logs --tail=1 ticker: %q", before)
	}
	n, err := strconv.Atoi(before[1])
	if err != nil {
		t.Fatal(err)
	}
	s := k.stream("logs", "-f", "ticker")
	got := s.waitLines(t, 30*time.Second, "tick 1", fmt.Sprintf("tick %d", n+2))
	s.stop()
	if got[0] != "tick 1" {
		t.Errorf("kubectl logs -f began with %q, want tick 1", got[0])
	}
}

func logsPrevious(t *testing.T, k *kubectlRunner, e *agentEnv) {
	p := waitPod(t, e.server.Clientset, "crasher", "restarted at least once", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount >= 1
	})
	if last := p.Status.ContainerStatuses[0].LastTerminationState.Terminated; last == nil || last.ExitCode != 1 {
		t.Errorf("crasher lastState %+v, want terminated with exit code 1", p.Status.ContainerStatuses[0].LastTerminationState)
	}
	out := k.must("", "logs", "--previous", "crasher")
	if strings.TrimSpace(out) != "crasher-was-here" {
		t.Errorf("kubectl logs --previous crasher: %q, want crasher-was-here", out)
	}
}

func execEnvFrom(t *testing.T, k *kubectlRunner) {
	out := k.must("", "exec", "config-pod", "--", "sh", "-c", "echo $APP_COLOR $DB_USERNAME; echo mode=$APP_MODE pw=$DB_PASSWORD")
	if !strings.Contains(out, "blue admin\n") || !strings.Contains(out, "mode=production pw=s3cret!") {
		t.Fatalf("kubectl exec config-pod env:\n%s", out)
	}
	out, err := k.run("", "exec", "web-server", "--", "sh", "-c", "cat /www/index.html; exit 7")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 || !strings.Contains(out, "seed-002 web-server") {
		t.Fatalf("kubectl exec web-server: %v\n%s", err, out)
	}
}

func portForward(t *testing.T, k *kubectlRunner) {
	port := testutil.FreePorts(t, 1)[0]
	s := k.stream("port-forward", "pod/web-server", fmt.Sprintf("%d:80", port))
	defer s.stop()
	s.waitLines(t, 30*time.Second, fmt.Sprintf("Forwarding from 127.0.0.1:%d -> 80", port))
	client := &http.Client{Timeout: 10 * time.Second}
	var body []byte
	waitFor(t, 20*time.Second, "GET through the forwarded port", func() (bool, error) {
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		body, err = io.ReadAll(resp.Body)
		return err == nil && resp.StatusCode == http.StatusOK, err
	})
	if !strings.Contains(string(body), "<h1>seed-002 web-server</h1>") {
		t.Fatalf("body through port-forward: %q", body)
	}
}

func describePod(t *testing.T, k *kubectlRunner) {
	var out string
	waitFor(t, 20*time.Second, "describe pod web-server with Created and Started events", func() (bool, error) {
		var err error
		out, err = k.run("", "describe", "pod", "web-server")
		return err == nil && strings.Contains(out, "Created") && strings.Contains(out, "Started"), err
	})
	for _, w := range []string{"Name:", "web-server", "QoS Class:", "Burstable", "Events:", "Pulled", "Created", "Started",
		"Status:", "Running", "cpu:", "500m", "memory:", "256Mi", "128Mi", "250m"} {
		if !strings.Contains(out, w) {
			t.Errorf("kubectl describe pod lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "Events:         <none>") || strings.Contains(out, "Events:  <none>") {
		t.Errorf("describe shows no events:\n%s", out)
	}
}

func getWide(t *testing.T, k *kubectlRunner, e *agentEnv) {
	p, err := e.server.Clientset.CoreV1().Pods("default").Get(context.Background(), "web-server", metav1.GetOptions{})
	if err != nil || p.Status.PodIP == "" {
		t.Fatalf("web-server podIP %q (%v)", p.Status.PodIP, err)
	}
	out := k.must("", "get", "pods", "-o", "wide")
	if !strings.Contains(out, "IP") || !strings.Contains(out, "NODE") {
		t.Fatalf("get -o wide header:\n%s", out)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "web-server ") {
			line = l
		}
	}
	f := strings.Fields(line)
	if len(f) < 7 || f[1] != "1/1" || f[2] != "Running" || f[5] != p.Status.PodIP || f[6] != e.node {
		t.Fatalf("web-server row %q (want 1/1 Running %s %s):\n%s", line, p.Status.PodIP, e.node, out)
	}
}

func deleteWaits(t *testing.T, k *kubectlRunner, e *agentEnv) {
	out := k.must("", "delete", "pod", "ticker", "web-server", "init-pod", "config-pod", "crasher", "--wait=true", "--timeout=60s")
	for _, w := range []string{`pod "ticker" deleted`, `pod "web-server" deleted`} {
		if !strings.Contains(out, w) {
			t.Errorf("kubectl delete output lacks %q:\n%s", w, out)
		}
	}
	// --wait returns only once the objects are gone.
	l, err := e.server.Clientset.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil || len(l.Items) != 0 {
		t.Fatalf("pods left right after kubectl delete --wait: %d (%v)", len(l.Items), err)
	}
	out, err = k.run("", "get", "pod", "ticker")
	if err == nil || !strings.Contains(out, `pods "ticker" not found`) {
		t.Fatalf("kubectl get deleted pod: %v\n%s", err, out)
	}
	k.must("", "delete", "configmap", "app-config")
	k.must("", "delete", "secret", "app-secret")
}
