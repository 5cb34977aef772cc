package core

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/server/registry"
)

func resource(t *testing.T, name string) *registry.Resource {
	t.Helper()
	for _, r := range resources(registry.Config{}) {
		if r.Resource == name {
			return r
		}
	}
	t.Fatalf("no resource %s", name)
	return nil
}

// create runs the API layer's create path and returns Validate's errors.
func create(r *registry.Resource, obj runtime.Object) field.ErrorList {
	ctx := context.Background()
	r.Strategy.Default(obj)
	r.Strategy.PrepareForCreate(ctx, obj)
	return r.Strategy.Validate(ctx, obj)
}

func errKeys(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, string(e.Type)+" "+e.Field)
	}
	return out
}

func template(l map[string]string) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "nginx:1.25"}}}}
}

func newRC(mut func(*corev1.ReplicationController)) *corev1.ReplicationController {
	r := &corev1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: corev1.ReplicationControllerSpec{Template: template(map[string]string{"app": "web"})}}
	if mut != nil {
		mut(r)
	}
	return r
}

// TestRCDefaults: selector and labels come from the template (unless
// set), replicas default to 1, the template gets the pod spec defaults.
func TestRCDefaults(t *testing.T) {
	r := newRC(nil)
	DefaultReplicationController(r)
	if r.Spec.Selector["app"] != "web" || r.Labels["app"] != "web" || ptr.Deref(r.Spec.Replicas, 0) != 1 {
		t.Fatalf("defaults: selector %v labels %v replicas %v", r.Spec.Selector, r.Labels, r.Spec.Replicas)
	}
	ps := r.Spec.Template.Spec
	if ps.RestartPolicy != corev1.RestartPolicyAlways || ps.DNSPolicy != corev1.DNSClusterFirst ||
		ps.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent || ps.TerminationGracePeriodSeconds == nil {
		t.Fatalf("pod spec defaults missing: %+v", ps)
	}
	r.Labels["extra"] = "x"
	if _, shared := r.Spec.Selector["extra"]; shared {
		t.Fatal("labels and selector share the template's map")
	}
	own := newRC(func(r *corev1.ReplicationController) {
		r.Labels = map[string]string{"own": "1"}
		r.Spec.Selector = map[string]string{"app": "web"}
		r.Spec.Replicas = ptr.To[int32](0)
	})
	DefaultReplicationController(own)
	if own.Labels["own"] != "1" || len(own.Labels) != 1 || *own.Spec.Replicas != 0 {
		t.Fatalf("set fields overwritten: %+v", own)
	}
}

func TestRCValidation(t *testing.T) {
	for _, c := range []struct {
		name string
		mut  func(*corev1.ReplicationController)
		want []string
	}{
		{"valid", nil, nil},
		{"no selector", func(r *corev1.ReplicationController) { r.Spec.Template.Labels = nil },
			[]string{"FieldValueRequired spec.selector"}},
		{"selector mismatch", func(r *corev1.ReplicationController) { r.Spec.Selector = map[string]string{"app": "db"} },
			[]string{"FieldValueInvalid spec.template.metadata.labels"}},
		{"negative", func(r *corev1.ReplicationController) {
			r.Spec.Replicas = ptr.To[int32](-1)
			r.Spec.MinReadySeconds = -1
		}, []string{"FieldValueInvalid spec.minReadySeconds", "FieldValueInvalid spec.replicas"}},
		{"no template", func(r *corev1.ReplicationController) {
			r.Spec.Selector = map[string]string{"app": "web"}
			r.Spec.Template = nil
		}, []string{"FieldValueRequired spec.template"}},
		{"restart never", func(r *corev1.ReplicationController) { r.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever },
			[]string{"FieldValueNotSupported spec.template.spec.restartPolicy"}},
		{"deadline", func(r *corev1.ReplicationController) { r.Spec.Template.Spec.ActiveDeadlineSeconds = ptr.To[int64](5) },
			[]string{"FieldValueForbidden spec.template.spec.activeDeadlineSeconds"}},
		{"pod spec", func(r *corev1.ReplicationController) { r.Spec.Template.Spec.Containers = nil },
			[]string{"FieldValueRequired spec.template.spec.containers"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := errKeys(create(resource(t, "replicationcontrollers"), newRC(c.mut)))
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Fatalf("errors %v, want %v", got, c.want)
			}
		})
	}
}

