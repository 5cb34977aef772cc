package scheduler

import (
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestPodRequests(t *testing.T) {
	always := corev1.ContainerRestartPolicyAlways
	initC := func(cpu, mem string, sidecar bool) podOpt {
		return func(p *corev1.Pod) {
			c := corev1.Container{Name: "i", Resources: requests(cpu, mem)}
			if sidecar {
				c.RestartPolicy = &always
			}
			p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		}
	}
	overhead := func(p *corev1.Pod) {
		p.Spec.Overhead = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}
	}
	podLevel := func(p *corev1.Pod) {
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}
	}
	secondC := func(p *corev1.Pod) {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "d", Resources: requests("300m", "1Gi")})
	}
	tests := []struct {
		name    string
		pod     *corev1.Pod
		nonZero bool
		want    Resource
	}{
		{"app containers summed", makePod("p", "100m", "1Gi", secondC), false, Resource{MilliCPU: 400, Memory: 2 << 30}},
		{"init container peak wins", makePod("p", "100m", "1Gi", initC("2", "512Mi", false)), false, Resource{MilliCPU: 2000, Memory: 1 << 30}},
		{"init containers max not sum", makePod("p", "", "", initC("1", "", false), initC("2", "", false)), false, Resource{MilliCPU: 2000}},
		{"sidecar added to app and to later init", makePod("p", "100m", "", initC("200m", "", true), initC("1", "", false)), false, Resource{MilliCPU: 1200}},
		{"sidecar only", makePod("p", "100m", "", initC("200m", "", true)), false, Resource{MilliCPU: 300}},
		{"overhead added", makePod("p", "100m", "", overhead), false, Resource{MilliCPU: 150}},
		{"non-zero defaults", makePod("p", "", "", secondC), true, Resource{MilliCPU: 400, Memory: defaultMemoryRequest + 1<<30}},
		{"pod-level requests override", makePod("p", "100m", "1Gi", secondC, podLevel), false, Resource{MilliCPU: 1000, Memory: 2 << 30}},
		{"zero without defaults", makePod("p", "", ""), false, Resource{}},
		{"scalar resources summed, init peak", makePod("p", "", "", withScalar("example.com/foo", "2"),
			initC("", "", false), func(p *corev1.Pod) {
				p.Spec.InitContainers[0].Resources.Requests = corev1.ResourceList{"example.com/foo": resource.MustParse("3"), "hugepages-2Mi": resource.MustParse("4Mi")}
			}), false, Resource{Scalar: map[corev1.ResourceName]int64{"example.com/foo": 3, "hugepages-2Mi": 4 << 20}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := PodRequests(tc.pod, tc.nonZero); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("PodRequests = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestSnapshotNodeInfo(t *testing.T) {
	nodes := []*corev1.Node{makeNode("a", "4", "8Gi"), makeNode("b", "4", "8Gi")}
	done := makePod("done", "1", "1Gi", onNode("a"))
	done.Status.Phase = corev1.PodSucceeded
	pods := []*corev1.Pod{
		makePod("p1", "1", "1Gi", onNode("a"), withHostPort(80, "", "")),
		makePod("p2", "500m", "", onNode("a")),
		makePod("pending", "1", "1Gi"),
		makePod("elsewhere", "1", "1Gi", onNode("gone")),
		done,
	}
	s := NewSnapshot(nodes, pods)
	a := s.NodeInfo("a")
	if len(a.Pods) != 2 || !reflect.DeepEqual(a.Requested, Resource{MilliCPU: 1500, Memory: 1 << 30}) {
		t.Fatalf("node a: %d pods, requested %+v", len(a.Pods), a.Requested)
	}
	if a.NonZeroRequested.Memory != 1<<30+defaultMemoryRequest || a.AllowedPods != 110 {
		t.Fatalf("node a: nonzero %+v allowed %d", a.NonZeroRequested, a.AllowedPods)
	}
	if !a.UsedPorts.conflicts(corev1.ContainerPort{HostPort: 80}) {
		t.Fatal("host port 80 not recorded")
	}
	if len(s.NodeInfo("b").Pods) != 0 {
		t.Fatal("node b should be empty")
	}
	if err := s.AssumePod(makePod("x", "1", ""), "nope"); err == nil {
		t.Fatal("AssumePod on unknown node succeeded")
	}
}

func withScalar(name, qty string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		c := &p.Spec.Containers[0]
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		c.Resources.Requests[corev1.ResourceName(name)] = resource.MustParse(qty)
	}
}

// TestScalarResourcesFit: a pod asking for an extended resource fits only
// where enough of it is left (conformance: SchedulerPreemption and the
// extended-resource predicates), and preemption frees it.
func TestScalarResourcesFit(t *testing.T) {
	withFoo := func(n *corev1.Node) *corev1.Node {
		n.Status.Allocatable["example.com/foo"] = resource.MustParse("5")
		return n
	}
	nodes := []*corev1.Node{withFoo(makeNode("a", "4", "8Gi")), makeNode("b", "4", "8Gi")}
	pods := []*corev1.Pod{makePod("p1", "", "", withScalar("example.com/foo", "2"), onNode("a")),
		makePod("p2", "", "", withScalar("example.com/foo", "2"), onNode("a"))}
	s := NewSnapshot(nodes, pods)
	ps := newPodState(makePod("x", "", "", withScalar("example.com/foo", "1")))
	ps.prepare(s)
	if r := runFilters(ps, s.NodeInfo("a"), nil); len(r) != 0 {
		t.Fatalf("1 of 5 with 4 used: %v", r)
	}
	if r := runFilters(ps, s.NodeInfo("b"), nil); !slices.Equal(r, []string{"Insufficient example.com/foo"}) {
		t.Fatalf("node without the resource: %v", r)
	}
	ps = newPodState(makePod("y", "", "", withScalar("example.com/foo", "2")))
	ps.prepare(s)
	if r := runFilters(ps, s.NodeInfo("a"), nil); !slices.Equal(r, []string{"Insufficient example.com/foo"}) {
		t.Fatalf("2 of 5 with 4 used: %v", r)
	}
	s.RemovePod(pods[0])
	if r := runFilters(ps, s.NodeInfo("a"), nil); len(r) != 0 {
		t.Fatalf("after removing a pod: %v", r)
	}
}
