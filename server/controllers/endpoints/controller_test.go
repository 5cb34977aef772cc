package endpoints

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/server/controllers/kit/kittest"
)

func start(t *testing.T) (context.Context, kubernetes.Interface) {
	cs, _ := kittest.Run(t, NewSlices, kittest.Also(New))
	return t.Context(), cs
}

func webPod(t *testing.T, ctx context.Context, cs kubernetes.Interface, name, ip string, ready bool) {
	t.Helper()
	p, err := cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: "c", Image: "busybox",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	setReady(t, ctx, cs, p, ip, ready)
}

func setReady(t *testing.T, ctx context.Context, cs kubernetes.Interface, p *corev1.Pod, ip string, ready bool) {
	t.Helper()
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	p.Status.Phase, p.Status.PodIP = corev1.PodRunning, ip
	p.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}
	if _, err := cs.CoreV1().Pods("default").UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestEndpointsAndSlicesFollowPods(t *testing.T) {
	ctx, cs := start(t)
	_, err := cs.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "web"},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	webPod(t, ctx, cs, "a", "10.42.0.5", true)
	webPod(t, ctx, cs, "b", "10.42.0.6", false)
	kittest.Eventually(t, 10*time.Second, "endpoints with a ready and a not-ready address", func() (bool, string) {
		ep, err := cs.CoreV1().Endpoints("default").Get(ctx, "web", metav1.GetOptions{})
		if err != nil || len(ep.Subsets) != 1 {
			return false, fmt.Sprint(ep, err)
		}
		s := ep.Subsets[0]
		return len(s.Addresses) == 1 && s.Addresses[0].IP == "10.42.0.5" && len(s.NotReadyAddresses) == 1 &&
			s.Ports[0].Port == 8080, fmt.Sprintf("%+v", s)
	})
	kittest.Eventually(t, 10*time.Second, "a slice with both endpoints", func() (bool, string) {
		sl, err := cs.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=web"})
		if err != nil || len(sl.Items) != 1 {
			return false, fmt.Sprint(sl, err)
		}
		s := sl.Items[0]
		return len(s.Endpoints) == 2 && *s.Endpoints[0].Conditions.Ready && !*s.Endpoints[1].Conditions.Ready &&
			*s.Ports[0].Port == 8080 && s.OwnerReferences[0].Name == "web", fmt.Sprintf("%+v", s)
	})
	// A service without a selector keeps its hand-written Endpoints and
	// gets a mirrored slice (as the kubernetes Service does).
	_, err = cs.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Endpoints("default").Create(ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "ext"},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "192.0.2.10"}},
			Ports: []corev1.EndpointPort{{Name: "https", Port: 6443, Protocol: corev1.ProtocolTCP}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 10*time.Second, "hand-written Endpoints mirrored", func() (bool, string) {
		sl, err := cs.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=ext"})
		return err == nil && len(sl.Items) == 1 && sl.Items[0].Labels[discoveryv1.LabelManagedBy] == managedByMirroring &&
			sl.Items[0].Endpoints[0].Addresses[0] == "192.0.2.10", fmt.Sprint(sl, err)
	})
	if ep, _ := cs.CoreV1().Endpoints("default").Get(ctx, "ext", metav1.GetOptions{}); ep.Subsets[0].Ports[0].Port != 6443 {
		t.Fatalf("hand-written Endpoints were changed: %+v", ep)
	}
	// Endpoints marked skip-mirror (the kubernetes Service's) get no slice.
	_, err = cs.CoreV1().Services("default").Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "own"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().Endpoints("default").Create(ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "own",
		Labels: map[string]string{discoveryv1.LabelSkipMirror: "true"}},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "192.0.2.11"}},
			Ports: []corev1.EndpointPort{{Name: "https", Port: 6443, Protocol: corev1.ProtocolTCP}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if sl, _ := cs.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=own"}); len(sl.Items) != 0 {
		t.Fatalf("skip-mirror Endpoints were mirrored: %+v", sl.Items)
	}
	if err := cs.CoreV1().Services("default").Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kittest.Eventually(t, 10*time.Second, "endpoints gone with the service", func() (bool, string) {
		_, err := cs.CoreV1().Endpoints("default").Get(ctx, "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
}

// TestOrphanEndpointsAreLeftAlone: Endpoints someone writes without a
// Service survive their updates (conformance: the lifecycle of an Endpoint).
func TestOrphanEndpointsAreLeftAlone(t *testing.T) {
	ctx, cs := start(t)
	eps := cs.CoreV1().Endpoints("default")
	ep, err := eps.Create(ctx, &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "lonely", Labels: map[string]string{"a": "1"}},
		Subsets: []corev1.EndpointSubset{{Addresses: []corev1.EndpointAddress{{IP: "10.0.0.24"}},
			Ports: []corev1.EndpointPort{{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP}}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ep.Labels["a"] = "2"
	if _, err := eps.Update(ctx, ep, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if got, err := eps.Get(ctx, "lonely", metav1.GetOptions{}); err != nil || got.Labels["a"] != "2" {
		t.Fatalf("orphan Endpoints after an update: %+v, %v", got, err)
	}
}
