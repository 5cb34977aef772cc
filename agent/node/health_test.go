package node

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/orch/orch/internal/handlermux"
)

func TestPressure(t *testing.T) {
	gi := uint64(1 << 30)
	okFS := FSStats{Avail: 50 * gi, Total: 100 * gi, InodesFree: 900, Inodes: 1000}
	base := Sample{MemAvailable: 1 << 30, NodeFS: okFS, ImageFS: okFS, PIDs: 1000, PIDLimit: 100000}
	for _, tc := range []struct {
		name            string
		mod             func(*Sample)
		mem, disk, pids bool
	}{
		{"healthy", func(*Sample) {}, false, false, false},
		{"memory below 100Mi", func(s *Sample) { s.MemAvailable = 99 << 20 }, true, false, false},
		{"memory exactly 100Mi", func(s *Sample) { s.MemAvailable = 100 << 20 }, false, false, false},
		{"memory not measured", func(s *Sample) { s.MemAvailable = -1 }, false, false, false},
		{"nodefs 9% free", func(s *Sample) { s.NodeFS.Avail = 9 * gi }, false, true, false},
		{"nodefs 11% free", func(s *Sample) { s.NodeFS.Avail = 11 * gi }, false, false, false},
		{"imagefs 14% free", func(s *Sample) { s.ImageFS.Avail = 14 * gi }, false, true, false},
		{"imagefs 16% free", func(s *Sample) { s.ImageFS.Avail = 16 * gi }, false, false, false},
		{"nodefs inodes 4% free", func(s *Sample) { s.NodeFS.InodesFree = 40 }, false, true, false},
		{"imagefs not measured", func(s *Sample) { s.ImageFS = FSStats{} }, false, false, false},
		{"pids 96% used", func(s *Sample) { s.PIDs = 96000 }, false, false, true},
		{"pids 94% used", func(s *Sample) { s.PIDs = 94000 }, false, false, false},
	} {
		s := base
		tc.mod(&s)
		mem, disk, pids := DefaultThresholds.Pressure(s)
		if mem != tc.mem || disk != tc.disk || pids != tc.pids {
			t.Errorf("%s: pressure mem=%v disk=%v pid=%v, want %v %v %v", tc.name, mem, disk, pids, tc.mem, tc.disk, tc.pids)
		}
	}
}

func TestHostSampleFromFakeProc(t *testing.T) {
	proc := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(proc, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("meminfo", "MemTotal:        4000000 kB\nMemFree:          100000 kB\nMemAvailable:      81920 kB\n")
	write("loadavg", "0.10 0.20 0.30 2/31000 12345\n")
	write("sys/kernel/pid_max", "4194304\n")
	write("sys/kernel/threads-max", "32000\n")
	s := HostSample(proc, proc, "")
	if s.MemAvailable != 81920*1024 || s.PIDs != 31000 || s.PIDLimit != 32000 || s.NodeFS.Total == 0 || s.ImageFS.Total != 0 {
		t.Fatalf("sample %+v", s)
	}
	mem, _, pids := DefaultThresholds.Pressure(s)
	if !mem || !pids {
		t.Errorf("80Mi available and 31000/32000 threads: mem=%v pid=%v, want both", mem, pids)
	}
	if s := HostSample(filepath.Join(proc, "missing"), "/nonexistent", ""); s.MemAvailable != -1 || s.PIDLimit != 0 || s.NodeFS.Total != 0 {
		t.Errorf("unreadable host gave %+v", s)
	}
}

func TestCheckerReady(t *testing.T) {
	down := errors.New("boom")
	for _, tc := range []struct {
		name        string
		rt, network error
		want        string
		repaired    bool
	}{
		{"ready", nil, nil, "", false},
		{"runtime down", down, nil, "container runtime is down", false},
		{"network missing", nil, errors.New("bridge orch0 is missing"),
			"container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:bridge orch0 is missing", true},
		{"both", down, errors.New("bridge orch0 is missing"), "[container runtime is down, container runtime network not ready:", true},
	} {
		repaired := false
		c := &Checker{Log: zaptest.NewLogger(t), NodeFS: t.TempDir(),
			Runtime: func(context.Context) error { return tc.rt },
			Network: func() error { return tc.network },
			Repair:  func() error { repaired = true; return nil }}
		h := c.Health(context.Background())
		if (tc.want == "") != (h.NotReady == "") || !strings.HasPrefix(h.NotReady, tc.want) || repaired != tc.repaired {
			t.Errorf("%s: NotReady %q repaired %v, want %q %v", tc.name, h.NotReady, repaired, tc.want, tc.repaired)
		}
		conds := Conditions(nil, h, metav1.Now())
		ready := conds[len(conds)-1]
		if tc.want != "" && (ready.Status != corev1.ConditionFalse || ready.Reason != "KubeletNotReady" || ready.Message != h.NotReady) {
			t.Errorf("%s: Ready condition %+v", tc.name, ready)
		}
	}
}

func TestCheckerRuntimeTimeout(t *testing.T) {
	c := &Checker{Timeout: 50 * time.Millisecond, NodeFS: t.TempDir(),
		Runtime: func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }}
	if h := c.Health(context.Background()); h.NotReady != "container runtime is down" {
		t.Errorf("a hung runtime gave %q", h.NotReady)
	}
}

