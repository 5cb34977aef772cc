package integration

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/test/testutil"
)

// TestSnapshotSaveAndRestore saves a snapshot of a running server with
// `orch etcd-snapshot save`, writes more, restores the snapshot with
// `orch server --cluster-reset --cluster-reset-restore-path` and checks the
// restarted server has exactly the objects from before the snapshot, takes
// writes with resourceVersions above the snapshot's revision, and survives a
// plain `--cluster-reset` too.
func TestSnapshotSaveAndRestore(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true})
	ctx, cs := ctxT(t), s.Clientset
	ns := newNamespace(t, cs)
	var beforeRV string
	for i := range 5 {
		o, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, fmt.Sprintf("before-%d", i), map[string]string{"v": "1"}), metav1.CreateOptions{})
		must(t, err, "create before-%d", i)
		beforeRV = o.ResourceVersion
	}

	out := orchCLI(t, "etcd-snapshot", "save", "--data-dir", s.DataDir, "--name", "e2e",
		"--server", fmt.Sprintf("https://127.0.0.1:%d", s.HTTPSPort))
	if !strings.HasPrefix(out, "Snapshot e2e-") {
		t.Fatalf("save printed %q", out)
	}
	snap := listSnapshots(t, s.DataDir)
	if len(snap) != 1 || !strings.HasPrefix(snap[0].Name, "e2e-") {
		t.Fatalf("ls after save: %+v", snap)
	}
	file := strings.TrimPrefix(snap[0].Location, "file://")
	if rvLess(strconv.FormatInt(snap[0].Revision, 10), beforeRV) {
		t.Fatalf("snapshot revision %d is older than the last acknowledged write %s", snap[0].Revision, beforeRV)
	}

	for i := range 3 {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, fmt.Sprintf("after-%d", i), nil), metav1.CreateOptions{})
		must(t, err, "create after-%d", i)
	}
	changed := cm(ns, "before-0", map[string]string{"v": "2"})
	_, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, changed, metav1.UpdateOptions{})
	must(t, err, "update before-0")

	checkSaveNeedsAdmin(t, s)
	if table := orchCLI(t, "snapshot", "ls", "--data-dir", s.DataDir); !strings.HasPrefix(table, "Name") || !strings.Contains(table, snap[0].Name) {
		t.Fatalf("ls table:\n%s", table)
	}
	args := append(s.Args(), "--cluster-reset", "--cluster-reset-restore-path="+file)
	if out, err := exec.Command(testutil.Binary(t), args...).CombinedOutput(); err == nil || !strings.Contains(string(out), "in use") {
		t.Fatalf("cluster reset while the server runs: %v\n%s", err, out)
	}

	stopServer(t, s)
	out = resetServer(t, s, "--cluster-reset-restore-path="+file)
	if !strings.Contains(out, "restart without --cluster-reset") {
		t.Fatalf("cluster-reset output does not say to restart:\n%s", out)
	}
	s.Restart()
	cs = s.Clientset
	checkRestoredObjects(t, cs, ns, snap[0].Revision)

	// A plain --cluster-reset keeps everything, including post-restore writes.
	o, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "after-restore", nil), metav1.CreateOptions{})
	must(t, err, "create after restore")
	stopServer(t, s)
	resetServer(t, s)
	s.Restart()
	got, err := s.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, "after-restore", metav1.GetOptions{})
	must(t, err, "get after-restore after a cluster reset")
	if got.ResourceVersion != o.ResourceVersion {
		t.Fatalf("after-restore resourceVersion %s became %s", o.ResourceVersion, got.ResourceVersion)
	}
	o2, err := s.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "after-reset", nil), metav1.CreateOptions{})
	must(t, err, "create after reset")
	if !rvLess(o.ResourceVersion, o2.ResourceVersion) {
		t.Fatalf("resourceVersion %s after reset is not above %s", o2.ResourceVersion, o.ResourceVersion)
	}

	orchCLI(t, "etcd-snapshot", "delete", "--data-dir", s.DataDir, snap[0].Name)
	if left := listSnapshots(t, s.DataDir); len(left) != 0 {
		t.Fatalf("snapshots left after delete: %+v", left)
	}
}

