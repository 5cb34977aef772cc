package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	podNS    = "default"
	podImage = "docker.io/library/busybox:1.36"
)

// podWatcher follows every pod of the namespace with one watch and
// signals the first time each pod is Running with Ready=True.
type podWatcher struct {
	mu      sync.Mutex
	waiters map[string]chan time.Time
	seen    map[string]time.Time
	w       watch.Interface
}

func newClient(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
	return kubernetes.NewForConfig(cfg)
}

func watchPods(ctx context.Context, cs kubernetes.Interface) (*podWatcher, error) {
	list, err := cs.CoreV1().Pods(podNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	w, err := cs.CoreV1().Pods(podNS).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return nil, fmt.Errorf("watch pods: %w", err)
	}
	pw := &podWatcher{waiters: map[string]chan time.Time{}, seen: map[string]time.Time{}, w: w}
	go pw.run()
	return pw, nil
}

func (pw *podWatcher) run() {
	for ev := range pw.w.ResultChan() {
		p, ok := ev.Object.(*corev1.Pod)
		if !ok || !runningAndReady(p) {
			continue
		}
		now := time.Now()
		pw.mu.Lock()
		if _, done := pw.seen[p.Name]; !done {
			pw.seen[p.Name] = now
			if c, ok := pw.waiters[p.Name]; ok {
				c <- now
			}
		}
		pw.mu.Unlock()
	}
}

func (pw *podWatcher) stop() { pw.w.Stop() }

// expect registers interest in a pod before it is created.
func (pw *podWatcher) expect(name string) chan time.Time {
	c := make(chan time.Time, 1)
	pw.mu.Lock()
	pw.waiters[name] = c
	pw.mu.Unlock()
	return c
}

func runningAndReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func benchPod(name, node string) *corev1.Pod {
	grace := int64(1)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "podbench"}},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "c", Image: podImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Command: []string{"sleep", "3600"},
			}},
		},
	}
}

// probedPod is a pod as users run them: busybox httpd with an HTTP
// readiness probe and an exec liveness probe, every 10 s.
func probedPod(name, node string) *corev1.Pod {
	p := benchPod(name, node)
	c := &p.Spec.Containers[0]
	c.Command = []string{"sh", "-c", "echo ok > /tmp/index.html && exec httpd -f -p 8080 -h /tmp"}
	c.ReadinessProbe = &corev1.Probe{PeriodSeconds: 10, ProbeHandler: corev1.ProbeHandler{
		HTTPGet: &corev1.HTTPGetAction{Path: "/index.html", Port: intstr.FromInt32(8080)}}}
	c.LivenessProbe = &corev1.Probe{PeriodSeconds: 10, ProbeHandler: corev1.ProbeHandler{
		Exec: &corev1.ExecAction{Command: []string{"cat", "/tmp/index.html"}}}}
	return p
}

// startPod creates pod (bound to its node) and returns the time from just
// before the create request until the watch reported it Running and Ready.
func startPod(ctx context.Context, cs kubernetes.Interface, pw *podWatcher, pod *corev1.Pod, timeout time.Duration) (time.Duration, error) {
	name := pod.Name
	ready := pw.expect(name)
	t0 := time.Now()
	if err := createPod(ctx, cs, pod); err != nil {
		return 0, err
	}
	select {
	case t1 := <-ready:
		return t1.Sub(t0), nil
	case <-time.After(timeout):
		return 0, fmt.Errorf("pod %s not Running and Ready after %v", name, timeout)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func createPod(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod) error {
	if _, err := cs.CoreV1().Pods(podNS).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create pod %s: %w", pod.Name, err)
	}
	return nil
}

// nodeReady reports whether the node is registered with Ready=True.
func nodeReady(ctx context.Context, cs kubernetes.Interface, node string) (bool, error) {
	n, err := cs.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue, nil
		}
	}
	return false, nil
}

// deletePods deletes the benchmark pods matching selector (grace 0) and
// waits until the objects are gone, i.e. the agent has torn their
// sandboxes down.
func deletePods(ctx context.Context, cs kubernetes.Interface, selector string, timeout time.Duration) error {
	zero := int64(0)
	sel := metav1.ListOptions{LabelSelector: selector}
	if err := cs.CoreV1().Pods(podNS).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, sel); err != nil {
		list, lerr := cs.CoreV1().Pods(podNS).List(ctx, sel)
		if lerr != nil {
			return fmt.Errorf("delete pods: %w", err)
		}
		for _, p := range list.Items {
			_ = cs.CoreV1().Pods(podNS).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
	}
	return waitFor(ctx, timeout, "benchmark pods to be gone", func() (bool, error) {
		list, err := cs.CoreV1().Pods(podNS).List(ctx, sel)
		if err != nil {
			return false, err
		}
		return len(list.Items) == 0, fmt.Errorf("%d pods left", len(list.Items))
	})
}
