package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/internal/childproc"
	testimages "github.com/orch/orch/test/images"
	"github.com/orch/orch/test/testutil"
)

// loopRegistry is Debian's docker-registry serving TLS on a loopback port
// with a test CA, with its storage in a temp dir.
type loopRegistry struct {
	host    string // 127.0.0.1:<port>
	dir     string
	caFile  string
	logFile string
	cmd     *exec.Cmd
	done    chan struct{}
}

// TestRegistryPull pulls an image from a real registry on loopback (Debian's
// docker-registry, the image pushed with Debian's skopeo) and checks the
// pull failure path against it.
//
// The agent reads its registry configuration only from
// /etc/orch/registries.yaml (agent/images.DefaultRegistriesFile; there is
// no flag), so a plain-HTTP registry cannot be declared for the test agent
// without writing to the host. The registry therefore serves HTTPS with a
// test CA, which the agent (a child process) trusts through SSL_CERT_FILE.
func TestRegistryPull(t *testing.T) {
	requireHost(t)
	for _, bin := range []string{"docker-registry", "skopeo"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("skipping: %s not in PATH (scripts/install-deps.sh installs it)", bin)
		}
	}
	reg := startRegistry(t)
	ref := reg.host + "/test/busybox:1.0"
	reg.push(t, ref)
	// The agent and the server inherit this; t.Setenv restores it afterwards.
	t.Setenv("SSL_CERT_FILE", reg.caFile)
	e := startCluster(t)
	cs := e.server.Clientset
	waitFor(t, 90*time.Second, "node "+e.node+" Ready", func() (bool, error) {
		n, err := cs.CoreV1().Nodes().Get(context.Background(), e.node, metav1.GetOptions{})
		return err == nil && nodeReady(n), err
	})
	t.Run("PullAndRun", func(t *testing.T) { pullAndRun(t, e, cs, reg, ref) })
	t.Run("MissingTag", func(t *testing.T) { missingTag(t, e, cs, reg, reg.host+"/test/busybox:no-such-tag") })
}

