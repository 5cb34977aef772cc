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

func TestCrashBackoff(t *testing.T) {
	for _, tc := range []struct {
		restarts int
		ran      time.Duration
		want     time.Duration
	}{
		{0, time.Second, 0}, {1, time.Second, 10 * time.Second}, {2, 0, 20 * time.Second},
		{3, 0, 40 * time.Second}, {6, 0, 5 * time.Minute}, {50, 0, 5 * time.Minute}, {4, 11 * time.Minute, 0},
	} {
		if got := crashBackoff(tc.restarts, tc.ran); got != tc.want {
			t.Errorf("crashBackoff(%d, %v) = %v, want %v", tc.restarts, tc.ran, got, tc.want)
		}
	}
}

func TestDecide(t *testing.T) {
	now := time.Now()
	exited := func(restarts, code int, ago time.Duration) *containerView {
		c := runtime.ContainerStatus{ID: "x", RestartCount: restarts, State: runtime.StateExited, ExitCode: code,
			StartedAt: now.Add(-ago - time.Second), FinishedAt: now.Add(-ago)}
		return &containerView{latest: &c}
	}
	running := &containerView{latest: &runtime.ContainerStatus{State: runtime.StateRunning, RestartCount: 3}}
	created := &containerView{latest: &runtime.ContainerStatus{State: runtime.StateCreated, RestartCount: 2}}
	for _, tc := range []struct {
		name   string
		policy corev1.RestartPolicy
		v      *containerView
		want   decision
	}{
		{"new", corev1.RestartPolicyAlways, nil, decision{act: actStart}},
		{"created", corev1.RestartPolicyAlways, created, decision{act: actStart, restartCount: 2}},
		{"running", corev1.RestartPolicyAlways, running, decision{act: actNone}},
		{"first crash restarts at once", corev1.RestartPolicyAlways, exited(0, 1, 0), decision{act: actStart, restartCount: 1}},
		{"second crash waits", corev1.RestartPolicyAlways, exited(1, 1, 4*time.Second), decision{act: actWait, restartCount: 1, wait: 6 * time.Second}},
		{"back-off over", corev1.RestartPolicyAlways, exited(1, 1, 10*time.Second), decision{act: actStart, restartCount: 2}},
		{"success with Always restarts", corev1.RestartPolicyAlways, exited(0, 0, 0), decision{act: actStart, restartCount: 1}},
		{"success with OnFailure stays", corev1.RestartPolicyOnFailure, exited(0, 0, 0), decision{act: actNone}},
		{"failure with OnFailure restarts", corev1.RestartPolicyOnFailure, exited(0, 2, 0), decision{act: actStart, restartCount: 1}},
		{"failure with Never stays", corev1.RestartPolicyNever, exited(0, 2, 0), decision{act: actNone}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := decide(tc.policy, tc.v, now); got != tc.want {
				t.Errorf("decide = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestContainerPolicy(t *testing.T) {
	pod := testPod("p", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever })
	sidecar := corev1.Container{RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}
	if got := containerPolicy(pod, &sidecar, true); got != corev1.RestartPolicyAlways {
		t.Errorf("sidecar policy %s", got)
	}
	if got := containerPolicy(pod, &corev1.Container{}, true); got != corev1.RestartPolicyNever {
		t.Errorf("init policy under Never: %s", got)
	}
	pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
	if got := containerPolicy(pod, &corev1.Container{}, true); got != corev1.RestartPolicyOnFailure {
		t.Errorf("init policy under Always: %s", got)
	}
}

func TestAdmit(t *testing.T) {
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1Gi"), corev1.ResourcePods: resource.MustParse("2")}
	req := func(cpu, mem string) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			r := corev1.ResourceList{}
			if cpu != "" {
				r[corev1.ResourceCPU] = resource.MustParse(cpu)
			}
			if mem != "" {
				r[corev1.ResourceMemory] = resource.MustParse(mem)
			}
			p.Spec.Containers[0].Resources.Requests = r
		}
	}
	port := func(ip string, n int32) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Containers[0].Ports = []corev1.ContainerPort{{HostIP: ip, HostPort: n, ContainerPort: 80}}
		}
	}
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		admitted []*corev1.Pod
		want     string
	}{
		{"fits", testPod("a", req("500m", "100Mi")), []*corev1.Pod{testPod("b", req("500m", ""))}, ""},
		{"cpu", testPod("a", req("600m", "")), []*corev1.Pod{testPod("b", req("500m", ""))}, "OutOfcpu"},
		{"memory", testPod("a", req("", "1Gi")), []*corev1.Pod{testPod("b", req("", "1Mi"))}, "OutOfmemory"},
		{"pods", testPod("a"), []*corev1.Pod{testPod("b"), testPod("c")}, "OutOfpods"},
		{"best effort always fits resources", testPod("a"), []*corev1.Pod{testPod("b", req("1", "1Gi"))}, ""},
		{"host port", testPod("a", port("", 8080)), []*corev1.Pod{testPod("b", port("10.0.0.1", 8080))}, "NodePorts"},
		{"other host port", testPod("a", port("", 8080)), []*corev1.Pod{testPod("b", port("", 8081))}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := admit(tc.pod, tc.admitted, alloc)
			switch {
			case tc.want == "" && got != nil:
				t.Fatalf("rejected: %+v", got)
			case tc.want != "" && (got == nil || got.Reason != tc.want):
				t.Fatalf("got %+v, want %s", got, tc.want)
			}
		})
	}
}

