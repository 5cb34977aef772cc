package kubelet

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/runtime"
)

func TestSyncRunsInitThenApp(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("web", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1.36"}}
	}))
	h.sync("web")
	p := h.pod("web")
	if p.Status.Phase != corev1.PodPending || p.Status.PodIP == "" || p.Status.HostIP != "192.0.2.10" {
		t.Fatalf("after first sync: phase %s podIP %q hostIP %q", p.Status.Phase, p.Status.PodIP, p.Status.HostIP)
	}
	if got := p.Status.ContainerStatuses[0].State.Waiting; got == nil || got.Reason != "PodInitializing" {
		t.Fatalf("app container state = %+v, want waiting PodInitializing", p.Status.ContainerStatuses[0].State)
	}
	if len(h.rt.Calls) != 2 || !strings.HasPrefix(h.rt.Calls[0], "create") {
		t.Fatalf("runtime calls = %v, want create+start of the init container only", h.rt.Calls)
	}
	h.exit("web", "init", 0, 0, false)
	h.sync("web")
	p = h.pod("web")
	if p.Status.Phase != corev1.PodRunning || condition(p, corev1.PodReady) != corev1.ConditionTrue || condition(p, corev1.PodInitialized) != corev1.ConditionTrue {
		t.Fatalf("phase %s ready %s initialized %s", p.Status.Phase, condition(p, corev1.PodReady), condition(p, corev1.PodInitialized))
	}
	if ics := p.Status.InitContainerStatuses[0]; ics.State.Terminated == nil || !ics.Ready {
		t.Fatalf("init container status = %+v, want terminated and ready", ics)
	}
	cs := p.Status.ContainerStatuses[0]
	if cs.State.Running == nil || !cs.Ready || cs.ImageID == "" || !strings.HasPrefix(cs.ContainerID, "containerd://") {
		t.Fatalf("container status = %+v", cs)
	}
	if p.Status.QOSClass != corev1.PodQOSBestEffort || p.Status.StartTime == nil {
		t.Fatalf("qos %s startTime %v", p.Status.QOSClass, p.Status.StartTime)
	}
	ev := h.events()
	for _, want := range []string{"Pulling", "Pulled", "Created", "Started"} {
		if !strings.Contains(ev, want) {
			t.Errorf("events lack %s:\n%s", want, ev)
		}
	}
	// A third sync changes nothing: no new runtime calls, no status write.
	before := len(h.rt.Calls)
	rv := p.ResourceVersion
	h.sync("web")
	if len(h.rt.Calls) != before || h.pod("web").ResourceVersion != rv {
		t.Fatalf("idle sync changed something: calls %v", h.rt.Calls[before:])
	}
}

// TestInitContainersWaitInPodInitializing: init containers not yet created
// wait with reason PodInitializing, as upstream's kubelet reports them
// (conformance: init containers fail on a RestartAlways pod).
func TestInitContainersWaitInPodInitializing(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("web", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "init1", Image: "busybox:1.36"}, {Name: "init2", Image: "busybox:1.36"}}
	}))
	h.sync("web")
	h.exit("web", "init1", 0, 1, false)
	h.sync("web")
	p := h.pod("web")
	if len(p.Status.InitContainerStatuses) != 2 {
		t.Fatalf("init statuses %+v", p.Status.InitContainerStatuses)
	}
	if w := p.Status.InitContainerStatuses[1].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Fatalf("second init container %+v, want waiting PodInitializing", p.Status.InitContainerStatuses[1].State)
	}
	if w := p.Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "PodInitializing" {
		t.Fatalf("app container %+v, want waiting PodInitializing", p.Status.ContainerStatuses[0].State)
	}
}

func TestSidecarKeepsRunning(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("sc", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "proxy", Image: "busybox:1.36", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
	}))
	h.sync("sc")
	p := h.pod("sc")
	if p.Status.Phase != corev1.PodRunning || p.Status.InitContainerStatuses[0].State.Running == nil || p.Status.ContainerStatuses[0].State.Running == nil {
		t.Fatalf("sidecar pod: phase %s init %+v app %+v", p.Status.Phase, p.Status.InitContainerStatuses[0].State, p.Status.ContainerStatuses[0].State)
	}
}

