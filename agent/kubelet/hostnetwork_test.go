package kubelet

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/runtime"
)

// TestHostNetworkPod: a hostNetwork pod gets no pod network, its IP is the
// host's, its containers run without a netns or hostname of their own (the
// host's UTS namespace) with the host's hostname and /etc/hosts in the pod
// files, and deleting it cleans up like any pod.
func TestHostNetworkPod(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("hn", func(p *corev1.Pod) {
		p.Spec.HostNetwork = true
		p.Spec.Hostname = "ignored-for-host-network"
	}))
	h.sync("hn")
	p := h.pod("hn")
	if p.Status.Phase != corev1.PodRunning || p.Status.PodIP != "192.0.2.10" || p.Status.PodIP != p.Status.HostIP {
		t.Fatalf("phase %s podIP %q hostIP %q, want Running with podIP = hostIP", p.Status.Phase, p.Status.PodIP, p.Status.HostIP)
	}
	if len(p.Status.PodIPs) != 1 || p.Status.PodIPs[0].IP != "192.0.2.10" {
		t.Errorf("podIPs = %v", p.Status.PodIPs)
	}
	if ids, _ := h.net.PodIDs(); len(ids) != 0 {
		t.Fatalf("a pod network was set up for a hostNetwork pod: %v", ids)
	}
	spec, ok := h.rt.Spec(runtime.ContainerID(string(p.UID), "app", 0))
	if !ok {
		t.Fatal("container not created")
	}
	if spec.NetnsPath != "" || spec.Hostname != "" {
		t.Errorf("spec NetnsPath %q Hostname %q, want both empty (host network and UTS)", spec.NetnsPath, spec.Hostname)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	checkPodFile(t, spec.HostnamePath, host+"\n")
	if etcHosts, err := os.ReadFile("/etc/hosts"); err == nil {
		checkPodFile(t, spec.HostsPath, string(etcHosts))
	}

	now := metav1.Now()
	p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &now, ptr.To(int64(5))
	if _, err := h.client.CoreV1().Pods("default").Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync("hn")
	if list, _ := h.rt.ListContainers(t.Context(), ""); len(list) != 0 {
		t.Fatalf("containers left: %v", list)
	}
	if len(h.cg.removed) != 1 || len(h.cg.pods) != 0 {
		t.Fatalf("cgroup not removed: removed %v, left %v", h.cg.removed, h.cg.pods)
	}
	if _, err := os.Stat(filepath.Dir(spec.HostnamePath)); !os.IsNotExist(err) {
		t.Errorf("pod dir left: %v", err)
	}
	if _, err := h.client.CoreV1().Pods("default").Get(t.Context(), "hn", metav1.GetOptions{}); err == nil {
		t.Fatal("pod object not deleted")
	}
}

func checkPodFile(t *testing.T, path, want string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	if string(got) != want {
		t.Errorf("%s = %q, want %q", filepath.Base(path), got, want)
	}
}