// TestRCUpdates: spec changes bump the generation, metadata changes do
// not, the main resource keeps the status and the status subresource the
// spec; selectors may change (unlike apps/v1).
func TestRCUpdates(t *testing.T) {
	r := resource(t, "replicationcontrollers")
	ctx := context.Background()
	old := newRC(nil)
	if errs := create(r, old); len(errs) > 0 {
		t.Fatal(errs)
	}
	old.Status = corev1.ReplicationControllerStatus{Replicas: 1, ReadyReplicas: 1}
	upd := old.DeepCopy()
	upd.Labels = map[string]string{"app": "web", "x": "y"}
	upd.Status.Replicas = 7
	r.Strategy.PrepareForUpdate(ctx, upd, old)
	if upd.Generation != 1 || upd.Status.Replicas != 1 {
		t.Fatalf("label update: generation %d status %+v", upd.Generation, upd.Status)
	}
	upd.Spec.Replicas = ptr.To[int32](3)
	upd.Spec.Selector = map[string]string{"app": "web"}
	r.Strategy.PrepareForUpdate(ctx, upd, old)
	if upd.Generation != 2 {
		t.Fatalf("spec update: generation %d", upd.Generation)
	}
	if errs := r.Strategy.ValidateUpdate(ctx, upd, old); len(errs) > 0 {
		t.Fatal(errs)
	}
	st := old.DeepCopy()
	st.Spec.Replicas = ptr.To[int32](9)
	st.Status = corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 3}
	r.Strategy.PrepareForStatusUpdate(ctx, st, old)
	if *st.Spec.Replicas != 1 {
		t.Fatalf("status update changed spec: %v", *st.Spec.Replicas)
	}
	got := errKeys(r.Strategy.ValidateStatusUpdate(ctx, st, old))
	if !slices.Equal(got, []string{"FieldValueInvalid status.readyReplicas"}) {
		t.Fatalf("status errors %v", got)
	}
}

func TestRCPrintingScaleFields(t *testing.T) {
	r := resource(t, "replicationcontrollers")
	rc := newRC(func(r *corev1.ReplicationController) {
		r.CreationTimestamp = metav1.NewTime(time.Now().Add(-time.Hour))
		r.Status = corev1.ReplicationControllerStatus{Replicas: 2, ReadyReplicas: 1}
	})
	DefaultReplicationController(rc)
	var names []string
	for _, c := range r.Strategy.TableColumns() {
		names = append(names, fmt.Sprintf("%s/%d", c.Name, c.Priority))
	}
	want := []string{"Name/0", "Desired/0", "Current/0", "Ready/0", "Age/0", "Containers/1", "Images/1", "Selector/1"}
	if !slices.Equal(names, want) {
		t.Fatalf("columns %v", names)
	}
	row := fmt.Sprint(r.Strategy.TableRow(rc))
	if row != "[web 1 2 1 60m web nginx:1.25 app=web]" {
		t.Fatalf("row %s", row)
	}
	spec, status, sel := r.Scale.Get(rc)
	r.Scale.Set(rc, 4)
	if spec != 1 || status != 2 || sel != "app=web" || *rc.Spec.Replicas != 4 {
		t.Fatalf("scale %d %d %q, set %d", spec, status, sel, *rc.Spec.Replicas)
	}
	if f := r.Strategy.Fields(rc); f["status.replicas"] != "2" {
		t.Fatalf("fields %v", f)
	}
	if !r.HasStatus || !r.OrphanDependents || !slices.Equal(r.ShortNames, []string{"rc"}) || !slices.Equal(r.Categories, []string{"all"}) {
		t.Fatalf("resource %+v", r)
	}
}

func TestPodTemplate(t *testing.T) {
	r := resource(t, "podtemplates")
	pt := &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "ns"},
		Template: *template(map[string]string{"app": "web", "tier": "fe"})}
	if errs := create(r, pt); len(errs) > 0 {
		t.Fatal(errs)
	}
	if pt.Template.Spec.RestartPolicy != corev1.RestartPolicyAlways || pt.Generation != 0 {
		t.Fatalf("defaults: %+v generation %d", pt.Template.Spec, pt.Generation)
	}
	if row := fmt.Sprint(r.Strategy.TableRow(pt)); row != "[t web nginx:1.25 app=web,tier=fe]" {
		t.Fatalf("row %s", row)
	}
	bad := pt.DeepCopy()
	bad.Template.Spec.Containers[0].Name = "Bad_Name"
	bad.Template.Spec.EphemeralContainers = []corev1.EphemeralContainer{{}}
	got := errKeys(r.Strategy.ValidateUpdate(context.Background(), bad, pt))
	for _, w := range []string{"FieldValueInvalid template.spec.containers[0].name", "FieldValueForbidden template.spec.ephemeralContainers"} {
		if !slices.Contains(got, w) {
			t.Fatalf("errors %v lack %s", got, w)
		}
	}
}
