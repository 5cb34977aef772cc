package kubeletapi

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/agent/runtime"
)

// ContainerLister is the part of runtime.Interface PodLookupFromRuntime needs.
type ContainerLister interface {
	ListContainers(ctx context.Context, podUID string) ([]runtime.ContainerStatus, error)
}

// PodLookupFromRuntime builds Config.PodLookup from getPod (e.g. a lister of
// this node's pods) and the runtime: the pod's UID and status.podIP, and per
// container name the instance with the highest restart count.
func PodLookupFromRuntime(rt ContainerLister, getPod func(ns, name string) (*corev1.Pod, bool)) func(ns, name string) (Pod, bool) {
	return func(ns, name string) (Pod, bool) {
		p, ok := getPod(ns, name)
		if !ok || p == nil {
			return Pod{}, false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		list, err := rt.ListContainers(ctx, string(p.UID))
		if err != nil {
			return Pod{}, false
		}
		out := Pod{UID: string(p.UID), IP: p.Status.PodIP, Containers: map[string]string{}}
		best := map[string]int{}
		for _, c := range list {
			if n, seen := best[c.Name]; !seen || c.RestartCount > n {
				best[c.Name] = c.RestartCount
				out.Containers[c.Name] = c.ID
			}
		}
		return out, true
	}
}