func TestResolvAndHosts(t *testing.T) {
	dns := DNS{ClusterDNS: "10.43.0.10", ClusterDomain: "cluster.local"}
	host := []byte("nameserver 192.0.2.53\nsearch example.com\noptions edns0\n")
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"cluster first", testPod("a"), "search default.svc.cluster.local svc.cluster.local cluster.local example.com\nnameserver 10.43.0.10\noptions ndots:5\n"},
		{"default", testPod("a", func(p *corev1.Pod) { p.Spec.DNSPolicy = corev1.DNSDefault }), "search example.com\nnameserver 192.0.2.53\noptions edns0\n"},
		{"host network falls back", testPod("a", func(p *corev1.Pod) { p.Spec.HostNetwork = true }), "search example.com\nnameserver 192.0.2.53\noptions edns0\n"},
		{"none", testPod("a", func(p *corev1.Pod) {
			p.Spec.DNSPolicy = corev1.DNSNone
			p.Spec.DNSConfig = &corev1.PodDNSConfig{Nameservers: []string{"1.1.1.1"}, Searches: []string{"x.y"},
				Options: []corev1.PodDNSConfigOption{{Name: "ndots", Value: ptr.To("2")}}}
		}), "search x.y\nnameserver 1.1.1.1\noptions ndots:2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(resolvFile(tc.pod, dns, host)); got != tc.want {
				t.Errorf("resolv.conf:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
	h := string(hostsFile(testPod("web", func(p *corev1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "w0", "svc" }), "10.244.1.5", "cluster.local"))
	if !strings.Contains(h, "127.0.0.1\tlocalhost\n") || !strings.Contains(h, "10.244.1.5\tw0.svc.default.svc.cluster.local\tw0\n") {
		t.Errorf("hosts:\n%s", h)
	}
}

func deleted(p *corev1.Pod) *corev1.Pod {
	p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	return p
}

func TestPhase(t *testing.T) {
	run := &containerView{latest: &runtime.ContainerStatus{ID: "r", State: runtime.StateRunning}}
	ok := &containerView{latest: &runtime.ContainerStatus{ID: "o", State: runtime.StateExited}}
	bad := &containerView{latest: &runtime.ContainerStatus{ID: "b", State: runtime.StateExited, ExitCode: 1}}
	two := func(policy corev1.RestartPolicy) *corev1.Pod {
		return testPod("p", func(p *corev1.Pod) {
			p.Spec.RestartPolicy = policy
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "busybox:1.36"})
		})
	}
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		views map[string]*containerView
		want  corev1.PodPhase
	}{
		{"nothing yet", two(corev1.RestartPolicyAlways), map[string]*containerView{}, corev1.PodPending},
		{"one waiting", two(corev1.RestartPolicyAlways), map[string]*containerView{"app": run}, corev1.PodPending},
		{"running", two(corev1.RestartPolicyAlways), map[string]*containerView{"app": run, "side": run}, corev1.PodRunning},
		{"one done one running", two(corev1.RestartPolicyNever), map[string]*containerView{"app": ok, "side": run}, corev1.PodRunning},
		{"all succeeded", two(corev1.RestartPolicyNever), map[string]*containerView{"app": ok, "side": ok}, corev1.PodSucceeded},
		{"one failed Never", two(corev1.RestartPolicyNever), map[string]*containerView{"app": ok, "side": bad}, corev1.PodFailed},
		{"all succeeded OnFailure", two(corev1.RestartPolicyOnFailure), map[string]*containerView{"app": ok, "side": ok}, corev1.PodSucceeded},
		{"deleted and stopped", deleted(two(corev1.RestartPolicyAlways)), map[string]*containerView{"app": bad, "side": ok}, corev1.PodFailed},
		{"deleted before starting", deleted(two(corev1.RestartPolicyNever)), map[string]*containerView{}, corev1.PodFailed},
		{"deleted after succeeding", deleted(two(corev1.RestartPolicyOnFailure)), map[string]*containerView{"app": ok, "side": ok}, corev1.PodSucceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := computeStatus(&statusInput{pod: tc.pod, views: tc.views, waiting: map[string]waiting{}, probes: NoProbes{}, now: time.Now(),
				deleted: tc.pod.DeletionTimestamp != nil})
			if st.Phase != tc.want {
				t.Errorf("phase %s, want %s", st.Phase, tc.want)
			}
		})
	}
}