// TestKeepRegistered deletes the Node: it comes back with its labels,
// taints, capacity and the podCIDR the bridge uses; with a watch of its
// own or the Node of a shared factory.
func TestKeepRegistered(t *testing.T) {
	t.Setenv("KUBE_FEATURE_WatchListClient", "false")
	t.Run("own watch", func(t *testing.T) {
		testKeepRegistered(t, func(kubernetes.Interface) informers.SharedInformerFactory { return nil })
	})
	t.Run("shared", func(t *testing.T) {
		testKeepRegistered(t, func(c kubernetes.Interface) informers.SharedInformerFactory {
			shared := handlermux.NewShared(handlermux.Wrap(informers.NewSharedInformerFactory(c, 0), "", nil))
			t.Cleanup(shared.Stop)
			return shared.View()
		})
	})
}

func testKeepRegistered(t *testing.T, nodes func(kubernetes.Interface) informers.SharedInformerFactory) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	cfg := Config{Name: "n1", Labels: map[string]string{"role": "edge"},
		Taints: []corev1.Taint{{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}}, KubeletVersion: "v1.37.1",
		Capacity: corev1.ResourceList{corev1.ResourcePods: *resourceQty(110)}}
	log := zaptest.NewLogger(t)
	if _, err := Register(ctx, log, client, Build(cfg)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		KeepRegistered(ctx, log, client, nodes(client), cfg, "10.42.7.0/24", func(context.Context) Health { return Health{DiskPressure: true} })
	}()
	time.Sleep(200 * time.Millisecond) // the informer's initial list
	if err := client.CoreV1().Nodes().Delete(ctx, "n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var n *corev1.Node
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var err error
		if n, err = client.CoreV1().Nodes().Get(ctx, "n1", metav1.GetOptions{}); err == nil && n.Spec.PodCIDR != "" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n == nil || n.Spec.PodCIDR != "10.42.7.0/24" || n.Labels["role"] != "edge" || len(n.Spec.Taints) != 1 ||
		n.Status.Capacity.Pods().Value() != 110 {
		t.Fatalf("re-registered node %+v", n)
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeDiskPressure && c.Status != corev1.ConditionTrue {
			t.Errorf("conditions not from the current health: %+v", c)
		}
	}
	cancel()
	<-done
}

func resourceQty(v int64) *resource.Quantity { return resource.NewQuantity(v, resource.DecimalSI) }

// TestRegisterKeepingCIDRFallsBack: a server refusing the node-set podCIDR
// gets the Node without one.
func TestRegisterKeepingCIDRFallsBack(t *testing.T) {
	client := fake.NewClientset()
	client.PrependReactor("create", "nodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		n := a.(k8stesting.CreateAction).GetObject().(*corev1.Node)
		if n.Spec.PodCIDR != "" {
			return true, nil, apierrors.NewForbidden(corev1.Resource("nodes"), n.Name, errors.New("no podCIDR from nodes"))
		}
		return false, nil, nil
	})
	want := Build(Config{Name: "n2"})
	want.Spec.PodCIDR, want.Spec.PodCIDRs = "10.42.9.0/24", []string{"10.42.9.0/24"}
	if err := registerKeepingCIDR(context.Background(), zaptest.NewLogger(t), client, want); err != nil {
		t.Fatal(err)
	}
	n, err := client.CoreV1().Nodes().Get(context.Background(), "n2", metav1.GetOptions{})
	if err != nil || n.Spec.PodCIDR != "" {
		t.Fatalf("node %+v, %v", n, err)
	}
}

// TestHeartbeatPostsHealthChanges: the Lease is renewed and a change of
// health reaches the Node's Ready condition without waiting for the status
// period.
func TestHeartbeatPostsHealthChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset()
	if _, err := Register(ctx, zaptest.NewLogger(t), client, Build(Config{Name: "n3"})); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	h := Health{}
	health := func(context.Context) Health { mu.Lock(); defer mu.Unlock(); return h }
	done := make(chan struct{})
	go func() {
		defer close(done)
		Heartbeat(ctx, zaptest.NewLogger(t), client, Config{Name: "n3", HeartbeatPeriod: 20 * time.Millisecond, StatusPeriod: time.Hour}, health)
	}()
	readyIs := func(want corev1.ConditionStatus, msg string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			n, err := client.CoreV1().Nodes().Get(ctx, "n3", metav1.GetOptions{})
			if err == nil {
				for _, c := range n.Status.Conditions {
					if c.Type == corev1.NodeReady && c.Status == want && c.Message == msg {
						return
					}
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("Ready never became %s %q", want, msg)
	}
	readyIs(corev1.ConditionTrue, "orch agent is posting ready status")
	mu.Lock()
	h = Health{NotReady: "container runtime is down"}
	mu.Unlock()
	readyIs(corev1.ConditionFalse, "container runtime is down")
	if l, err := client.CoordinationV1().Leases(LeaseNamespace).Get(ctx, "n3", metav1.GetOptions{}); err != nil || l.Spec.RenewTime == nil {
		t.Errorf("lease %+v, %v", l, err)
	}
	cancel()
	<-done
}
