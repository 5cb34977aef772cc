package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/utils/ptr"
)

// TestStdioAttach covers container stdio on a real agent: kubectl run -i
// (attach with stdinOnce), kubectl attach to a running container, TTY
// resize of attach -t and exec -t through the API server with client-go,
// termination messages, runAsNonRoot, and attach after an agent restart.
func TestStdioAttach(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	waitNodeReady(t, e, false)
	stdioCreatePods(t, e, cs)
	k := newKubectl(t, e)
	t.Run("RunInteractive", func(t *testing.T) { stdioRunInteractive(t, k.with(t), e) })
	t.Run("AttachOutput", func(t *testing.T) { stdioAttachOutput(t, k.with(t), cs) })
	t.Run("TTYResize", func(t *testing.T) { stdioTTYResize(t, e.server.Config, cs) })
	t.Run("TerminationMessage", func(t *testing.T) { stdioTerminationMessage(t, cs) })
	t.Run("RunAsNonRoot", func(t *testing.T) { stdioRunAsNonRoot(t, cs) })
	t.Run("AttachAfterAgentRestart", func(t *testing.T) {
		e.stopAgent()
		e.startAgent()
		kt := k.with(t)
		waitFor(t, 60*time.Second, "the restarted agent's kubelet API", func() (bool, error) {
			_, err := kt.run("", "logs", "--tail=1", "stdio-ticker")
			return err == nil, nil
		})
		stdioTTYResize(t, e.server.Config, cs)
		stdioAttachOutput(t, kt, cs)
	})
}

// stdioCreatePods creates the test's long-lived pods up front so that they
// start while the first subtests run.
func stdioCreatePods(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	pod := func(name string, restart corev1.RestartPolicy, c corev1.Container) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PodSpec{NodeName: e.node,
			RestartPolicy: restart, Containers: []corev1.Container{c}}}
	}
	term := bbContainer("term", `while read l; do echo size=$(stty size); done`)
	term.Stdin, term.TTY = true, true
	createPod(t, cs, pod("stdio-term", corev1.RestartPolicyAlways, term))
	createPod(t, cs, pod("stdio-ticker", corev1.RestartPolicyAlways,
		bbContainer("c", `i=0; while true; do i=$((i+1)); echo tick $i; sleep 0.3; done`)))
	createPod(t, cs, pod("stdio-msg", corev1.RestartPolicyNever,
		bbContainer("c", `printf 'custom message' > /dev/termination-log; exit 3`)))
	fb := bbContainer("c", `echo first line; echo from-the-log; exit 2`)
	fb.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	createPod(t, cs, pod("stdio-fallback", corev1.RestartPolicyNever, fb))
	nr := bbContainer("c", "sleep 1000")
	nr.SecurityContext = &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}
	createPod(t, cs, pod("stdio-nonroot", corev1.RestartPolicyAlways, nr))
}

// stdioRunInteractive is `kubectl run -i --rm --restart=Never ... -- sh`
// with the script on stdin: it runs only once kubectl attached, and its
// output, exit code and termination message come back.
func stdioRunInteractive(t *testing.T, k *kubectlRunner, e *agentEnv) {
	overrides := fmt.Sprintf(`{"apiVersion":"v1","spec":{"nodeName":%q,"terminationGracePeriodSeconds":1}}`, e.node)
	script := "echo hello-from-attach\necho to-stderr >&2\nprintf attach-msg > /dev/termination-log\nexit 3\n"
	out, err := k.run(script, "run", "-i", "--rm", "--restart=Never", "--image=docker.io/library/busybox:1.36",
		"--image-pull-policy=IfNotPresent", "--overrides="+overrides, "stdio-run", "--", "sh")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("kubectl run -i: %v, want exit code 3; output:\n%s", err, out)
	}
	for _, want := range []string{"hello-from-attach", "to-stderr", "terminated (Error)\nattach-msg", `pod "stdio-run" deleted`} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl run -i output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "couldn't attach") {
		t.Errorf("kubectl fell back to logs instead of attaching:\n%s", out)
	}
}

// stdioAttachOutput attaches to a running container and sees output that
// it prints after the attach.
func stdioAttachOutput(t *testing.T, k *kubectlRunner, cs kubernetes.Interface) {
	waitPod(t, cs, "stdio-ticker", "Ready", podReady)
	last := strings.Fields(k.must("", "logs", "--tail=1", "stdio-ticker"))
	if len(last) != 2 {
		t.Fatalf("kubectl logs --tail=1: %q", last)
	}
	n, err := strconv.Atoi(last[1])
	if err != nil {
		t.Fatal(err)
	}
	s := k.stream("attach", "stdio-ticker")
	s.waitLines(t, 30*time.Second, fmt.Sprintf("tick %d", n+3))
	s.stop()
	// the log file keeps being written while attached
	if out := k.must("", "logs", "stdio-ticker"); !strings.Contains(out, fmt.Sprintf("tick %d\n", n+3)) {
		t.Errorf("kubectl logs lacks tick %d:\n%s", n+3, out)
	}
}

// stdioSizes is a remotecommand.TerminalSizeQueue fed by a channel.
type stdioSizes chan remotecommand.TerminalSize

func (q stdioSizes) Next() *remotecommand.TerminalSize {
	s, ok := <-q
	if !ok {
		return nil
	}
	return &s
}

