package kubectl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/test/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

// kc runs kubectl against one server.
type kc struct {
	bin, kubeconfig, home string
	cs                    kubernetes.Interface
}

func newKC(t *testing.T, s *testutil.Server) *kc {
	return &kc{bin: testutil.Kubectl(t), kubeconfig: s.Kubeconfig, home: t.TempDir(), cs: s.Clientset}
}

func (k *kc) cmd(ctx context.Context, args ...string) *exec.Cmd {
	c := exec.CommandContext(ctx, k.bin, args...)
	// A private HOME keeps kubectl's discovery cache per test.
	c.Env = append(os.Environ(), "KUBECONFIG="+k.kubeconfig, "HOME="+k.home, "KUBECTL_COMMAND_HEADERS=false")
	return c
}

// run runs kubectl and returns stdout, stderr and its error.
func (k *kc) run(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := k.cmd(ctx, args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	t.Logf("kubectl %s → err=%v\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	return out.String(), errb.String(), err
}

// ok runs kubectl, fails the test unless it succeeds, and returns stdout.
func (k *kc) ok(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := k.run(t, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// fails runs kubectl, fails the test if it succeeds, and returns stderr.
func (k *kc) fails(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := k.run(t, args...)
	if err == nil {
		t.Fatalf("kubectl %s succeeded, want an error\nstdout: %s", strings.Join(args, " "), out)
	}
	return errOut
}

// getJSON runs `kubectl get -o json` and decodes the answer into v.
func (k *kc) getJSON(t *testing.T, v any, args ...string) {
	t.Helper()
	out := k.ok(t, append(append([]string{"get"}, args...), "-o", "json")...)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("decoding kubectl get -o json output: %v\n%s", err, out)
	}
}

func contains(t *testing.T, what, text string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("%s: output does not contain %q:\n%s", what, w, text)
		}
	}
}

func notContains(t *testing.T, what, text string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(text, b) {
			t.Errorf("%s: output contains %q:\n%s", what, b, text)
		}
	}
}

// newNamespace creates a namespace (with client-go, so that kubectl's
// imperative create is tested on its own) and deletes it afterwards.
func (k *kc) newNamespace(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("kc-%s-%04x", sanitize(t.Name()), rand.IntN(0x10000))
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := k.cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = k.cs.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	return name
}

func sanitize(s string) string { return testutil.NameFor(s, 30) }

func testdata(name string) string { return filepath.Join("testdata", name) }

// headerFields returns the column names of the first line of table output.
func headerFields(out string) []string {
	line, _, _ := strings.Cut(out, "\n")
	return strings.Fields(line)
}

// stdinErr runs kubectl with input on stdin and returns its combined output.
func (k *kc) stdinErr(t *testing.T, input string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := k.cmd(ctx, args...)
	c.Stdin = strings.NewReader(input)
	b, err := c.CombinedOutput()
	t.Logf("kubectl %s (stdin) → err=%v\n%s", strings.Join(args, " "), err, b)
	return string(b), err
}

// stdin is stdinErr that fails the test on error.
func (k *kc) stdin(t *testing.T, input string, args ...string) string {
	t.Helper()
	out, err := k.stdinErr(t, input, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}
