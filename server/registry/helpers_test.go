package registry

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// resourceFor returns the served resource group/resource of All(DefaultConfig()).
func resourceFor(t *testing.T, group, resource string) *Resource {
	t.Helper()
	for _, r := range All(DefaultConfig()) {
		if r.GroupVersion.Group == group && r.Resource == resource {
			return r
		}
	}
	t.Fatalf("no resource %s/%s", group, resource)
	return nil
}

// prepareCreate runs the create path the API layer runs: system fields,
// Default, PrepareForCreate; it returns Validate's errors.
func prepareCreate(t *testing.T, r *Resource, obj runtime.Object) field.ErrorList {
	t.Helper()
	m := mustMeta(obj)
	if r.Namespaced && m.GetNamespace() == "" {
		m.SetNamespace("default")
	}
	m.SetUID(types.UID("uid-" + m.GetName()))
	m.SetCreationTimestamp(metav1.NewTime(time.Now().Add(-2 * time.Hour)))
	r.Strategy.Default(obj)
	r.Strategy.PrepareForCreate(context.Background(), obj)
	return r.Strategy.Validate(context.Background(), obj)
}

// prepareUpdate runs the main update path and returns ValidateUpdate's errors.
func prepareUpdate(r *Resource, obj, old runtime.Object) field.ErrorList {
	mustMeta(obj).SetResourceVersion("5")
	r.Strategy.Default(obj)
	r.Strategy.PrepareForUpdate(context.Background(), obj, old)
	return r.Strategy.ValidateUpdate(context.Background(), obj, old)
}

// errKeys renders errors as "Type field" for comparisons.
func errKeys(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s %s", e.Type, e.Field))
	}
	return out
}

// requireErr fails unless errs has an error of type at path.
func requireErr(t *testing.T, errs field.ErrorList, typ field.ErrorType, path string) {
	t.Helper()
	for _, e := range errs {
		if e.Type == typ && e.Field == path {
			return
		}
	}
	t.Fatalf("want %s at %s, got %s", typ, path, strings.Join(errKeys(errs), "; "))
}

func requireNoErr(t *testing.T, errs field.ErrorList) {
	t.Helper()
	if len(errs) > 0 {
		t.Fatalf("unexpected errors: %v", errs.ToAggregate())
	}
}

func goodPod(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25",
				Ports: []corev1.ContainerPort{{ContainerPort: 80}}}},
		},
	}
}

func goodTemplate() corev1.PodTemplateSpec {
	p := goodPod("")
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}, Spec: p.Spec}
}

func metav1TypesUID(s string) types.UID { return types.UID(s) }
