package serviceaccount

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/admission"
)

type sas map[string]*corev1.ServiceAccount

func (s sas) ServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	return s[ns+"/"+name], nil
}

func podWith(mod func(*corev1.Pod)) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init"}}, Containers: []corev1.Container{{Name: "a"}, {Name: "b"}}}}
	if mod != nil {
		mod(p)
	}
	return p
}

func TestAdmit(t *testing.T) {
	store := sas{
		"ns/default": {ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		"ns/robot":   {ObjectMeta: metav1.ObjectMeta{Name: "robot"}, ImagePullSecrets: []corev1.LocalObjectReference{{Name: "reg"}}},
		"ns/quiet":   {ObjectMeta: metav1.ObjectMeta{Name: "quiet"}, AutomountServiceAccountToken: ptr.To(false)},
	}
	tests := []struct {
		name    string
		ns      string
		pod     *corev1.Pod
		wantErr string
		sa      string
		mounted bool
		pull    int
	}{
		{name: "defaults to default and mounts", ns: "ns", pod: podWith(nil), sa: "default", mounted: true},
		{name: "named SA with pull secrets", ns: "ns", pod: podWith(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "robot" }),
			sa: "robot", mounted: true, pull: 1},
		{name: "SA opts out", ns: "ns", pod: podWith(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "quiet" }), sa: "quiet"},
		{name: "pod opts out", ns: "ns", pod: podWith(func(p *corev1.Pod) { p.Spec.AutomountServiceAccountToken = ptr.To(false) }), sa: "default"},
		{name: "pod opts in over SA", ns: "ns", pod: podWith(func(p *corev1.Pod) {
			p.Spec.ServiceAccountName, p.Spec.AutomountServiceAccountToken = "quiet", ptr.To(true)
		}), sa: "quiet", mounted: true},
		{name: "missing SA refused", ns: "ns", pod: podWith(func(p *corev1.Pod) { p.Spec.ServiceAccountName = "ghost" }),
			wantErr: `error looking up service account ns/ghost: serviceaccount "ghost" not found`},
		{name: "default not created yet is admitted", ns: "fresh", pod: podWith(nil), sa: "default", mounted: true},
	}
	p := New(store)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"},
				Namespace: tt.ns, Object: tt.pod}
			err := p.Admit(context.Background(), a)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkPod(t, tt.pod, tt.sa, tt.mounted, tt.pull)
		})
	}
}

func checkPod(t *testing.T, pod *corev1.Pod, sa string, mounted bool, pull int) {
	t.Helper()
	if pod.Spec.ServiceAccountName != sa || len(pod.Spec.ImagePullSecrets) != pull {
		t.Fatalf("sa %q pull secrets %v", pod.Spec.ServiceAccountName, pod.Spec.ImagePullSecrets)
	}
	vols := 0
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, VolumePrefix) && len(v.Name) == len(VolumePrefix)+5 {
			vols++
			if len(v.Projected.Sources) != 3 || *v.Projected.Sources[0].ServiceAccountToken.ExpirationSeconds != 3607 {
				t.Fatalf("volume %+v", v)
			}
		}
	}
	if (vols == 1) != mounted || vols > 1 {
		t.Fatalf("%d token volumes, mounted=%v", vols, mounted)
	}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if hasMountAt(c.VolumeMounts, MountPath) != mounted {
			t.Fatalf("container %s mounts %v", c.Name, c.VolumeMounts)
		}
	}
}

func TestKeepsOwnMountAndIgnoresOthers(t *testing.T) {
	p := New(sas{"ns/default": {}})
	pod := podWith(func(p *corev1.Pod) {
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "mine", MountPath: MountPath}}
	})
	a := &admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: "ns", Object: pod}
	if err := p.Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Containers[0].VolumeMounts) != 1 || pod.Spec.Containers[0].VolumeMounts[0].Name != "mine" {
		t.Fatalf("own mount replaced: %v", pod.Spec.Containers[0].VolumeMounts)
	}
	cm := &corev1.ConfigMap{}
	a = &admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Object: cm}
	if err := p.Admit(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	mirror := podWith(func(p *corev1.Pod) { p.Annotations = map[string]string{mirrorPodAnnotation: "x"} })
	a = &admission.Attributes{Operation: admission.Create, Resource: schema.GroupVersionResource{Version: "v1", Resource: "pods"}, Namespace: "ns", Object: mirror}
	if err := p.Admit(context.Background(), a); err != nil || mirror.Spec.ServiceAccountName != "" {
		t.Fatalf("mirror pod touched: %v %q", err, mirror.Spec.ServiceAccountName)
	}
}