func TestCrashLoopBackOff(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("crash"))
	h.sync("crash")
	h.exit("crash", "app", 0, 1, false)
	if after := h.sync("crash"); after != 0 {
		t.Fatalf("first restart should be immediate, requeue %v", after)
	}
	p := h.pod("crash")
	cs := p.Status.ContainerStatuses[0]
	if cs.RestartCount != 1 || cs.State.Running == nil || cs.LastTerminationState.Terminated == nil || cs.LastTerminationState.Terminated.ExitCode != 1 {
		t.Fatalf("after first restart: %+v", cs)
	}
	h.exit("crash", "app", 1, 1, false)
	after := h.sync("crash")
	cs = h.pod("crash").Status.ContainerStatuses[0]
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != "CrashLoopBackOff" || after <= 0 || after > 10*time.Second {
		t.Fatalf("want CrashLoopBackOff for 10s, got %+v requeue %v", cs.State, after)
	}
	if !strings.Contains(cs.State.Waiting.Message, "back-off 10s restarting failed container=app pod=crash_default(uid-crash)") {
		t.Fatalf("message %q", cs.State.Waiting.Message)
	}
	if h.pod("crash").Status.Phase != corev1.PodRunning {
		t.Fatalf("phase %s, want Running", h.pod("crash").Status.Phase)
	}
	h.offset += 11 * time.Second
	h.sync("crash")
	cs = h.pod("crash").Status.ContainerStatuses[0]
	if cs.RestartCount != 2 || cs.State.Running == nil {
		t.Fatalf("after back-off: %+v", cs)
	}
	if _, err := h.rt.ContainerStatus(t.Context(), runtime.ContainerID("uid-crash", "app", 0)); err == nil {
		t.Fatal("instance 0 should have been removed (only the previous one is kept)")
	}
}

func TestOOMKilledNever(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("oom", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }))
	h.sync("oom")
	h.exit("oom", "app", 0, 137, true)
	h.sync("oom")
	p := h.pod("oom")
	term := p.Status.ContainerStatuses[0].State.Terminated
	if p.Status.Phase != corev1.PodFailed || term == nil || term.Reason != "OOMKilled" || term.ExitCode != 137 {
		t.Fatalf("phase %s terminated %+v", p.Status.Phase, term)
	}
	h.sync("oom") // terminal: network released
	if ids, _ := h.net.PodIDs(); len(ids) != 0 {
		t.Fatalf("network of a finished pod kept: %v", ids)
	}
}

func TestOnFailureSucceeds(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("job", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure }))
	h.sync("job")
	h.exit("job", "app", 0, 0, false)
	h.sync("job")
	if p := h.pod("job"); p.Status.Phase != corev1.PodSucceeded || condition(p, corev1.PodReady) != corev1.ConditionFalse {
		t.Fatalf("phase %s", p.Status.Phase)
	}
}

func TestInitFailureNeverFailsPod(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("bad", func(p *corev1.Pod) {
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox:1.36"}}
	}))
	h.sync("bad")
	h.exit("bad", "init", 0, 2, false)
	h.sync("bad")
	p := h.pod("bad")
	if p.Status.Phase != corev1.PodFailed {
		t.Fatalf("phase %s, want Failed", p.Status.Phase)
	}
	for _, c := range h.rt.Calls {
		if strings.Contains(c, "_app_") || strings.Contains(c, "app") && strings.HasPrefix(c, "create") {
			t.Fatalf("app container created after init failure: %v", h.rt.Calls)
		}
	}
}

func TestAdmissionRejects(t *testing.T) {
	h := newHarness(t)
	big := func(cpu string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		}
	}
	h.add(testPod("a", big("1500m")))
	h.sync("a")
	h.add(testPod("b", big("1")))
	h.sync("b")
	p := h.pod("b")
	if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "OutOfcpu" ||
		p.Status.Message != "Node didn't have enough resource: cpu, requested: 1000, used: 1500, capacity: 2000" {
		t.Fatalf("phase %s reason %s message %q", p.Status.Phase, p.Status.Reason, p.Status.Message)
	}
	if len(h.rt.Calls) != 2 {
		t.Fatalf("rejected pod touched the runtime: %v", h.rt.Calls)
	}
}

func TestImagePullBackOff(t *testing.T) {
	h := newHarness(t)
	h.img.fail["nope:1"] = true
	h.add(testPod("img", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nope:1" }))
	after := h.sync("img")
	w := h.pod("img").Status.ContainerStatuses[0].State.Waiting
	if w == nil || w.Reason != "ErrImagePull" || after != 10*time.Second {
		t.Fatalf("waiting %+v requeue %v", w, after)
	}
	h.offset += 2 * time.Second
	h.sync("img")
	if w := h.pod("img").Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ImagePullBackOff" {
		t.Fatalf("waiting %+v, want ImagePullBackOff", w)
	}
	delete(h.img.fail, "nope:1")
	h.offset += 10 * time.Second
	h.sync("img")
	if p := h.pod("img"); p.Status.Phase != corev1.PodRunning {
		t.Fatalf("phase %s after the image appeared", p.Status.Phase)
	}
	if ev := h.events(); !strings.Contains(ev, "Failed to pull image") || !strings.Contains(ev, "BackOff") {
		t.Fatalf("events:\n%s", ev)
	}
}

func TestTerminateCleansUpAndDeletes(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("del"))
	h.sync("del")
	p := h.pod("del")
	now := metav1.Now()
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, ptr.To(int64(5))
	if _, err := h.client.CoreV1().Pods("default").Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync("del")
	if list, _ := h.rt.ListContainers(t.Context(), ""); len(list) != 0 {
		t.Fatalf("containers left: %v", list)
	}
	if ids, _ := h.net.PodIDs(); len(ids) != 0 {
		t.Fatalf("network left: %v", ids)
	}
	if len(h.cg.removed) != 1 {
		t.Fatalf("cgroup not removed")
	}
	if _, err := h.client.CoreV1().Pods("default").Get(t.Context(), "del", metav1.GetOptions{}); err == nil {
		t.Fatal("pod object not deleted")
	}
	if !strings.Contains(h.events(), "Killing") {
		t.Fatal("no Killing event")
	}
}

