package kubelet

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/runtime"
)

type fakeHooks struct {
	calls        []string
	failPost     bool
	preStopGrace time.Duration
}

func (f *fakeHooks) PostStart(_ context.Context, _ *corev1.Pod, c *corev1.Container, id, _ string) error {
	f.calls = append(f.calls, "postStart "+c.Name)
	if f.failPost {
		return errors.New("hook failed")
	}
	return nil
}

func (f *fakeHooks) PreStop(_ context.Context, _ *corev1.Pod, c *corev1.Container, _, _ string, grace time.Duration) time.Duration {
	f.calls = append(f.calls, "preStop "+c.Name)
	f.preStopGrace = grace
	return grace - time.Second
}

func TestPreStopBeforeStop(t *testing.T) {
	h := newHarness(t)
	hooks := &fakeHooks{}
	h.k.cfg.Hooks = hooks
	h.add(testPod("hook", func(p *corev1.Pod) { p.Spec.TerminationGracePeriodSeconds = ptr.To(int64(7)) }))
	h.sync("hook")
	p := h.pod("hook")
	now := metav1.Now()
	p.DeletionTimestamp = &now
	if _, err := h.client.CoreV1().Pods("default").Update(t.Context(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.sync("hook")
	if strings.Join(hooks.calls, ",") != "postStart app,preStop app" || hooks.preStopGrace != 7*time.Second {
		t.Fatalf("hooks %v grace %v", hooks.calls, hooks.preStopGrace)
	}
	var stop string
	for _, c := range h.rt.Calls {
		if strings.HasPrefix(c, "stop ") {
			stop = c
		}
	}
	if stop == "" {
		t.Fatalf("no stop call: %v", h.rt.Calls)
	}
}

func TestFailedPostStartKills(t *testing.T) {
	h := newHarness(t)
	h.k.cfg.Hooks = &fakeHooks{failPost: true}
	h.add(testPod("post"))
	h.sync("post")
	st, err := h.rt.ContainerStatus(t.Context(), runtime.ContainerID("uid-post", "app", 0))
	if err != nil || st.State != runtime.StateExited {
		t.Fatalf("container after failed postStart: %+v %v", st, err)
	}
	if !strings.Contains(h.events(), "FailedPostStartHook") {
		t.Fatal("no Killing event for the failed hook")
	}
}