// checkSaveNeedsAdmin posts to the snapshot endpoint without a client
// certificate and expects 401.
func checkSaveNeedsAdmin(t *testing.T, s *testutil.Server) {
	t.Helper()
	caPEM, err := os.ReadFile(filepath.Join(s.DataDir, "server", "tls", "ca.crt"))
	must(t, err, "read ca.crt")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := hc.Post(fmt.Sprintf("https://127.0.0.1:%d/v1-orch/snapshots", s.HTTPSPort), "application/json", nil)
	must(t, err, "post without a client certificate")
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("snapshot save without a client certificate: HTTP %d, want 401", resp.StatusCode)
	}
}

// checkRestoredObjects checks ns holds the objects of the snapshot at rev
// and that writes continue above rev.
func checkRestoredObjects(t *testing.T, cs kubernetes.Interface, ns string, rev int64) {
	t.Helper()
	ctx := ctxT(t)
	for i := range 5 {
		o, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, fmt.Sprintf("before-%d", i), metav1.GetOptions{})
		must(t, err, "before-%d after restore", i)
		if o.Data["v"] != "1" {
			t.Errorf("before-%d has data %v after restore, want the snapshot's v=1", i, o.Data)
		}
	}
	for i := range 3 {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, fmt.Sprintf("after-%d", i), metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("after-%d (written after the snapshot) after restore: %v, want NotFound", i, err)
		}
	}
	o, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm(ns, "restored-write", nil), metav1.CreateOptions{})
	must(t, err, "create after restore")
	if !rvLess(strconv.FormatInt(rev, 10), o.ResourceVersion) {
		t.Fatalf("resourceVersion %s after restore is not above the snapshot's revision %d", o.ResourceVersion, rev)
	}
}

// resetServer runs `orch server --cluster-reset` with the server's flags
// and returns its output; it must exit 0.
func resetServer(t *testing.T, s *testutil.Server, extra ...string) string {
	t.Helper()
	args := append(append(s.Args(), "--cluster-reset"), extra...)
	out, err := exec.Command(testutil.Binary(t), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("orch server --cluster-reset %v: %v\n%s", extra, err, out)
	}
	t.Logf("orch server --cluster-reset %v:\n%s", extra, out)
	return string(out)
}

// snapshotInfo is one entry of `orch etcd-snapshot ls -o json`.
type snapshotInfo struct {
	Name     string `json:"name"`
	Location string `json:"location"`
	Size     int64  `json:"size"`
	Revision int64  `json:"revision"`
}

func listSnapshots(t *testing.T, dataDir string) []snapshotInfo {
	t.Helper()
	out := orchCLI(t, "etcd-snapshot", "ls", "-o", "json", "--data-dir", dataDir)
	var list []snapshotInfo
	must(t, json.Unmarshal([]byte(out), &list), "parse ls output %q", out)
	for _, i := range list {
		if filepath.Dir(strings.TrimPrefix(i.Location, "file://")) != filepath.Join(dataDir, "server", "db", "etcd-snapshots") {
			t.Errorf("snapshot %s not in the default dir", i.Location)
		}
	}
	return list
}

// orchCLI runs the orch binary and returns its stdout; it must succeed.
func orchCLI(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(testutil.Binary(t), args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("orch %v: %v\n%s%s", args, err, out, stderr.String())
	}
	return string(out)
}

func stopServer(t *testing.T, s *testutil.Server) {
	t.Helper()
	if err := s.Stop(); err != nil {
		t.Logf("orch server exited with %v on stop", err)
	}
}

// TestScheduledSnapshots runs a server with a 2-second snapshot schedule
// and retention 2 and checks snapshots appear and are pruned.
func TestScheduledSnapshots(t *testing.T) {
	t.Parallel()
	s := testutil.StartServer(t, testutil.Options{Quiet: true, ExtraArgs: []string{
		"--etcd-snapshot-schedule-cron", "@every 2s", "--etcd-snapshot-retention", "2"}})
	var names []string
	deadline := time.Now().Add(2 * time.Minute)
	for seen := map[string]bool{}; len(seen) < 4; time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d scheduled snapshots seen: %v", len(seen), names)
		}
		list := listSnapshots(t, s.DataDir)
		if len(list) > 2 {
			t.Fatalf("%d snapshots kept with --etcd-snapshot-retention 2: %+v", len(list), list)
		}
		for _, i := range list {
			if !strings.HasPrefix(i.Name, "etcd-snapshot-") {
				t.Fatalf("scheduled snapshot named %s", i.Name)
			}
			if !seen[i.Name] {
				seen[i.Name] = true
				names = append(names, i.Name)
			}
		}
	}
	t.Logf("scheduled snapshots seen: %v", names)
}
