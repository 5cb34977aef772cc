package podautoscaler

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	autoscalinglisters "k8s.io/client-go/listers/autoscaling/v2"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// memScaler is the in-memory twin of the scale subresource.
type memScaler struct {
	scales map[string]*autoscalingv1.Scale // by target name
	getErr error
	writes []int32
}

var _ scaler = (*memScaler)(nil)

func (m *memScaler) Get(_ context.Context, _ string, ref autoscalingv2.CrossVersionObjectReference) (*autoscalingv1.Scale, schema.GroupResource, error) {
	if m.getErr != nil {
		return nil, schema.GroupResource{}, m.getErr
	}
	s, ok := m.scales[ref.Name]
	if !ok {
		return nil, schema.GroupResource{}, errors.New(`deployments.apps "` + ref.Name + `" not found`)
	}
	return s.DeepCopy(), schema.GroupResource{Group: "apps", Resource: "deployments"}, nil
}

func (m *memScaler) Update(_ context.Context, _ string, _ schema.GroupResource, s *autoscalingv1.Scale) (*autoscalingv1.Scale, error) {
	m.scales[s.Name] = s.DeepCopy()
	m.writes = append(m.writes, s.Spec.Replicas)
	return s, nil
}

// memMetrics is the in-memory twin of metrics.k8s.io: cpu per pod.
type memMetrics struct{ cpu map[string]int64 }

func (m *memMetrics) ResourceMetric(_ context.Context, _ corev1.ResourceName, _ string, _ labels.Selector, _ string) (podMetrics, time.Time, error) {
	if len(m.cpu) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from resource metrics API")
	}
	out := podMetrics{}
	for n, v := range m.cpu {
		out[n] = podMetric{Value: v, Window: time.Minute, Timestamp: time.Now()}
	}
	return out, time.Now(), nil
}

type harness struct {
	c        *Controller
	client   *fake.Clientset
	scales   *memScaler
	metrics  *memMetrics
	recorder *record.FakeRecorder
	hpas     cache.Indexer
	pods     cache.Indexer
	clock    *clocktesting.FakeClock
}

func newHarness(t *testing.T) *harness {
	h := &harness{client: fake.NewClientset(), scales: &memScaler{scales: map[string]*autoscalingv1.Scale{}}, metrics: &memMetrics{},
		recorder: record.NewFakeRecorder(100), clock: clocktesting.NewFakeClock(time.Now()),
		hpas: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}), pods: cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})}
	h.c = newController(h.client.AutoscalingV2(), autoscalinglisters.NewHorizontalPodAutoscalerLister(h.hpas),
		corelisters.NewPodLister(h.pods), h.scales, h.metrics, h.recorder, h.clock, nil, Settings{}, zaptest.NewLogger(t))
	t.Cleanup(h.c.queue.ShutDown)
	return h
}

func (h *harness) addHPA(t *testing.T, hpa *autoscalingv2.HorizontalPodAutoscaler) {
	t.Helper()
	if _, err := h.client.AutoscalingV2().HorizontalPodAutoscalers(hpa.Namespace).Create(context.Background(), hpa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_ = h.hpas.Add(hpa)
}

// sync reconciles the HPA and returns its written status and the events.
func (h *harness) sync(t *testing.T, name string) (*autoscalingv2.HorizontalPodAutoscaler, []string) {
	t.Helper()
	if err := h.c.sync(context.Background(), "default/"+name); err != nil {
		t.Fatal(err)
	}
	got, err := h.client.AutoscalingV2().HorizontalPodAutoscalers("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = h.hpas.Update(got)
	var events []string
	for {
		select {
		case e := <-h.recorder.Events:
			events = append(events, e)
		default:
			return got, events
		}
	}
}

func hpaFor(name string, minR, maxR int32, metrics ...autoscalingv2.MetricSpec) *autoscalingv2.HorizontalPodAutoscaler {
	if len(metrics) == 0 {
		metrics = []autoscalingv2.MetricSpec{cpuUtilization(50)}
	}
	return &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Generation: 1},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: ptr.To(minR), MaxReplicas: maxR, Metrics: metrics,
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}}}
}

func cpuUtilization(p int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(p)}}}
}

func (h *harness) setScale(replicas int32) {
	h.scales.scales["web"] = &autoscalingv1.Scale{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: autoscalingv1.ScaleSpec{Replicas: replicas}, Status: autoscalingv1.ScaleStatus{Replicas: replicas, Selector: "app=web"}}
}