func TestDeadlineExceeded(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("dl", func(p *corev1.Pod) { p.Spec.ActiveDeadlineSeconds = ptr.To(int64(30)) }))
	if after := h.sync("dl"); after != 0 {
		t.Logf("requeue %v", after)
	}
	h.offset += 31 * time.Second
	h.sync("dl")
	p := h.pod("dl")
	if p.Status.Phase != corev1.PodFailed || p.Status.Reason != "DeadlineExceeded" {
		t.Fatalf("phase %s reason %s", p.Status.Phase, p.Status.Reason)
	}
}

func TestAdoptDoesNotRestart(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("keep"))
	h.sync("keep")
	calls := len(h.rt.Calls)
	// A new agent over the same runtime and network.
	h2 := newHarness(t)
	h2.rt, h2.net, h2.client = h.rt, h.net, h.client
	h2.k.cfg.Runtime, h2.k.cfg.Network, h2.k.cfg.Client = h.rt, h.net, h.client
	_ = h2.indexer.Add(h.pod("keep"))
	h2.k.adopt(t.Context())
	h2.sync("keep")
	if len(h.rt.Calls) != calls {
		t.Fatalf("adopted pod's containers touched: %v", h.rt.Calls[calls:])
	}
	if p := h.pod("keep"); p.Status.Phase != corev1.PodRunning {
		t.Fatalf("phase %s", p.Status.Phase)
	}
}

func TestOrphansCollected(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("gone"))
	h.sync("gone")
	if err := h.client.CoreV1().Pods("default").Delete(t.Context(), "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = h.indexer.Delete(h.k.pods["uid-gone"])
	obj, _, _ := h.indexer.GetByKey("default/gone")
	_ = h.indexer.Delete(obj)
	h.k.collectOrphans(t.Context())
	if list, _ := h.rt.ListContainers(t.Context(), ""); len(list) != 0 {
		t.Fatalf("containers left: %v", list)
	}
	if ids, _ := h.net.PodIDs(); len(ids) != 0 {
		t.Fatalf("network left: %v", ids)
	}
}

// TestSidecarStopsLast: deleting a pod stops its app containers (and runs
// their preStop hooks) before its native sidecars, as kubelet does.
func TestSidecarStopsLast(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("scd", func(p *corev1.Pod) {
		p.Spec.InitContainers = []corev1.Container{{Name: "proxy", Image: "busybox:1.36", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}}
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "app2", Image: "busybox:1.36"})
	}))
	h.sync("scd")
	p := h.pod("scd")
	now := metav1.Now()
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, ptr.To(int64(5))
	if _, err := h.client.CoreV1().Pods("default").Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	before := len(h.rt.Calls)
	h.sync("scd")
	var stops []string
	for _, c := range h.rt.Calls[before:] {
		if strings.HasPrefix(c, "stop ") {
			stops = append(stops, c)
		}
	}
	if len(stops) != 3 || stops[2] != "stop "+runtime.ContainerID("uid-scd", "proxy", 0) {
		t.Fatalf("stop order %v, want the sidecar last", stops)
	}
}

// TestStatusFromStaleInformer: the informer still holds the pod from
// before the agent wrote Ready=True when the container exits; the next
// write must still turn Ready to False (a patch from the stale copy,
// where Ready was already False, left it True).
func TestStatusFromStaleInformer(t *testing.T) {
	h := newHarness(t)
	h.img.fail["late:1"] = true
	h.add(testPod("stale", func(p *corev1.Pod) {
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Spec.Containers[0].Image = "late:1"
	}))
	h.sync("stale")
	if p := h.pod("stale"); condition(p, corev1.PodReady) != corev1.ConditionFalse {
		t.Fatalf("Ready %s while the image is missing", condition(p, corev1.PodReady))
	}
	delete(h.img.fail, "late:1")
	h.offset += 10 * time.Second
	h.sync("stale") // the lister holds the Ready=False version from here on
	if p := h.pod("stale"); condition(p, corev1.PodReady) != corev1.ConditionTrue {
		t.Fatalf("Ready %s with the container running", condition(p, corev1.PodReady))
	}
	h.exit("stale", "app", 0, 0, false)
	h.syncStale("stale")
	p := h.pod("stale")
	if p.Status.Phase != corev1.PodSucceeded || condition(p, corev1.PodReady) != corev1.ConditionFalse ||
		condition(p, corev1.ContainersReady) != corev1.ConditionFalse {
		t.Fatalf("phase %s Ready %s ContainersReady %s, want Succeeded False False", p.Status.Phase,
			condition(p, corev1.PodReady), condition(p, corev1.ContainersReady))
	}
}
