package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// rcSelector is the label of the RC's pods (and of the orphan it adopts).
const rcSelector = "app=rc-web"

// rcScript serves the pod's hostname (its name) on port 8080, as the
// conformance image serve-hostname does.
const rcScript = "mkdir -p /www && hostname > /www/index.html && echo '<a href=\"/rewriteme\">test</a>' > /www/link.html && " +
	"exec httpd -f -p 8080 -h /www"

func rcPod(name string) *corev1.Pod {
	c := bbContainer("web", rcScript)
	c.Ports = []corev1.ContainerPort{{ContainerPort: 8080}}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "rc-web"}},
		Spec: corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](1), Containers: []corev1.Container{c}}}
}

// TestReplicationController runs a core/v1 ReplicationController on a real
// node: it adopts a matching orphan and creates the rest, each replica
// answers with its name through the API server's pods/proxy and through a
// Service's services/proxy, the node's agent answers through nodes/proxy, it scales up and
// down (kubectl scale and the scale subresource), releases a pod relabelled
// out of its selector and replaces it, shows in `kubectl get all`, and
// `kubectl delete rc` takes its pods with it (garbage collector).
func TestReplicationController(t *testing.T) {
	e := startCluster(t)
	cs := e.server.Clientset
	waitNodeReady(t, e, false)
	k := newKubectl(t, e)
	ctx := context.Background()
	createPod(t, cs, rcPod("rc-orphan"))
	waitPod(t, cs, "rc-orphan", "ready", podReady)
	tmpl := rcPod("")
	rc := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "rc-web"},
		Spec: corev1.ReplicationControllerSpec{Replicas: ptr.To[int32](2),
			Template: &corev1.PodTemplateSpec{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec}}}
	rc, err := cs.CoreV1().ReplicationControllers("default").Create(ctx, rc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rcWaitReady(t, cs, rc.UID, 2)
	if p := waitPod(t, cs, "rc-orphan", "adopted", func(*corev1.Pod) bool { return true }); !metav1.IsControlledBy(p, rc) {
		t.Fatalf("orphan not adopted: %+v", p.OwnerReferences)
	}
	t.Run("PodProxy", func(t *testing.T) { rcPodProxy(t, cs, rc.UID) })
	t.Run("ServiceProxy", func(t *testing.T) { rcServiceProxy(t, cs, rc.UID) })
	t.Run("NodeProxy", func(t *testing.T) { nodeProxy(t, cs) })
	t.Run("Scale", func(t *testing.T) { rcScale(t, k.with(t), cs, rc.UID) })
	t.Run("Release", func(t *testing.T) { rcRelease(t, cs, rc.UID) })
	t.Run("GetAll", func(t *testing.T) {
		if out := k.with(t).must("", "get", "all"); !strings.Contains(out, "replicationcontroller/rc-web") {
			t.Fatalf("kubectl get all lacks the RC:\n%s", out)
		}
	})
	t.Run("DeleteCascades", func(t *testing.T) {
		k.with(t).must("", "delete", "rc", "rc-web")
		waitFor(t, 90*time.Second, "the RC's pods gone", func() (bool, error) {
			l, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: rcSelector})
			if err != nil || len(l.Items) != 0 {
				return false, fmt.Errorf("%d pods left (%v)", len(l.Items), err)
			}
			return true, nil
		})
	})
}

