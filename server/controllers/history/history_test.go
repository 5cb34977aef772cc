package history

import (
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func tpl(image string) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: image}}}}
}

func TestPatchAndHash(t *testing.T) {
	a, err := Patch(tpl("busybox:1.36"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Patch(tpl("busybox:1.37"))
	var m struct {
		Spec struct {
			Template map[string]any `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(a, &m); err != nil || m.Spec.Template["$patch"] != "replace" {
		t.Fatalf("patch %s: %v", a, err)
	}
	if Hash(a, nil) == Hash(b, nil) {
		t.Fatal("different templates, same hash")
	}
	if Hash(a, nil) != Hash(a, nil) || Hash(a, nil) == Hash(a, ptr.To[int32](1)) {
		t.Fatal("hash not stable or ignores the collision count")
	}
	if !SameData(a, []byte(" "+string(a))) || SameData(a, b) {
		t.Fatal("SameData")
	}
}
