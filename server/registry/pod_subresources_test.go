package registry

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// subUpdate runs a subresource update the way the API layer does.
func subUpdate(t *testing.T, name string, obj, old *corev1.Pod) field.ErrorList {
	t.Helper()
	sub := resourceFor(t, "", "pods").Subresources[name]
	if sub == nil {
		t.Fatalf("pods/%s is not served", name)
	}
	sub.PrepareForUpdate(context.Background(), obj, old)
	return sub.ValidateUpdate(context.Background(), obj, old)
}

func createdPod(t *testing.T, edit func(*corev1.Pod)) *corev1.Pod {
	t.Helper()
	p := goodPod("p")
	if edit != nil {
		edit(p)
	}
	requireNoErr(t, prepareCreate(t, resourceFor(t, "", "pods"), p))
	p.Status.Phase = corev1.PodRunning
	return p
}

func debugger(name string) corev1.EphemeralContainer {
	return corev1.EphemeralContainer{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: name, Image: "busybox", Stdin: true, TTY: true}}
}

func TestPodEphemeralContainersSubresource(t *testing.T) {
	old := createdPod(t, nil)

	// Adding one: defaulted, generation bumped, everything else kept.
	n := old.DeepCopy()
	n.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugger("debugger")}
	n.Spec.Containers[0].Image = "other"   // not this subresource's business
	n.Status.Phase = corev1.PodFailed      // nor status
	n.Labels = map[string]string{"x": "y"} // nor labels
	requireNoErr(t, subUpdate(t, "ephemeralcontainers", n, old))
	if n.Generation != 2 || n.Spec.Containers[0].Image != "nginx:1.25" || n.Status.Phase != corev1.PodRunning || n.Labels["x"] != "" {
		t.Fatalf("update kept too much: generation %d image %s phase %s labels %v", n.Generation, n.Spec.Containers[0].Image, n.Status.Phase, n.Labels)
	}
	if ec := n.Spec.EphemeralContainers[0]; ec.TerminationMessagePolicy != corev1.TerminationMessageReadFile || ec.ImagePullPolicy == "" {
		t.Fatalf("ephemeral container not defaulted: %+v", ec)
	}
	withOne := n

	// The same list again changes nothing.
	n = withOne.DeepCopy()
	requireNoErr(t, subUpdate(t, "ephemeralcontainers", n, withOne))
	if n.Generation != 2 {
		t.Fatalf("no-op bumped generation to %d", n.Generation)
	}

	cases := []struct {
		name string
		edit func(p *corev1.Pod)
		typ  field.ErrorType
		path string
	}{
		{"removed", func(p *corev1.Pod) { p.Spec.EphemeralContainers = nil }, field.ErrorTypeForbidden, "spec.ephemeralContainers"},
		{"changed", func(p *corev1.Pod) { p.Spec.EphemeralContainers[0].Image = "alpine" }, field.ErrorTypeForbidden, "spec.ephemeralContainers"},
		{"name of a container", func(p *corev1.Pod) {
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, debugger("web"))
		}, field.ErrorTypeDuplicate, "spec.ephemeralContainers[1].name"},
		{"ports", func(p *corev1.Pod) {
			d := debugger("d2")
			d.Ports = []corev1.ContainerPort{{ContainerPort: 80}}
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, d)
		}, field.ErrorTypeForbidden, "spec.ephemeralContainers[1].ports"},
		{"resources", func(p *corev1.Pod) {
			d := debugger("d2")
			d.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, d)
		}, field.ErrorTypeForbidden, "spec.ephemeralContainers[1].resources"},
		{"probe", func(p *corev1.Pod) {
			d := debugger("d2")
			d.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{Command: []string{"true"}}}}
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, d)
		}, field.ErrorTypeForbidden, "spec.ephemeralContainers[1].readinessProbe"},
		{"unknown target", func(p *corev1.Pod) {
			d := debugger("d2")
			d.TargetContainerName = "nope"
			p.Spec.EphemeralContainers = append(p.Spec.EphemeralContainers, d)
		}, field.ErrorTypeNotFound, "spec.ephemeralContainers[1].targetContainerName"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := withOne.DeepCopy()
			tc.edit(n)
			requireErr(t, subUpdate(t, "ephemeralcontainers", n, withOne), tc.typ, tc.path)
		})
	}

	// The main resource may not add ephemeral containers.
	n = old.DeepCopy()
	n.Spec.EphemeralContainers = []corev1.EphemeralContainer{debugger("debugger")}
	requireErr(t, prepareUpdate(resourceFor(t, "", "pods"), n, old), field.ErrorTypeForbidden, "spec")
}

