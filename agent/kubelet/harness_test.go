package kubelet

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	listersv1 "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/orch/orch/agent/images"
	"github.com/orch/orch/agent/network"
	"github.com/orch/orch/agent/runtime"
)

type fakeCgroups struct {
	mu      sync.Mutex
	pods    map[types.UID]bool
	removed []types.UID
}

var _ Cgroups = (*fakeCgroups)(nil)

func (f *fakeCgroups) EnsurePod(p *corev1.Pod) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods[p.UID] = true
	return "/orch/kubepods/pod" + string(p.UID), nil
}

func (f *fakeCgroups) RemovePod(_ context.Context, uid types.UID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.pods, uid)
	f.removed = append(f.removed, uid)
	return nil
}

func (f *fakeCgroups) PodCgroups() ([]types.UID, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []types.UID
	for u := range f.pods {
		out = append(out, u)
	}
	return out, nil
}

func (f *fakeCgroups) OOMScoreAdj(want int) int { return want }

func (f *fakeCgroups) ContainerUnified() map[string]string { return nil }

type fakeImages struct{ fail map[string]bool }

func (f *fakeImages) EnsureImage(_ context.Context, ref string, _ corev1.PullPolicy, _ *images.Auth) (ImageInfo, error) {
	if f.fail[ref] {
		return ImageInfo{}, &images.PullError{Ref: ref, Err: context.DeadlineExceeded}
	}
	return ImageInfo{Ref: "docker.io/library/" + ref, ID: "docker.io/library/" + ref + "@sha256:abc"}, nil
}

func (f *fakeImages) Present(context.Context, string) bool { return false }

type harness struct {
	t       *testing.T
	k       *Kubelet
	rt      *runtime.Fake
	net     *network.Fake
	cg      *fakeCgroups
	img     *fakeImages
	client  *fake.Clientset
	indexer cache.Indexer
	rec     *record.FakeRecorder
	offset  time.Duration
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	n, err := network.NewFake("10.244.1.0/24")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, rt: runtime.NewFake(), net: n, cg: &fakeCgroups{pods: map[types.UID]bool{}},
		img: &fakeImages{fail: map[string]bool{}}, client: fake.NewSimpleClientset(),
		indexer: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}), rec: record.NewFakeRecorder(1000)}
	k, err := New(Config{NodeName: "n1", Client: h.client, Runtime: h.rt, Network: h.net, Cgroups: h.cg, Images: h.img,
		Volumes: DirVolumes{PodsDir: t.TempDir()}, Recorder: h.rec, PodsDir: t.TempDir(),
		DNS: DNS{ClusterDNS: "10.43.0.10", ClusterDomain: "cluster.local"}, HostIP: "192.0.2.10",
		Allocatable:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("2Gi"), corev1.ResourcePods: resource.MustParse("3")},
		MemoryCapacity: 2 << 30, Now: func() time.Time { return time.Now().Add(h.offset) }, Log: zaptest.NewLogger(t),
		Env: func(context.Context, *corev1.Pod, *corev1.Container, string) ([]string, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	h.client.PrependReactor("*", "*", k8stesting.ObjectReaction(&rvTracker{ObjectTracker: h.client.Tracker()}))
	k.lister = listersv1.NewPodLister(h.indexer)
	t.Cleanup(k.queue.ShutDown)
	h.k = k
	return h
}

// rvTracker gives every stored version of an object a new
// resourceVersion, as the API server does (the fake's tracker counts
// versions but leaves metadata.resourceVersion empty).
type rvTracker struct {
	k8stesting.ObjectTracker
	rv atomic.Int64
}

func (r *rvTracker) stamp(obj kruntime.Object) kruntime.Object {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetResourceVersion(strconv.FormatInt(r.rv.Add(1), 10))
	}
	return obj
}

func (r *rvTracker) Add(obj kruntime.Object) error {
	return r.ObjectTracker.Add(r.stamp(obj.DeepCopyObject()))
}

func (r *rvTracker) Create(gvr schema.GroupVersionResource, obj kruntime.Object, ns string, opts ...metav1.CreateOptions) error {
	return r.ObjectTracker.Create(gvr, r.stamp(obj.DeepCopyObject()), ns, opts...)
}

func (r *rvTracker) Update(gvr schema.GroupVersionResource, obj kruntime.Object, ns string, opts ...metav1.UpdateOptions) error {
	return r.ObjectTracker.Update(gvr, r.stamp(obj.DeepCopyObject()), ns, opts...)
}

// Patch stamps obj itself: the reaction returns it.
func (r *rvTracker) Patch(gvr schema.GroupVersionResource, obj kruntime.Object, ns string, opts ...metav1.PatchOptions) error {
	return r.ObjectTracker.Patch(gvr, r.stamp(obj), ns, opts...)
}

func testPod(name string, mutate ...func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: corev1.PodSpec{NodeName: "n1", RestartPolicy: corev1.RestartPolicyAlways,
			Containers: []corev1.Container{{Name: "app", Image: "busybox:1.36"}}},
	}
	for _, m := range mutate {
		m(p)
	}
	return p
}

func (h *harness) add(p *corev1.Pod) {
	h.t.Helper()
	if _, err := h.client.CoreV1().Pods(p.Namespace).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		h.t.Fatal(err)
	}
}

// syncStale syncs the pod once with the lister's copy as it is: an
// informer that has not yet seen the agent's last writes.
func (h *harness) syncStale(name string) {
	h.t.Helper()
	if _, err := h.k.syncKey(context.Background(), "default/"+name); err != nil {
		h.t.Fatalf("sync %s: %v", name, err)
	}
}

// sync copies the API's pod into the lister and syncs it once.
func (h *harness) sync(name string) time.Duration {
	h.t.Helper()
	p, err := h.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err == nil {
		_ = h.indexer.Update(p)
	} else if obj, ok, _ := h.indexer.GetByKey("default/" + name); ok {
		_ = h.indexer.Delete(obj)
	}
	after, err := h.k.syncKey(context.Background(), "default/"+name)
	if err != nil {
		h.t.Fatalf("sync %s: %v", name, err)
	}
	return after
}

func (h *harness) pod(name string) *corev1.Pod {
	h.t.Helper()
	p, err := h.client.CoreV1().Pods("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) exit(name, container string, restart, code int, oom bool) {
	h.t.Helper()
	if err := h.rt.Exit(runtime.ContainerID("uid-"+name, container, restart), code, oom); err != nil {
		h.t.Fatal(err)
	}
}

func (h *harness) events() string {
	var out []string
	for {
		select {
		case e := <-h.rec.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}

func condition(p *corev1.Pod, t corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == t {
			return c.Status
		}
	}
	return ""
}
