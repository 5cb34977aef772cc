package killall

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

// TestKillallRealAgent runs a real `orch agent` (managed containerd, a
// running pod) under the test's names, then the installed orch-killall.sh
// aimed at them, and checks that no process, link, netns, mount, chain or
// cgroup of the instance is left.
func TestKillallRealAgent(t *testing.T) {
	requireRoot(t)
	for _, bin := range []string{"containerd", "runc", "containerd-shim-runc-v2"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("skipping: %s not in PATH", bin)
		}
	}
	if _, err := os.Stat(testimages.BusyboxPath); err != nil {
		t.Skipf("skipping: %s missing", testimages.BusyboxPath)
	}
	bin := uniqueBinary(t)
	in := newInstance(t, t.TempDir(), bin)
	in.vxlan = "" // host-gw: the vxlan backend's orch.1 is host-wide
	t.Cleanup(func() { in.cleanup(t) })
	srv := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{"--cluster-cidr", in.podCIDR}})
	tok, err := os.ReadFile(filepath.Join(srv.DataDir, "server", "token"))
	if err != nil {
		t.Fatal(err)
	}
	imgDir := filepath.Join(in.dataDir, "agent", "images")
	if err := os.MkdirAll(imgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := testimages.WriteBusyboxImage(filepath.Join(imgDir, "busybox.tar"), testimages.BusyboxPath, "docker.io/library/busybox:1.36"); err != nil {
		t.Fatal(err)
	}
	node := "killall-" + in.id
	agent := exec.Command(bin, "agent", "--network-backend", "host-gw",
		"--join", fmt.Sprintf("https://127.0.0.1:%d", srv.HTTPSPort), "--node-ip", "127.0.0.1",
		"--kubelet-port", strconv.Itoa(testutil.FreePorts(t, 1)[0]), "--data-dir", in.dataDir, "--node-name", node,
		"--cluster-cidr", in.podCIDR, "--bridge-name", in.bridge,
		"--containerd-state-dir", filepath.Join(in.runDir, "containerd"), "--containerd-namespace", "orchk-"+in.id,
		"--cgroup-root", in.cgroupRoot, "--netns-prefix", in.netnsPfx, "--iptables-chain-prefix", in.chainPfx,
		"--fifo-dir", filepath.Join(in.runDir, "fifo"), "--eviction-hard", "nodefs.available<1%,imagefs.available<1%",
		"--ingress-http-port", "0", "--ingress-https-port", "0") // never the host's 80 and 443
	logf, err := os.Create(filepath.Join(t.TempDir(), "agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	agent.Env = append(os.Environ(), "ORCH_TOKEN="+strings.TrimSpace(string(tok)))
	agent.Stdout, agent.Stderr = logf, logf
	agent.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = agent.Wait() }()
	t.Cleanup(func() { _ = syscall.Kill(-agent.Process.Pid, syscall.SIGKILL) })
	defer func() {
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			if len(b) > 6000 {
				b = b[len(b)-6000:]
			}
			t.Logf("agent log tail:\n%s", b)
		}
	}()

	cs := srv.Clientset
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sleeper", Namespace: "default"}, Spec: corev1.PodSpec{
		NodeName: node, TerminationGracePeriodSeconds: ptr.To(int64(1)),
		Containers: []corev1.Container{{Name: "c", Image: "busybox:1.36", Command: []string{"sleep", "3600"}}},
	}}
	if _, err := cs.CoreV1().Pods("default").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(4 * time.Minute)
	for {
		p, err := cs.CoreV1().Pods("default").Get(context.Background(), "sleeper", metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod not running: %v %+v", err, p.Status)
		}
		time.Sleep(time.Second)
	}

	other := newInstance(t, t.TempDir(), "/nonexistent/orch")
	other.create(t)
	otherBefore := other.leftovers()
	before := in.leftovers()
	for _, kind := range []string{"link ", "port ", "netns ", "mount ", "chain ", "cgroup ", "proc ", "dir "} {
		if !hasPrefix(before, kind) {
			t.Errorf("the agent made no %q objects: %q", kind, before)
		}
	}
	t.Logf("before killall: %d objects", len(before))
	root := install(t, bin)
	out := run(t, in.env(), filepath.Join(root, "usr", "local", "bin", "orch-killall.sh"))
	if left := in.leftovers(); len(left) > 0 {
		t.Errorf("left behind: %q\n%s", left, out)
	}
	// The server runs the same binary with another data dir: another
	// instance, which the agent's killall leaves alone.
	if !srv.Running() {
		t.Errorf("killall for the agent's data dir stopped the server of another data dir")
	}
	if got := other.leftovers(); !reflect.DeepEqual(got, otherBefore) {
		t.Errorf("killall touched another instance:\nbefore %q\nafter  %q", otherBefore, got)
	}
}