func cpuMem(cpu, mem string) corev1.ResourceList {
	l := corev1.ResourceList{}
	if cpu != "" {
		l[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return l
}

func TestPodResizeSubresource(t *testing.T) {
	old := createdPod(t, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = cpuMem("20m", "35Mi")
	})

	// Raising requests and adding limits: generation bumped, the rest kept.
	n := old.DeepCopy()
	n.Spec.Containers[0].Resources = corev1.ResourceRequirements{Requests: cpuMem("25m", "40Mi"), Limits: cpuMem("35m", "")}
	n.Spec.Containers[0].Image = "other"
	requireNoErr(t, subUpdate(t, "resize", n, old))
	if n.Generation != 2 || n.Spec.Containers[0].Image != "nginx:1.25" {
		t.Fatalf("resize: generation %d image %s", n.Generation, n.Spec.Containers[0].Image)
	}
	if q := n.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU]; q.String() != "35m" {
		t.Fatalf("resize lost the new limit: %v", n.Spec.Containers[0].Resources)
	}

	best := createdPod(t, nil)
	guaranteed := createdPod(t, func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources = corev1.ResourceRequirements{Limits: cpuMem("100m", "64Mi")}
	})
	cases := []struct {
		name string
		old  *corev1.Pod
		edit func(p *corev1.Pod)
		typ  field.ErrorType
		path string
		msg  string
	}{
		{"best effort gets requests", best, func(p *corev1.Pod) { p.Spec.Containers[0].Resources.Requests = cpuMem("", "35Mi") },
			field.ErrorTypeInvalid, "spec", "Pod QOS Class may not change as a result of resizing"},
		{"guaranteed becomes burstable", guaranteed, func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests = cpuMem("50m", "64Mi")
		}, field.ErrorTypeInvalid, "spec", "Pod QOS Class may not change"},
		{"requests removed", old, func(p *corev1.Pod) { p.Spec.Containers[0].Resources.Requests = cpuMem("20m", "") },
			field.ErrorTypeForbidden, "spec.containers[0].resources.requests", "resource requests cannot be removed"},
		{"other resource", old, func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		}, field.ErrorTypeForbidden, "spec.containers[0]", "only cpu and memory resources are mutable"},
		{"request over limit", old, func(p *corev1.Pod) { p.Spec.Containers[0].Resources.Limits = cpuMem("10m", "") },
			field.ErrorTypeInvalid, "spec.containers[0].resources.requests[cpu]", "must be less than or equal to cpu limit"},
		{"bad resize policy", old, func(p *corev1.Pod) {
			p.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceCPU, RestartPolicy: "Sometimes"}}
		}, field.ErrorTypeNotSupported, "spec.containers[0].resizePolicy", "supported values"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := tc.old.DeepCopy()
			tc.edit(n)
			errs := subUpdate(t, "resize", n, tc.old)
			requireErr(t, errs, tc.typ, tc.path)
			if !strings.Contains(errs.ToAggregate().Error(), tc.msg) {
				t.Fatalf("errors %v lack %q", errs.ToAggregate(), tc.msg)
			}
		})
	}

	// RestartContainer is refused in pods that never restart.
	never := createdPod(t, func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever })
	never.Spec.Containers[0].ResizePolicy = []corev1.ContainerResizePolicy{{ResourceName: corev1.ResourceMemory, RestartPolicy: corev1.RestartContainer}}
	requireErr(t, resourceFor(t, "", "pods").Strategy.Validate(context.Background(), never), field.ErrorTypeInvalid, "spec.containers[0].resizePolicy")

	// The main resource may not change resources.
	n = old.DeepCopy()
	n.Spec.Containers[0].Resources.Requests = cpuMem("25m", "35Mi")
	requireErr(t, prepareUpdate(resourceFor(t, "", "pods"), n, old), field.ErrorTypeForbidden, "spec")
}

// TestPodUpdateGeneration follows the pod generation e2e test: spec
// changes bump it once, metadata and the client's own value do not, and
// replaced tolerations keep the default ones (DefaultTolerationSeconds
// admits updates).
func TestPodUpdateGeneration(t *testing.T) {
	r := resourceFor(t, "", "pods")
	old := createdPod(t, nil)
	steps := []struct {
		name string
		edit func(p *corev1.Pod)
		bump bool
	}{
		{"empty update", func(*corev1.Pod) {}, false},
		{"tolerations replaced", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: "foo", Operator: corev1.TolerationOpEqual, Value: "bar", Effect: corev1.TaintEffectNoSchedule}}
		}, true},
		{"image", func(p *corev1.Pod) { p.Spec.Containers[0].Image = "nginx:1.27" }, true},
		{"annotations", func(p *corev1.Pod) { p.Annotations = map[string]string{"k": "v"} }, false},
		{"client-set generation", func(p *corev1.Pod) { p.Generation = 1 }, false},
	}
	for _, s := range steps {
		n := old.DeepCopy()
		s.edit(n)
		requireNoErr(t, prepareUpdate(r, n, old))
		want := old.Generation
		if s.bump {
			want++
		}
		if n.Generation != want {
			t.Fatalf("%s: generation %d, want %d", s.name, n.Generation, want)
		}
		old = n
	}
	if len(old.Spec.Tolerations) != 3 {
		t.Fatalf("tolerations after replacing them: %v", old.Spec.Tolerations)
	}
}
