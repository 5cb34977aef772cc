package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// hpaBurnScript serves /cgi-bin/burn with busybox httpd: each request
// spins a shell loop (CPU) before answering.
const hpaBurnScript = `mkdir -p /www/cgi-bin
cat > /www/cgi-bin/burn <<'EOF'
#!/bin/sh
echo "Content-Type: text/plain"
echo
i=0
while [ $i -lt 20000 ]; do i=$((i+1)); done
echo burned
EOF
chmod +x /www/cgi-bin/burn
exec httpd -f -p 8080 -h /www`

// TestHPA: the horizontal pod autoscaler on a real node with orch's own
// metrics API. A Deployment of busybox httpd pods (100m cpu requested,
// 200m limit) behind a Service gets an HPA from the real `kubectl
// autoscale --min 1 --max 4 --cpu-percent 50`, patched to a 30 s
// scale-down window. Once metrics flow (ScalingActive=True), a client pod
// requests a CPU-burning CGI script in two loops through the Service; the
// HPA scales the Deployment to at least 3 replicas (SuccessfulRescale,
// "cpu resource utilization (percentage of request) above target"), and
// after the client is deleted, back to 1 ("All metrics below target").
// `kubectl get hpa` shows the measured utilization.
func TestHPA(t *testing.T) {
	e := startClusterAt(t, "", "--horizontal-pod-autoscaler-sync-period", "5s")
	cs := e.server.Clientset
	ctx := context.Background()
	waitNodeReady(t, e, false)
	ns := "hpa-" + e.id
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ip := hpaCreateWorkload(t, cs, ns, e.node)
	k := newKubectl(t, e)
	k.must("", "autoscale", "deployment", "burner", "-n", ns, "--min", "1", "--max", "4", "--cpu-percent", "50")
	k.must("", "patch", "hpa", "burner", "-n", ns, "--type", "merge", "-p",
		`{"spec":{"behavior":{"scaleDown":{"stabilizationWindowSeconds":30},"scaleUp":{"stabilizationWindowSeconds":0}}}}`)
	hpaWait(t, cs, ns, 4*time.Minute, "ScalingActive=True from the idle pod's metrics", func(h *autoscalingv2.HorizontalPodAutoscaler, _ int32) bool {
		return hpaCond(h, autoscalingv2.ScalingActive) == "True/ValidMetricFound"
	})
	t.Logf("idle:\n%s", k.must("", "get", "hpa", "-n", ns))

	load := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "load", Namespace: ns}, Spec: corev1.PodSpec{NodeName: e.node,
		TerminationGracePeriodSeconds: ptr.To(int64(0)), Containers: []corev1.Container{
			bbContainer("load1", hpaLoadLoop(ip)), bbContainer("load2", hpaLoadLoop(ip))}}}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, &load, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hpaWait(t, cs, ns, 6*time.Minute, "a scale-up to at least 3 replicas", func(_ *autoscalingv2.HorizontalPodAutoscaler, r int32) bool { return r >= 3 })
	hpaEvent(t, cs, ns, "cpu resource utilization (percentage of request) above target")
	out := k.must("", "get", "hpa", "-n", ns)
	t.Logf("under load:\n%s", out)
	if !strings.Contains(out, "Deployment/burner") || strings.Contains(out, "<unknown>") {
		t.Errorf("kubectl get hpa without a measured utilization:\n%s", out)
	}

	if err := cs.CoreV1().Pods(ns).Delete(ctx, "load", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))}); err != nil {
		t.Fatal(err)
	}
	hpaWait(t, cs, ns, 6*time.Minute, "a scale-down to 1 replica", func(_ *autoscalingv2.HorizontalPodAutoscaler, r int32) bool { return r == 1 })
	hpaEvent(t, cs, ns, "New size: 1; reason: All metrics below target")
	t.Logf("after the load:\n%s%s", k.must("", "get", "hpa", "-n", ns), k.must("", "describe", "hpa", "burner", "-n", ns))
	t.Logf("orch server RSS: %s", serverRSS(e.server.DataDir))
}

// hpaLoadLoop requests the burn script through the Service without pause.
func hpaLoadLoop(ip string) string {
	return fmt.Sprintf("while :; do timeout 10 wget -q -O /dev/null http://%s/cgi-bin/burn || sleep 1; done", ip)
}

// hpaCreateWorkload creates the burner Deployment (one replica) and its
// Service, and returns the Service's ClusterIP.
func hpaCreateWorkload(t *testing.T, cs kubernetes.Interface, ns, node string) string {
	t.Helper()
	ctx := context.Background()
	l := map[string]string{"app": "burner"}
	c := bbContainer("web", hpaBurnScript)
	c.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m")}}
	c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 2}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "burner"}, Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)),
		Selector: &metav1.LabelSelector{MatchLabels: l},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: corev1.PodSpec{
			NodeSelector: map[string]string{corev1.LabelHostname: node}, TerminationGracePeriodSeconds: ptr.To(int64(0)),
			Containers: []corev1.Container{c}}}}}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "burner"},
		Spec: corev1.ServiceSpec{Selector: l, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return svc.Spec.ClusterIP
}

// hpaWait polls the HPA and the Deployment's spec.replicas until cond.
func hpaWait(t *testing.T, cs kubernetes.Interface, ns string, timeout time.Duration, what string,
	cond func(*autoscalingv2.HorizontalPodAutoscaler, int32) bool) {
	t.Helper()
	var last string
	waitFor(t, timeout, what, func() (bool, error) {
		h, err := cs.AutoscalingV2().HorizontalPodAutoscalers(ns).Get(context.Background(), "burner", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), "burner", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		r := ptr.Deref(d.Spec.Replicas, 1)
		if s := hpaSummary(h, r); s != last {
			t.Log(s)
			last = s
		}
		return cond(h, r), nil
	})
}

// hpaSummary is one log line: replicas, utilization and conditions.
func hpaSummary(h *autoscalingv2.HorizontalPodAutoscaler, replicas int32) string {
	util := "<unknown>"
	if m := h.Status.CurrentMetrics; len(m) > 0 && m[0].Resource != nil && m[0].Resource.Current.AverageUtilization != nil {
		util = fmt.Sprintf("%d%%", *m[0].Resource.Current.AverageUtilization)
	}
	var conds []string
	for _, c := range h.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	return fmt.Sprintf("deployment replicas %d, hpa current %d desired %d, cpu %s, %s", replicas,
		h.Status.CurrentReplicas, h.Status.DesiredReplicas, util, strings.Join(conds, " "))
}

func hpaCond(h *autoscalingv2.HorizontalPodAutoscaler, ct autoscalingv2.HorizontalPodAutoscalerConditionType) string {
	for _, c := range h.Status.Conditions {
		if c.Type == ct {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return ""
}

// hpaEvent waits for a SuccessfulRescale event containing msg.
func hpaEvent(t *testing.T, cs kubernetes.Interface, ns, msg string) {
	t.Helper()
	waitFor(t, 30*time.Second, "a SuccessfulRescale event with "+msg, func() (bool, error) {
		l, err := cs.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "reason=SuccessfulRescale"})
		if err != nil {
			return false, err
		}
		for _, e := range l.Items {
			if strings.Contains(e.Message, msg) {
				t.Logf("event: %s", e.Message)
				return true, nil
			}
		}
		return false, nil
	})
}
