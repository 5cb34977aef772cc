package registry

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestImageVolumes: image volume sources are defaulted and validated as
// upstream does.
func TestImageVolumes(t *testing.T) {
	pod := func(iv corev1.ImageVolumeSource) func() runtime.Object {
		return func() runtime.Object {
			p := goodPod("web-1")
			p.Spec.Volumes = []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{Image: &iv}}}
			return p
		}
	}
	runValidationCases(t, []validationCase{
		{"image", "", "pods", pod(corev1.ImageVolumeSource{Reference: "kitten:1.0", PullPolicy: corev1.PullNever}), "", ""},
		{"image, no policy", "", "pods", pod(corev1.ImageVolumeSource{Reference: "kitten:1.0"}), "", ""},
		{"image, no reference", "", "pods", pod(corev1.ImageVolumeSource{PullPolicy: corev1.PullAlways}),
			field.ErrorTypeRequired, "spec.volumes[0].image.reference"},
		{"image, bad policy", "", "pods", pod(corev1.ImageVolumeSource{Reference: "kitten:1.0", PullPolicy: "Sometimes"}),
			field.ErrorTypeNotSupported, "spec.volumes[0].image.pullPolicy"},
	})
	for ref, want := range map[string]corev1.PullPolicy{"kitten": corev1.PullAlways, "kitten:latest": corev1.PullAlways,
		"kitten:1.0": corev1.PullIfNotPresent, "kitten@sha256:00": corev1.PullIfNotPresent} {
		v := corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: ref}}}
		defaultVolume(&v)
		if v.Image.PullPolicy != want {
			t.Errorf("%s: pullPolicy %s, want %s", ref, v.Image.PullPolicy, want)
		}
	}
}