// addPods adds n ready pods (started long ago) requesting 100m cpu.
func (h *harness) addPods(n int, started time.Time) {
	for i := range n {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-" + string(rune('a'+i)), Namespace: "default", Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: started},
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: started}}}}}
		_ = h.pods.Add(p)
	}
}

func condition(h *autoscalingv2.HorizontalPodAutoscaler, t autoscalingv2.HorizontalPodAutoscalerConditionType) string {
	for _, c := range h.Status.Conditions {
		if c.Type == t {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return ""
}

func hasEvent(events []string, prefix string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) {
			return true
		}
	}
	return false
}

func TestBelowMinReplicasScalesUpWithoutMetrics(t *testing.T) {
	h := newHarness(t)
	h.setScale(1)
	h.addHPA(t, hpaFor("web", 3, 5))
	got, events := h.sync(t, "web")
	if h.scales.scales["web"].Spec.Replicas != 3 {
		t.Fatalf("scale %d, want 3", h.scales.scales["web"].Spec.Replicas)
	}
	if !hasEvent(events, "Normal SuccessfulRescale New size: 3; reason: Current number of replicas below Spec.MinReplicas") {
		t.Fatalf("events %q", events)
	}
	if got.Status.CurrentReplicas != 1 || got.Status.DesiredReplicas != 3 || got.Status.LastScaleTime == nil ||
		ptr.Deref(got.Status.ObservedGeneration, 0) != 1 || condition(got, autoscalingv2.AbleToScale) != "True/SucceededRescale" {
		t.Fatalf("status %+v", got.Status)
	}
	// Next sync: no metrics at all.
	h.setScale(3)
	h.addPods(3, h.clock.Now().Add(-time.Hour))
	got, events = h.sync(t, "web")
	if condition(got, autoscalingv2.ScalingActive) != "False/FailedGetResourceMetric" || !hasEvent(events, "Warning FailedComputeMetricsReplicas") ||
		!hasEvent(events, "Warning FailedGetResourceMetric") || got.Status.CurrentReplicas != 3 {
		t.Fatalf("without metrics: %+v %q", got.Status, events)
	}
}

func TestCPUUtilizationScalesUpThenDownAfterWindow(t *testing.T) {
	h := newHarness(t)
	h.setScale(2)
	h.addPods(2, h.clock.Now().Add(-time.Hour))
	h.metrics.cpu = map[string]int64{"web-a": 90, "web-b": 90} // 90 % of 100m
	hpa := hpaFor("web", 1, 10)
	hpa.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To(int32(60))}}
	h.addHPA(t, hpa)
	got, events := h.sync(t, "web")
	// ceil(90/50 × 2) = 4; the default scale-up policy allows max(2+4, 2×2).
	if h.scales.scales["web"].Spec.Replicas != 4 ||
		!hasEvent(events, "Normal SuccessfulRescale New size: 4; reason: cpu resource utilization (percentage of request) above target") {
		t.Fatalf("scale %d events %q", h.scales.scales["web"].Spec.Replicas, events)
	}
	cm := got.Status.CurrentMetrics
	if len(cm) != 1 || cm[0].Resource == nil || ptr.Deref(cm[0].Resource.Current.AverageUtilization, 0) != 90 ||
		cm[0].Resource.Current.AverageValue.String() != "90m" || condition(got, autoscalingv2.ScalingActive) != "True/ValidMetricFound" ||
		condition(got, autoscalingv2.ScalingLimited) != "False/DesiredWithinRange" {
		t.Fatalf("status %+v", got.Status)
	}
	// Load gone: the recommendation drops to 1 but the 60 s window holds 4.
	h.setScale(4)
	h.addPods(4, h.clock.Now().Add(-time.Hour))
	h.metrics.cpu = map[string]int64{"web-a": 1, "web-b": 1, "web-c": 1, "web-d": 1}
	h.clock.Step(15 * time.Second)
	got, _ = h.sync(t, "web")
	if h.scales.scales["web"].Spec.Replicas != 4 || condition(got, autoscalingv2.AbleToScale) != "True/ScaleDownStabilized" {
		t.Fatalf("within the window: scale %d %+v", h.scales.scales["web"].Spec.Replicas, got.Status.Conditions)
	}
	h.clock.Step(61 * time.Second)
	_, events = h.sync(t, "web")
	if h.scales.scales["web"].Spec.Replicas != 1 || !hasEvent(events, "Normal SuccessfulRescale New size: 1; reason: All metrics below target") {
		t.Fatalf("after the window: scale %d events %q", h.scales.scales["web"].Spec.Replicas, events)
	}
}

