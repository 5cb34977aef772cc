package ha

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/test/testutil"
)

func TestMain(m *testing.M) { testutil.Main(m) }

const ns = "default"

// startCluster starts a first server and two that join it.
func startCluster(t *testing.T) []*testutil.Server {
	s1 := testutil.StartServer(t, testutil.Options{ExtraArgs: []string{"--cluster-init", "--node-name", "ha-s1", "--secrets-encryption"}})
	servers := []*testutil.Server{s1}
	for i := 2; i <= 3; i++ {
		servers = append(servers, testutil.StartServer(t, testutil.Options{ExtraArgs: []string{
			"--server", "https://127.0.0.1:" + strconv.Itoa(s1.HTTPSPort),
			"--token-file", filepath.Join(s1.DataDir, "server", "token"),
			"--node-name", fmt.Sprintf("ha-s%d", i)}}))
	}
	return servers
}

func ctxT(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func eventually(t *testing.T, what string, d time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// leaderLease reads the lease the Raft leader renews.
func leaderLease(ctx context.Context, c kubernetes.Interface) (*coordinationv1.Lease, error) {
	return c.CoordinationV1().Leases("kube-system").Get(ctx, "orch-raft-leader", metav1.GetOptions{})
}

func voters(l *coordinationv1.Lease) int {
	return strings.Count(l.Annotations["orch.io/raft-members"], "=voter@")
}

func cm(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"k": name}}
}

func TestHighAvailability(t *testing.T) {
	ctx := ctxT(t, 8*time.Minute)
	servers := startCluster(t)
	eventually(t, "three voters in the leader lease", time.Minute, func() error {
		l, err := leaderLease(ctx, servers[0].Clientset)
		if err != nil {
			return err
		}
		if n := voters(l); n != 3 {
			return fmt.Errorf("%d voters: %s", n, l.Annotations["orch.io/raft-members"])
		}
		return nil
	})
	t.Run("QuorumReadsEverywhere", func(t *testing.T) { quorumReads(t, ctx, servers) })
	t.Run("FollowerWatch", func(t *testing.T) { followerWatch(t, ctx, servers) })
	t.Run("SecretsEncryptionEverywhere", func(t *testing.T) { secretsEverywhere(t, ctx, servers) })
	t.Run("LeaderKill", func(t *testing.T) { leaderKill(t, ctx, servers) })
	t.Run("NodeDeletionRemovesMember", func(t *testing.T) { nodeDeletion(t, ctx, servers) })
	t.Run("RemoveFlag", func(t *testing.T) { removeFlag(t, ctx, servers) })
}

// quorumReads writes on each server and reads at once on every other.
func quorumReads(t *testing.T, ctx context.Context, servers []*testutil.Server) {
	for i := 0; i < 30; i++ {
		w, r := servers[i%3], servers[(i+1)%3]
		name := fmt.Sprintf("q-%d", i)
		if _, err := w.Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm(name), metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if _, err := r.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Fatalf("quorum read of %s on another server right after its write: %v", name, err)
		}
		list, err := r.Clientset.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil || !hasCM(list.Items, name) {
			t.Fatalf("quorum list on another server misses %s (err %v)", name, err)
		}
	}
	// Compare-and-swap across servers: a stale resourceVersion is a 409 everywhere.
	a, err := servers[1].Clientset.CoreV1().ConfigMaps(ns).Get(ctx, "q-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := a.DeepCopy()
	a.Data["k"] = "a"
	if _, err := servers[2].Clientset.CoreV1().ConfigMaps(ns).Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update via a follower: %v", err)
	}
	b.Data["k"] = "b"
	if _, err := servers[0].Clientset.CoreV1().ConfigMaps(ns).Update(ctx, b, metav1.UpdateOptions{}); err == nil ||
		!strings.Contains(err.Error(), "modified") {
		t.Fatalf("stale update on another server = %v, want a 409 conflict", err)
	}
}

func hasCM(items []corev1.ConfigMap, name string) bool {
	for _, c := range items {
		if c.Name == name {
			return true
		}
	}
	return false
}