// rcOwned lists the active pods rc controls.
func rcOwned(t *testing.T, cs kubernetes.Interface, uid types.UID) []corev1.Pod {
	t.Helper()
	l, err := cs.CoreV1().Pods("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []corev1.Pod
	for _, p := range l.Items {
		if ref := metav1.GetControllerOf(&p); ref != nil && ref.UID == uid && deployPodActive(&p) {
			out = append(out, p)
		}
	}
	return out
}

// rcWaitReady waits for n ready pods of the RC and its status saying so.
func rcWaitReady(t *testing.T, cs kubernetes.Interface, uid types.UID, n int) {
	t.Helper()
	waitFor(t, 120*time.Second, fmt.Sprintf("%d ready pods of the RC", n), func() (bool, error) {
		pods := rcOwned(t, cs, uid)
		ready := 0
		for i := range pods {
			if podReady(&pods[i]) {
				ready++
			}
		}
		rc, err := cs.CoreV1().ReplicationControllers("default").Get(context.Background(), "rc-web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		st := rc.Status
		if len(pods) != n || ready != n || st.Replicas != int32(n) || st.ReadyReplicas != int32(n) || st.AvailableReplicas != int32(n) ||
			st.ObservedGeneration != rc.Generation {
			return false, fmt.Errorf("%d pods, %d ready, status %+v", len(pods), ready, st)
		}
		return true, nil
	})
}

func rcScale(t *testing.T, k *kubectlRunner, cs kubernetes.Interface, uid types.UID) {
	k.must("", "scale", "rc", "rc-web", "--replicas=3")
	rcWaitReady(t, cs, uid, 3)
	rcs := cs.CoreV1().ReplicationControllers("default")
	sc, err := rcs.GetScale(context.Background(), "rc-web", metav1.GetOptions{})
	if err != nil || sc.Spec.Replicas != 3 || sc.Status.Replicas != 3 || sc.Status.Selector != rcSelector {
		t.Fatalf("scale %+v (%v)", sc, err)
	}
	sc.ResourceVersion, sc.Spec.Replicas = "", 1
	if _, err := rcs.UpdateScale(context.Background(), "rc-web", sc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	rcWaitReady(t, cs, uid, 1)
}

// rcRelease relabels the RC's only pod out of the selector: the RC lets it
// go (no owner reference) and starts a replacement.
func rcRelease(t *testing.T, cs kubernetes.Interface, uid types.UID) {
	ctx := context.Background()
	victim := rcOwned(t, cs, uid)[0].Name
	patch := `{"metadata":{"labels":{"app":"released"}}}`
	if _, err := cs.CoreV1().Pods("default").Patch(ctx, victim, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cs, victim, "released", func(p *corev1.Pod) bool { return len(p.OwnerReferences) == 0 })
	rcWaitReady(t, cs, uid, 1)
	if err := cs.CoreV1().Pods("default").Delete(ctx, victim, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// rcPodProxy asks every replica for its name through pods/proxy: the
// default port (the first declared), an explicit one and a sub-path.
func rcPodProxy(t *testing.T, cs kubernetes.Interface, uid types.UID) {
	ctx := context.Background()
	for _, p := range rcOwned(t, cs, uid) {
		for _, name := range []string{p.Name, p.Name + ":8080", "http:" + p.Name + ":8080"} {
			for _, sub := range []string{"", "index.html"} {
				body, err := cs.CoreV1().RESTClient().Get().Namespace("default").Resource("pods").SubResource("proxy").
					Name(name).Suffix(sub).DoRaw(ctx)
				if err != nil || strings.TrimSpace(string(body)) != p.Name {
					t.Fatalf("pods/%s/proxy/%s: %q (%v), want the pod's name", name, sub, body, err)
				}
			}
		}
	}
	// HTML links come back rewritten to go through the proxy (upstream's proxy transport)
	p := rcOwned(t, cs, uid)[0]
	body, err := cs.CoreV1().RESTClient().Get().Namespace("default").Resource("pods").SubResource("proxy").
		Name(p.Name).Suffix("link.html").DoRaw(ctx)
	if want := `href="/api/v1/namespaces/default/pods/` + p.Name + `/proxy/rewriteme"`; err != nil || !strings.Contains(string(body), want) {
		t.Fatalf("pods/proxy/link.html: %q (%v), want %s", body, err, want)
	}
	// <name>/proxy without a trailing slash is a 301 to <name>/proxy/ (upstream's redirect)
	rc := cs.CoreV1().RESTClient().(*rest.RESTClient)
	noFollow := *rc.Client
	noFollow.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	u := rc.Get().Namespace("default").Resource("pods").SubResource("proxy").Name(p.Name).URL()
	resp, err := noFollow.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || !strings.HasPrefix(resp.Header.Get("Location"), u.Path+"/") {
		t.Fatalf("GET %s: %d to %q, want 301 to %s/", u.Path, resp.StatusCode, resp.Header.Get("Location"), u.Path)
	}
	_, err = cs.CoreV1().RESTClient().Get().Namespace("default").Resource("pods").SubResource("proxy").
		Name("rc-orphan:1").DoRaw(ctx)
	if err == nil {
		t.Fatal("proxy to a closed port succeeded")
	}
}

// rcServiceProxy asks a Service over the RC's pods for a name through
// services/proxy, by port name and by port number: the answer comes from
// one of the replicas.
func rcServiceProxy(t *testing.T, cs kubernetes.Interface, uid types.UID) {
	ctx := context.Background()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "rc-web"}, Spec: corev1.ServiceSpec{
		Selector: map[string]string{"app": "rc-web"},
		Ports:    []corev1.ServicePort{{Name: "web", Port: 80, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := cs.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.CoreV1().Services("default").Delete(ctx, "rc-web", metav1.DeleteOptions{}) }()
	names := map[string]bool{}
	for _, p := range rcOwned(t, cs, uid) {
		names[p.Name] = true
	}
	for _, name := range []string{"rc-web:web", "rc-web:80", "http:rc-web:web"} {
		waitFor(t, 60*time.Second, "services/"+name+"/proxy", func() (bool, error) {
			body, err := cs.CoreV1().RESTClient().Get().Namespace("default").Resource("services").SubResource("proxy").
				Name(name).Suffix("index.html").DoRaw(ctx)
			if err != nil || !names[strings.TrimSpace(string(body))] {
				return false, fmt.Errorf("%q (%v), want one of %v", body, err, names)
			}
			return true, nil
		})
	}
	_, err := cs.CoreV1().RESTClient().Get().Namespace("default").Resource("services").SubResource("proxy").
		Name("rc-web:81").DoRaw(ctx)
	if !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("proxy to a port the service lacks: %v, want 503", err)
	}
}

// nodeProxy reaches the node's agent API through nodes/proxy: /healthz and
// the kubelet's /pods.
func nodeProxy(t *testing.T, cs kubernetes.Interface) {
	ctx := context.Background()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("nodes: %v", err)
	}
	req := func(sub string) ([]byte, error) {
		return cs.CoreV1().RESTClient().Get().Resource("nodes").SubResource("proxy").Name(nodes.Items[0].Name).Suffix(sub).DoRaw(ctx)
	}
	if body, err := req("healthz"); err != nil || strings.TrimSpace(string(body)) != "ok" {
		t.Fatalf("nodes/proxy/healthz: %q (%v)", body, err)
	}
	body, err := req("pods")
	if err != nil || !strings.Contains(string(body), `"rc-orphan"`) && !strings.Contains(string(body), "rc-web") {
		t.Fatalf("nodes/proxy/pods: %.300s (%v)", body, err)
	}
}