// Conditions other writers own (an eviction's DisruptionTarget, readiness
// gates) survive the agent's status; its own are recomputed.
func TestStatusKeepsForeignConditions(t *testing.T) {
	bad := &containerView{latest: &runtime.ContainerStatus{ID: "b", State: runtime.StateExited, ExitCode: 137}}
	disrupted := corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "EvictionByEvictionAPI"}
	gate := corev1.PodCondition{Type: "example.com/gate", Status: corev1.ConditionTrue}
	pod := testPod("p", func(p *corev1.Pod) {
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Status.Conditions = []corev1.PodCondition{disrupted, {Type: corev1.PodReady, Status: corev1.ConditionTrue}, gate}
	})
	st := computeStatus(&statusInput{pod: pod, views: map[string]*containerView{"app": bad}, waiting: map[string]waiting{}, probes: NoProbes{}, now: time.Now()})
	got := map[corev1.PodConditionType]corev1.PodCondition{}
	for _, c := range st.Conditions {
		if _, dup := got[c.Type]; dup {
			t.Fatalf("condition %s twice: %+v", c.Type, st.Conditions)
		}
		got[c.Type] = c
	}
	if st.Phase != corev1.PodFailed || got[corev1.DisruptionTarget] != disrupted || got[gate.Type] != gate {
		t.Fatalf("phase %s, conditions %+v", st.Phase, st.Conditions)
	}
	if got[corev1.PodReady].Status != corev1.ConditionFalse {
		t.Fatalf("Ready of a failed pod: %+v", got[corev1.PodReady])
	}
}

func TestPullAuth(t *testing.T) {
	secret := func(typ corev1.SecretType, key, data string) *corev1.Secret {
		return &corev1.Secret{Type: typ, Data: map[string][]byte{key: []byte(data)}}
	}
	hub := secret(corev1.SecretTypeDockerConfigJson, corev1.DockerConfigJsonKey,
		`{"auths":{"https://index.docker.io/v1/":{"auth":"dXNlcjpwYXNz"}}}`)
	priv := secret(corev1.SecretTypeDockercfg, corev1.DockerConfigKey, `{"registry.example:5000":{"username":"u","password":"p"}}`)
	for _, tc := range []struct {
		ref        string
		secrets    []*corev1.Secret
		user, pass string
	}{
		{"busybox:1.36", []*corev1.Secret{priv, hub}, "user", "pass"},
		{"registry.example:5000/app:1", []*corev1.Secret{hub, priv}, "u", "p"},
		{"quay.io/x/y:1", []*corev1.Secret{hub, priv}, "", ""},
	} {
		got := pullAuth(tc.ref, tc.secrets)
		if tc.user == "" {
			if got != nil {
				t.Errorf("%s: got %+v, want none", tc.ref, got)
			}
			continue
		}
		if got == nil || got.Username != tc.user || got.Password != tc.pass {
			t.Errorf("%s: got %+v", tc.ref, got)
		}
	}
}

func TestNeedsSync(t *testing.T) {
	base := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "1"},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	edit := func(f func(p *corev1.Pod)) *corev1.Pod {
		p := base.DeepCopy()
		p.ResourceVersion = "2"
		f(p)
		return p
	}
	for name, tc := range map[string]struct {
		pod  *corev1.Pod
		want bool
	}{
		"status only":         {edit(func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.2" }), false},
		"resourceVersion":     {edit(func(*corev1.Pod) {}), false},
		"phase":               {edit(func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), true},
		"label":               {edit(func(p *corev1.Pod) { p.Labels = map[string]string{"a": "b"} }), true},
		"deletion":            {edit(func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} }), true},
		"spec":                {edit(func(p *corev1.Pod) { p.Spec.Containers[0].Image = "j" }), true},
		"readiness gate pods": {edit(func(p *corev1.Pod) { p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "x"}} }), true},
	} {
		if got := needsSync(base, tc.pod); got != tc.want {
			t.Errorf("%s: needsSync = %v, want %v", name, got, tc.want)
		}
	}
	withGate := edit(func(p *corev1.Pod) { p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: "x"}} })
	if !needsSync(withGate, edit(func(p *corev1.Pod) {
		p.Spec.ReadinessGates = withGate.Spec.ReadinessGates
		p.Status.Conditions = []corev1.PodCondition{{Type: "x", Status: corev1.ConditionTrue}}
	})) {
		t.Error("a readiness gate's condition changed: want a sync")
	}
}