// followerWatch watches on the third server while the first writes.
func followerWatch(t *testing.T, ctx context.Context, servers []*testutil.Server) {
	list, err := servers[2].Clientset.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := servers[2].Clientset.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for i := 0; i < 20; i++ {
		if _, err := servers[0].Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm(fmt.Sprintf("w-%d", i)), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	last := int64(0)
	for i := 0; i < 20; i++ {
		select {
		case ev := <-w.ResultChan():
			c, ok := ev.Object.(*corev1.ConfigMap)
			if !ok || ev.Type != watch.Added || c.Name != fmt.Sprintf("w-%d", i) {
				t.Fatalf("event %d on the follower = %s %v, want ADDED w-%d", i, ev.Type, ev.Object, i)
			}
			rv, _ := strconv.ParseInt(c.ResourceVersion, 10, 64)
			if rv <= last {
				t.Fatalf("resourceVersion %d after %d", rv, last)
			}
			last = rv
		case <-time.After(30 * time.Second):
			t.Fatalf("the follower's watch delivered %d of 20 events", i)
		}
	}
}

// leaderKill SIGKILLs the leader during writes and checks nothing
// acknowledged is lost and the restarted server catches up.
func leaderKill(t *testing.T, ctx context.Context, servers []*testutil.Server) {
	l, err := leaderLease(ctx, servers[1].Clientset)
	if err != nil {
		t.Fatal(err)
	}
	leader := leaderIndex(t, ctx, servers, *l.Spec.HolderIdentity)
	others := []*testutil.Server{servers[(leader+1)%3], servers[(leader+2)%3]}
	var acked []string
	for i := 0; i < 10; i++ {
		name := fmt.Sprintf("k-%d", i)
		if _, err := others[i%2].Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, name)
	}
	servers[leader].Kill()
	eventually(t, "a write after the leader's SIGKILL", time.Minute, func() error {
		_, err := others[0].Clientset.CoreV1().ConfigMaps(ns).Create(ctx, cm("after-kill"), metav1.CreateOptions{})
		return err
	})
	acked = append(acked, "after-kill")
	for _, s := range others {
		for _, name := range acked {
			if _, err := s.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
				t.Fatalf("acknowledged %s lost after the leader's SIGKILL: %v", name, err)
			}
		}
	}
	servers[leader].Restart()
	for _, name := range acked {
		if _, err := servers[leader].Clientset.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Fatalf("the restarted server misses %s: %v", name, err)
		}
	}
	eventually(t, "three voters again", time.Minute, func() error {
		l, err := leaderLease(ctx, others[0].Clientset)
		if err == nil && voters(l) != 3 {
			err = fmt.Errorf("%s", l.Annotations["orch.io/raft-members"])
		}
		return err
	})
}

// leaderIndex finds which server's Raft ID the leader lease names.
func leaderIndex(t *testing.T, ctx context.Context, servers []*testutil.Server, id string) int {
	for i, s := range servers {
		l, err := s.Clientset.CoordinationV1().Leases("kube-system").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range l.Items {
			if x.Annotations["orch.io/raft-id"] == id && x.Annotations["orch.io/node-name"] == fmt.Sprintf("ha-s%d", i+1) {
				return i
			}
		}
	}
	t.Fatalf("no server lease names raft ID %s", id)
	return -1
}

// nodeDeletion deletes the Node named like a server's node: that server
// leaves the Raft cluster.
func nodeDeletion(t *testing.T, ctx context.Context, servers []*testutil.Server) {
	c := servers[0].Clientset
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ha-s3"}}
	if _, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.CoreV1().Nodes().Delete(ctx, "ha-s3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "two voters after deleting node ha-s3", time.Minute, func() error {
		l, err := leaderLease(ctx, c)
		if err == nil && voters(l) != 2 {
			err = fmt.Errorf("%s", l.Annotations["orch.io/raft-members"])
		}
		return err
	})
	servers[2].Kill() // a removed server must not linger for the rest of the test
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm("after-removal"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("write with two voters left: %v", err)
	}
}

