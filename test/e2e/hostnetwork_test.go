package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/containerd/containerd/v2/pkg/namespaces"
	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/runtime"
)

// hostNetworkPod: a hostNetwork pod runs in the host's network and UTS
// namespaces (podIP = hostIP, hostname = the node's), gets no netns, veth
// or IP of its own, and leaves nothing behind when deleted.
func hostNetworkPod(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	before := hostNetState(e)
	c := bbContainer("app", "echo host=$(hostname); echo ns=$(readlink /proc/self/ns/net) $(readlink /proc/self/ns/uts); sleep 3600")
	created := createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hostnet"}, Spec: corev1.PodSpec{
		NodeName: e.node, HostNetwork: true, Containers: []corev1.Container{c}}})
	t.Cleanup(func() { // the pod must not outlive a failed subtest
		_ = cs.CoreV1().Pods("default").Delete(context.Background(), "hostnet", metav1.DeleteOptions{})
	})
	p := waitPod(t, cs, "hostnet", "Running and Ready", podReady)
	if p.Status.PodIP == "" || p.Status.PodIP != p.Status.HostIP || len(p.Status.PodIPs) != 1 || p.Status.PodIPs[0].IP != p.Status.HostIP {
		t.Errorf("podIP %q podIPs %v, want hostIP %q", p.Status.PodIP, p.Status.PodIPs, p.Status.HostIP)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	netNS, _ := os.Readlink("/proc/self/ns/net")
	utsNS, _ := os.Readlink("/proc/self/ns/uts")
	logPath := filepath.Join(e.dataDir, "agent", "logs", fmt.Sprintf("default_hostnet_%s", created.UID), "app", "0.log")
	want := []string{"stdout F host=" + host + "\n", "stdout F ns=" + netNS + " " + utsNS + "\n"}
	waitFor(t, 15*time.Second, "the host's hostname and namespaces in the log", func() (bool, error) {
		b, err := os.ReadFile(logPath)
		return strings.Contains(string(b), want[0]) && strings.Contains(string(b), want[1]), err
	})
	if b, err := os.ReadFile(filepath.Join(e.dataDir, "agent", "pods", string(created.UID), "hostname")); err != nil || string(b) != host+"\n" {
		t.Errorf("/etc/hostname of the pod = %q (%v), want %q", b, err, host+"\n")
	}
	if after := hostNetState(e); after != before {
		t.Errorf("netns/veth/IP state changed for a hostNetwork pod: before %s, after %s", before, after)
	}

	if err := cs.CoreV1().Pods("default").Delete(context.Background(), "hostnet", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "pod hostnet to disappear from the API", func() (bool, error) {
		_, err := cs.CoreV1().Pods("default").Get(context.Background(), "hostnet", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	checkPodGone(t, e, created)
	if after := hostNetState(e); after != before {
		t.Errorf("netns/veth/IP state changed after deleting the hostNetwork pod: before %s, after %s", before, after)
	}
}

// hostNetState summarizes the agent's netns, bridge veths and IP
// allocations, which a hostNetwork pod must not change.
func hostNetState(e *agentEnv) string {
	netns, _ := filepath.Glob(filepath.Join("/run/netns", e.netnsPfx+"*"))
	ips, _ := filepath.Glob(filepath.Join(e.dataDir, "agent", "ipam", "*.*.*.*"))
	var veths []string
	if br, err := netlink.LinkByName(e.bridge); err == nil {
		links, _ := netlink.LinkList()
		for _, l := range links {
			if l.Attrs().MasterIndex == br.Attrs().Index {
				veths = append(veths, l.Attrs().Name)
			}
		}
	}
	return fmt.Sprintf("netns %v veths %v ips %v", netns, veths, ips)
}

// checkPodGone checks that a deleted pod left no cgroup (in any hierarchy,
// the unified one included), pod dir or container.
func checkPodGone(t *testing.T, e *agentEnv, p *corev1.Pod) {
	t.Helper()
	for _, d := range podCgroups(e.cgroupRoot) {
		if strings.Contains(d, "pod"+string(p.UID)) {
			t.Errorf("pod cgroup left: %s", d)
		}
	}
	if _, err := os.Stat(filepath.Join(e.dataDir, "agent", "pods", string(p.UID))); !os.IsNotExist(err) {
		t.Errorf("pod dir left (%v)", err)
	}
	client, err := runtime.Connect(context.Background(), filepath.Join(e.stateBase, "containerd", "containerd.sock"))
	if err != nil {
		t.Fatalf("connecting to the agent's containerd: %v", err)
	}
	defer client.Close()
	id := runtime.ContainerID(string(p.UID), p.Spec.Containers[0].Name, 0)
	if _, err := client.LoadContainer(namespaces.WithNamespace(context.Background(), e.ns), id); err == nil {
		t.Errorf("container %s left", id)
	}
}