func startRegistry(t *testing.T) *loopRegistry {
	t.Helper()
	dir, err := os.MkdirTemp("", "orch-e2e-registry-")
	if err != nil {
		t.Fatal(err)
	}
	r := &loopRegistry{dir: dir, host: fmt.Sprintf("127.0.0.1:%d", testutil.FreePorts(t, 1)[0]),
		logFile: filepath.Join(dir, "registry.log")}
	t.Cleanup(r.stop)
	certFile, keyFile := r.writeCerts(t)
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: info
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
  secret: orch-e2e-%d
  tls:
    certificate: %s
    key: %s
`, filepath.Join(dir, "storage"), r.host, time.Now().UnixNano(), certFile, keyFile)
	cfgFile := filepath.Join(dir, "config.yml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(r.logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	r.cmd = exec.Command("docker-registry", "serve", cfgFile)
	r.cmd.Stdout, r.cmd.Stderr = out, out
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	waited, err := childproc.Start(r.cmd)
	if err != nil {
		t.Fatalf("starting docker-registry: %v", err)
	}
	r.done = make(chan struct{})
	go func() { <-waited; close(r.done) }()
	r.waitReady(t)
	return r
}

// stop kills the registry and removes its directory.
func (r *loopRegistry) stop() {
	if r.cmd != nil && r.cmd.Process != nil {
		_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
		<-r.done
	}
	_ = os.RemoveAll(r.dir)
}

func (r *loopRegistry) log() string {
	b, _ := os.ReadFile(r.logFile)
	return string(b)
}

func (r *loopRegistry) waitReady(t *testing.T) {
	t.Helper()
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(r.caFile)
	if err != nil || !pool.AppendCertsFromPEM(ca) {
		t.Fatalf("reading the test CA: %v", err)
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		resp, err := client.Get("https://" + r.host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-r.done:
			t.Fatalf("docker-registry exited:\n%s", r.log())
		case <-ctx.Done():
			t.Fatalf("docker-registry not answering on %s (last: %v):\n%s", r.host, err, r.log())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// writeCerts writes a CA (ca.crt, also the skopeo cert dir) and a server
// certificate for 127.0.0.1 signed by it.
func (r *loopRegistry) writeCerts(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "orch e2e registry CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certDir := filepath.Join(r.dir, "certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		t.Fatal(err)
	}
	r.caFile = filepath.Join(certDir, "ca.crt")
	certFile, keyFile = filepath.Join(r.dir, "server.crt"), filepath.Join(r.dir, "server.key")
	for path, block := range map[string]*pem.Block{r.caFile: {Type: "CERTIFICATE", Bytes: caDER},
		certFile: {Type: "CERTIFICATE", Bytes: der}, keyFile: {Type: "EC PRIVATE KEY", Bytes: keyDER}} {
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return certFile, keyFile
}

// push writes the busybox OCI archive (one image in its index) and copies
// it into the registry with skopeo, verifying the registry's certificate.
func (r *loopRegistry) push(t *testing.T, ref string) {
	t.Helper()
	tarPath := filepath.Join(r.dir, "busybox-oci.tar")
	if err := testimages.WriteBusyboxImage(tarPath, testimages.BusyboxPath, ref); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(r.dir, "skopeo-tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "skopeo", "--insecure-policy", "--tmpdir", tmp, "copy",
		"--dest-cert-dir", filepath.Dir(r.caFile), "oci-archive:"+tarPath, "docker://"+ref)
	cmd.Env = append(os.Environ(), "HOME="+tmp, "TMPDIR="+tmp)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("skopeo copy: %v\n%s\nregistry log:\n%s", err, out, r.log())
	}
}

func podEvents(t *testing.T, cs kubernetes.Interface, name string) []corev1.Event {
	evs, err := cs.CoreV1().Events("default").List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Logf("listing events of %s: %v", name, err)
		return nil
	}
	return evs.Items
}

// pullAndRun: a pod with the registry's image is pulled (Pulling, Pulled
// "Successfully pulled") and runs.
func pullAndRun(t *testing.T, e *agentEnv, cs kubernetes.Interface, reg *loopRegistry, ref string) {
	c := corev1.Container{Name: "app", Image: ref, ImagePullPolicy: corev1.PullIfNotPresent,
		Command: []string{"sh", "-c", "echo pulled-from-registry; exec sleep 3600"}}
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "pulled"}, Spec: corev1.PodSpec{
		NodeName: e.node, Containers: []corev1.Container{c}}})
	p := waitPod(t, cs, "pulled", "Running and Ready", podReady)
	st := p.Status.ContainerStatuses[0]
	if st.Image != ref || !strings.Contains(st.ImageID, "sha256:") {
		t.Errorf("container status image %q imageID %q", st.Image, st.ImageID)
	}
	waitFor(t, 10*time.Second, "Pulling and Pulled (successfully) events", func() (bool, error) {
		var pulling, pulled bool
		for _, ev := range podEvents(t, cs, "pulled") {
			pulling = pulling || (ev.Reason == "Pulling" && strings.Contains(ev.Message, ref))
			pulled = pulled || (ev.Reason == "Pulled" && strings.Contains(ev.Message, "Successfully pulled image") && strings.Contains(ev.Message, ref))
		}
		return pulling && pulled, nil
	})
	if !strings.Contains(reg.log(), "/v2/test/busybox/blobs/sha256:") {
		t.Errorf("the registry log shows no blob fetch:\n%s", reg.log())
	}
	if err := cs.CoreV1().Pods("default").Delete(context.Background(), "pulled", metav1.DeleteOptions{}); err != nil {
		t.Errorf("deleting pod pulled: %v", err)
	}
}

// missingTag: a tag the registry does not have gives ErrImagePull, then
// ImagePullBackOff, with the not-found answer in the container status.
func missingTag(t *testing.T, e *agentEnv, cs kubernetes.Interface, reg *loopRegistry, ref string) {
	c := corev1.Container{Name: "app", Image: ref, ImagePullPolicy: corev1.PullIfNotPresent}
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "missing"}, Spec: corev1.PodSpec{
		NodeName: e.node, Containers: []corev1.Container{c}}})
	reasons := map[string]string{}
	p := waitPod(t, cs, "missing", "ImagePullBackOff", func(p *corev1.Pod) bool {
		if len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil {
			w := p.Status.ContainerStatuses[0].State.Waiting
			reasons[w.Reason] = w.Message
		}
		return reasons["ImagePullBackOff"] != ""
	})
	msg := reasons["ImagePullBackOff"]
	if !strings.Contains(msg, ref) || !strings.Contains(msg, "not found") {
		t.Errorf("ImagePullBackOff message %q lacks the registry's not-found answer for %s", msg, ref)
	}
	if p.Status.Phase != corev1.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
	// ErrImagePull shows in the status only for a second after each
	// failure; the kubelet's "Error: ErrImagePull" event is the lasting trace.
	waitFor(t, 10*time.Second, "Pulling, Failed (not found), Error: ErrImagePull and BackOff events", func() (bool, error) {
		var pulling, failed, errPull, backoff bool
		for _, ev := range podEvents(t, cs, "missing") {
			pulling = pulling || ev.Reason == "Pulling"
			failed = failed || (ev.Reason == "Failed" && strings.Contains(ev.Message, "Failed to pull image") && strings.Contains(ev.Message, "not found"))
			errPull = errPull || (ev.Reason == "Failed" && ev.Message == "Error: ErrImagePull")
			backoff = backoff || ev.Reason == "BackOff"
		}
		return pulling && failed && errPull && backoff, nil
	})
	if _, seen := reasons["ErrImagePull"]; seen {
		t.Logf("ErrImagePull also seen in the container status: %q", reasons["ErrImagePull"])
	}
	if !strings.Contains(reg.log(), "no-such-tag") {
		t.Errorf("the registry was not asked for the missing tag")
	}
}