func TestUnsupportedMetricTypes(t *testing.T) {
	h := newHarness(t)
	h.setScale(2)
	h.addPods(2, h.clock.Now().Add(-time.Hour))
	pods := autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType,
			AverageValue: ptr.To(resource.MustParse("10"))}}}
	h.addHPA(t, hpaFor("web", 1, 5, pods))
	got, events := h.sync(t, "web")
	if condition(got, autoscalingv2.ScalingActive) != "False/FailedGetPodsMetric" || !hasEvent(events, "Warning FailedGetPodsMetric") ||
		h.scales.writes != nil {
		t.Fatalf("pods metric: %+v %q", got.Status.Conditions, events)
	}
	// A cpu metric beside it still scales up (invalid metrics only block scale-downs).
	h.metrics.cpu = map[string]int64{"web-a": 100, "web-b": 100}
	hpa := got.DeepCopy()
	hpa.Spec.Metrics = append(hpa.Spec.Metrics, cpuUtilization(50))
	_ = h.hpas.Update(hpa)
	_, _ = h.client.AutoscalingV2().HorizontalPodAutoscalers("default").Update(context.Background(), hpa, metav1.UpdateOptions{})
	got, _ = h.sync(t, "web")
	if h.scales.scales["web"].Spec.Replicas != 4 || condition(got, autoscalingv2.ScalingActive) != "True/ValidMetricFound" {
		t.Fatalf("mixed: scale %d %+v", h.scales.scales["web"].Spec.Replicas, got.Status.Conditions)
	}
}

func TestScaleTargetErrors(t *testing.T) {
	h := newHarness(t)
	h.addHPA(t, hpaFor("web", 1, 5))
	got, events := h.sync(t, "web")
	if condition(got, autoscalingv2.AbleToScale) != "False/FailedGetScale" || !hasEvent(events, "Warning FailedGetScale") {
		t.Fatalf("missing target: %+v %q", got.Status.Conditions, events)
	}
	// A scale without a selector (a CRD without labelSelectorPath).
	h.setScale(2)
	h.scales.scales["web"].Status.Selector = ""
	got, events = h.sync(t, "web")
	if condition(got, autoscalingv2.ScalingActive) != "False/InvalidSelector" || !hasEvent(events, "Warning SelectorRequired") ||
		condition(got, autoscalingv2.AbleToScale) != "True/SucceededGetScale" {
		t.Fatalf("no selector: %+v %q", got.Status.Conditions, events)
	}
}

func TestAmbiguousSelector(t *testing.T) {
	h := newHarness(t)
	h.setScale(2)
	h.addPods(2, h.clock.Now().Add(-time.Hour))
	h.metrics.cpu = map[string]int64{"web-a": 50, "web-b": 50}
	h.addHPA(t, hpaFor("one", 1, 5))
	h.addHPA(t, hpaFor("two", 1, 5))
	h.sync(t, "one")
	got, events := h.sync(t, "two")
	if condition(got, autoscalingv2.ScalingActive) != "False/AmbiguousSelector" || !hasEvent(events, "Warning AmbiguousSelector") {
		t.Fatalf("%+v %q", got.Status.Conditions, events)
	}
	// Deleting one HPA lets the other work again.
	_ = h.hpas.Delete(got)
	h.c.deleted(got)
	got, _ = h.sync(t, "one")
	if condition(got, autoscalingv2.ScalingActive) != "True/ValidMetricFound" {
		t.Fatalf("after delete: %+v", got.Status.Conditions)
	}
}

func TestPodUsage(t *testing.T) {
	f := scenario{levels: [][]int64{{100, 200}, {300}}}
	items := f.podMetricsList()
	all := podUsage(items, corev1.ResourceCPU, "")
	if len(all) != 1 || all["test-pod-0"].Value != 300 {
		t.Fatalf("sum: %+v", all)
	}
	c1 := podUsage(items, corev1.ResourceCPU, "container1")
	if len(c1) != 2 || c1["test-pod-1"].Value != 300 {
		t.Fatalf("container1: %+v", c1)
	}
	if m := podUsage(items, corev1.ResourceMemory, ""); len(m) != 0 {
		t.Fatalf("memory: %+v", m)
	}
}

func TestBuildQuantity(t *testing.T) {
	if q := buildQuantity(corev1.ResourceMemory, 100*1024*1024*1000); q.String() != "100Mi" {
		t.Errorf("memory %s", q.String())
	}
	if q := buildQuantity(corev1.ResourceCPU, 250); q.String() != "250m" {
		t.Errorf("cpu %s", q.String())
	}
}