// secretsEverywhere: the joined servers encrypt with the cluster's config;
// a key rotation on one server reaches the others.
func secretsEverywhere(t *testing.T, ctx context.Context, servers []*testutil.Server) {
	secret := func(name string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"v": "plain-" + name}}
	}
	readAll := func(names ...string) {
		t.Helper()
		for _, s := range servers {
			for _, n := range names {
				got, err := s.Clientset.CoreV1().Secrets(ns).Get(ctx, n, metav1.GetOptions{})
				if err != nil || string(got.Data["v"]) != "plain-"+n {
					t.Fatalf("reading secret %s on a server: %v", n, err)
				}
			}
		}
	}
	if _, err := servers[1].Clientset.CoreV1().Secrets(ns).Create(ctx, secret("before"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	readAll("before")
	for _, cmd := range []string{"rotate-keys", "reencrypt"} {
		out, err := exec.CommandContext(ctx, testutil.Binary(t), "secrets-encrypt", cmd, "--data-dir", servers[0].DataDir,
			"--server", "https://127.0.0.1:"+strconv.Itoa(servers[0].HTTPSPort)).CombinedOutput()
		if err != nil {
			t.Fatalf("orch secrets-encrypt %s: %v\n%s", cmd, err, out)
		}
		if cmd == "rotate-keys" {
			checkSameConfigHash(t, ctx, servers)
		}
		name := "after-" + cmd
		if _, err := servers[2].Clientset.CoreV1().Secrets(ns).Create(ctx, secret(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		readAll("before", name)
	}
}

// checkSameConfigHash compares `orch secrets-encrypt status` of every server.
func checkSameConfigHash(t *testing.T, ctx context.Context, servers []*testutil.Server) {
	t.Helper()
	var first string
	for i, s := range servers {
		out, err := exec.CommandContext(ctx, testutil.Binary(t), "secrets-encrypt", "status", "--data-dir", s.DataDir,
			"--server", "https://127.0.0.1:"+strconv.Itoa(s.HTTPSPort)).CombinedOutput()
		if err != nil {
			t.Fatalf("status of server %d: %v\n%s", i+1, err, out)
		}
		_, hash, _ := strings.Cut(string(out), "Config Hash: ")
		hash, _, _ = strings.Cut(hash, "\n")
		if i == 0 {
			first = hash
		} else if hash != first || hash == "" {
			t.Fatalf("server %d has config hash %q after the rotation, server 1 %q:\n%s", i+1, hash, first, out)
		}
	}
}

// removeFlag stops the second server and runs `orch server --remove` on its
// data dir: it leaves the cluster, and the first server goes on alone.
func removeFlag(t *testing.T, ctx context.Context, servers []*testutil.Server) {
	if err := servers[1].Stop(); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, testutil.Binary(t), append(servers[1].Args(), "--remove")...).CombinedOutput()
	if err != nil {
		t.Fatalf("orch server --remove: %v\n%s", err, out)
	}
	c := servers[0].Clientset
	eventually(t, "one voter after --remove", time.Minute, func() error {
		l, err := leaderLease(ctx, c)
		if err == nil && voters(l) != 1 {
			err = fmt.Errorf("%s", l.Annotations["orch.io/raft-members"])
		}
		return err
	})
	if _, err := c.CoreV1().ConfigMaps(ns).Create(ctx, cm("alone"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("write on the last server: %v", err)
	}
	out, err = exec.CommandContext(ctx, testutil.Binary(t), append(servers[0].Args(), "--remove")...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "another orch server running") {
		t.Fatalf("--remove on the data dir of a running server = %v\n%s", err, out)
	}
	if err := servers[0].Stop(); err != nil {
		t.Fatal(err)
	}
	out, err = exec.CommandContext(ctx, testutil.Binary(t), append(servers[0].Args(), "--remove")...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "only member") {
		t.Fatalf("--remove of the running last member = %v\n%s", err, out)
	}
}
