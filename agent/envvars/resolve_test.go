package envvars

import (
	"context"
	"errors"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func testSources() *MemSources {
	src := NewMemSources()
	src.PutConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"},
		Data: map[string]string{"B": "cm-b", "A": "cm-a", "bad=key": "x", "": "y"}})
	src.PutSecret(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sec"},
		Data: map[string][]byte{"PASS": []byte("s3cr3t")}})
	return src
}

func testPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-1",
			Labels: map[string]string{"app": "web", "tier": "fe"}, Annotations: map[string]string{"a/b": "c\"d"}},
		Spec: corev1.PodSpec{NodeName: "n1", ServiceAccountName: "sa",
			Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
			}}, {Name: "side"}}},
	}
}

func fieldEnv(name, path string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
}

func resEnv(name, res, div, ctr string) corev1.EnvVar {
	fs := &corev1.ResourceFieldSelector{Resource: res, ContainerName: ctr}
	if div != "" {
		fs.Divisor = resource.MustParse(div)
	}
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: fs}}
}

func TestResolve(t *testing.T) {
	in := Inputs{PodIP: "10.42.0.5", HostIP: "192.168.1.2", ServiceEnv: map[string]string{"KUBERNETES_SERVICE_HOST": "10.43.0.1", "SVC": "s"},
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}}
	cases := []struct {
		name    string
		c       corev1.Container
		want    []string
		wantErr bool
	}{
		{name: "literal and expansion", c: corev1.Container{Env: []corev1.EnvVar{
			{Name: "A", Value: "a"}, {Name: "B", Value: "$(A)-$(SVC)-$(NOPE)-$$(A)"}, {Name: "E"}}},
			want: []string{"A=a", "B=a-s-$(NOPE)-$(A)", "E=", "KUBERNETES_SERVICE_HOST=10.43.0.1", "SVC=s"}},
		{name: "expansion sees only earlier vars", c: corev1.Container{Env: []corev1.EnvVar{
			{Name: "X", Value: "$(Y)"}, {Name: "Y", Value: "y"}}},
			want: []string{"X=$(Y)", "Y=y", "KUBERNETES_SERVICE_HOST=10.43.0.1", "SVC=s"}},
		{name: "envFrom then env wins, prefix, invalid keys skipped", c: corev1.Container{
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}},
				{Prefix: "S_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}}}},
			Env: []corev1.EnvVar{{Name: "A", Value: "over-$(B)"}, {Name: "SVC", Value: "mine"}}},
			want: []string{"A=over-cm-b", "B=cm-b", "S_PASS=s3cr3t", "SVC=mine", "KUBERNETES_SERVICE_HOST=10.43.0.1"}},
		{name: "optional missing skipped", c: corev1.Container{
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Optional: ptr.To(true)}}},
			Env: []corev1.EnvVar{
				{Name: "K1", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "nokey", Optional: ptr.To(true)}}},
				{Name: "K2", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "x", Optional: ptr.To(true)}}},
				{Name: "K3", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "PASS"}}},
				{Name: "K4", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "A"}}},
			}},
			want: []string{"K3=s3cr3t", "K4=cm-a", "KUBERNETES_SERVICE_HOST=10.43.0.1", "SVC=s"}},
		{name: "missing configmap", c: corev1.Container{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}}}}}, wantErr: true},
		{name: "missing key", c: corev1.Container{Env: []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}, Key: "nokey"}}}}}, wantErr: true},
		{name: "fieldRefs", c: corev1.Container{Env: []corev1.EnvVar{
			fieldEnv("N", "metadata.name"), fieldEnv("NS", "metadata.namespace"), fieldEnv("U", "metadata.uid"),
			fieldEnv("L", "metadata.labels['app']"), fieldEnv("AN", "metadata.annotations['a/b']"), fieldEnv("LS", "metadata.labels"),
			fieldEnv("NODE", "spec.nodeName"), fieldEnv("SA", "spec.serviceAccountName"), fieldEnv("HIP", "status.hostIP"),
			fieldEnv("PIP", "status.podIP"), fieldEnv("PIPS", "status.podIPs"), {Name: "X", Value: "$(PIP):80"}}},
			want: []string{"N=web", "NS=ns", "U=uid-1", "L=web", "AN=c\"d", "LS=app=\"web\"\ntier=\"fe\"", "NODE=n1", "SA=sa",
				"HIP=192.168.1.2", "PIP=10.42.0.5", "PIPS=10.42.0.5", "X=10.42.0.5:80", "KUBERNETES_SERVICE_HOST=10.43.0.1", "SVC=s"}},
		{name: "bad fieldRef", c: corev1.Container{Env: []corev1.EnvVar{fieldEnv("N", "spec.nope")}}, wantErr: true},
		{name: "resourceFieldRefs", c: corev1.Container{Name: "c", Env: []corev1.EnvVar{
			resEnv("RC", "requests.cpu", "", ""), resEnv("RCM", "requests.cpu", "1m", ""), resEnv("LC", "limits.cpu", "", ""),
			resEnv("LM", "limits.memory", "1Mi", ""), resEnv("RM", "requests.memory", "", ""), resEnv("SIDE", "limits.memory", "1Gi", "side"),
			resEnv("ES", "requests.ephemeral-storage", "", "")}, Resources: testPod().Spec.Containers[0].Resources},
			want: []string{"RC=1", "RCM=250", "LC=4", "LM=128", "RM=67108864", "SIDE=8", "ES=0", "KUBERNETES_SERVICE_HOST=10.43.0.1", "SVC=s"}},
		{name: "bad resource", c: corev1.Container{Env: []corev1.EnvVar{resEnv("R", "limits.gpu", "", "")}}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(context.Background(), testPod(), &tc.c, testSources(), in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestResolveNotFoundIsWrapped(t *testing.T) {
	c := &corev1.Container{Name: "c", Env: []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "nope"}, Key: "k"}}}}}
	_, err := Resolve(context.Background(), testPod(), c, testSources(), Inputs{})
	var st apierrors.APIStatus
	if !apierrors.IsNotFound(err) || !errors.As(err, &st) {
		t.Fatalf("want NotFound, got %v", err)
	}
}