// stdioBuffer collects a stream's output for polling.
type stdioBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *stdioBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *stdioBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// stdioExecutor opens pods/stdio-term/<sub> through the API server.
func stdioExecutor(t *testing.T, cfg *rest.Config, cs kubernetes.Interface, sub string, ws bool, opts apiruntime.Object) remotecommand.Executor {
	t.Helper()
	u := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace("default").Name("stdio-term").
		SubResource(sub).VersionedParams(opts, scheme.ParameterCodec).URL()
	var ex remotecommand.Executor
	var err error
	if ws {
		ex, err = remotecommand.NewWebSocketExecutor(cfg, http.MethodGet, u.String())
	} else {
		ex, err = remotecommand.NewSPDYExecutor(cfg, http.MethodPost, u)
	}
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// stdioTTYResize resizes the terminal of attach -t to the tty container
// and of exec -t, over WebSocket and SPDY, with client-go.
func stdioTTYResize(t *testing.T, cfg *rest.Config, cs kubernetes.Interface) {
	waitPod(t, cs, "stdio-term", "Ready", podReady)
	for _, ws := range []bool{true, false} {
		q := make(stdioSizes, 2)
		pr, pw := io.Pipe()
		var out stdioBuffer
		done := make(chan error, 1)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		ex := stdioExecutor(t, cfg, cs, "attach", ws, &corev1.PodAttachOptions{Container: "term", Stdin: true, Stdout: true, TTY: true})
		go func() {
			done <- ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: pr, Stdout: &out, Tty: true, TerminalSizeQueue: q})
		}()
		q <- remotecommand.TerminalSize{Width: 81, Height: 25}
		stdioAsk(t, pw, &out, "size=25 81", done)
		q <- remotecommand.TerminalSize{Width: 133, Height: 44}
		stdioAsk(t, pw, &out, "size=44 133", done)
		_ = pw.Close() // a TTY attach detaches when its input ends
		close(q)
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("attach -t (websocket %v): %v", ws, err)
			}
		case <-ctx.Done():
			t.Fatalf("attach -t (websocket %v) did not end with its input", ws)
		}
		cancel()

		q = make(stdioSizes, 1)
		q <- remotecommand.TerminalSize{Width: 121, Height: 41}
		close(q)
		var eout stdioBuffer
		ex = stdioExecutor(t, cfg, cs, "exec", ws, &corev1.PodExecOptions{Container: "term", Command: []string{"sh", "-c", "stty size"},
			Stdout: true, TTY: true})
		ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
		err := ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &eout, Tty: true, TerminalSizeQueue: q})
		cancel()
		if err != nil || strings.TrimSpace(eout.String()) != "41 121" {
			t.Fatalf("exec -t stty size (websocket %v): %q %v", ws, eout.String(), err)
		}
	}
}

// stdioAsk writes a line until the shell's answer contains want.
func stdioAsk(t *testing.T, in io.Writer, out *stdioBuffer, want string, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), want) {
		select {
		case err := <-done:
			t.Fatalf("attach ended before %q: %v; output %q", want, err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in attached output %q", want, out.String())
		}
		go func() { _, _ = io.WriteString(in, "x\n") }() // never block the test on a stalled stream
		time.Sleep(100 * time.Millisecond)
	}
}

func stdioTerminationMessage(t *testing.T, cs kubernetes.Interface) {
	p := waitPod(t, cs, "stdio-msg", "Failed", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if term := p.Status.ContainerStatuses[0].State.Terminated; term == nil || term.ExitCode != 3 || term.Message != "custom message" {
		t.Errorf("stdio-msg terminated: %+v", term)
	}
	p = waitPod(t, cs, "stdio-fallback", "Failed with a message", func(p *corev1.Pod) bool {
		s := p.Status.ContainerStatuses
		return p.Status.Phase == corev1.PodFailed && len(s) == 1 && s[0].State.Terminated != nil && s[0].State.Terminated.Message != ""
	})
	if msg := p.Status.ContainerStatuses[0].State.Terminated.Message; msg != "first line\nfrom-the-log\n" {
		t.Errorf("stdio-fallback message %q, want the log's last lines", msg)
	}
}

func stdioRunAsNonRoot(t *testing.T, cs kubernetes.Interface) {
	p := waitPod(t, cs, "stdio-nonroot", "CreateContainerConfigError", func(p *corev1.Pod) bool {
		s := p.Status.ContainerStatuses
		return len(s) == 1 && s[0].State.Waiting != nil && s[0].State.Waiting.Reason == "CreateContainerConfigError"
	})
	want := fmt.Sprintf(`container has runAsNonRoot and image will run as root (pod: "stdio-nonroot_default(%s)", container: c)`, p.UID)
	if got := p.Status.ContainerStatuses[0].State.Waiting.Message; got != want {
		t.Errorf("waiting message %q, want %q", got, want)
	}
	waitFor(t, 30*time.Second, "a Failed event for stdio-nonroot", func() (bool, error) {
		evs, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, ev := range evs.Items {
			if ev.InvolvedObject.Name == "stdio-nonroot" && ev.Reason == "Failed" && ev.Message == "Error: "+want {
				return true, nil
			}
		}
		return false, nil
	})
}
