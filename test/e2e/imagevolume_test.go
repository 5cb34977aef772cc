package e2e

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// imageVolume: a pod mounts the nginx image as an image volume, reads its
// files and cannot write into it; DeleteLeavesNothing checks that the
// snapshot view goes with the pod.
func imageVolume(t *testing.T, e *agentEnv, cs kubernetes.Interface) {
	c := bbContainer("app", "cat /img/www/index.html; if touch /img/new 2>/dev/null; then echo writable; else echo read-only; fi; sleep 3600")
	c.VolumeMounts = []corev1.VolumeMount{{Name: "img", MountPath: "/img"}}
	createPod(t, cs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "imgvol"}, Spec: corev1.PodSpec{
		NodeName: e.node, Containers: []corev1.Container{c},
		Volumes: []corev1.Volume{{Name: "img", VolumeSource: corev1.VolumeSource{
			Image: &corev1.ImageVolumeSource{Reference: "nginx:1.25", PullPolicy: corev1.PullIfNotPresent}}}}}})
	waitPod(t, cs, "imgvol", "Running", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	waitFor(t, 30*time.Second, "the image's file and a refused write in the log", func() (bool, error) {
		l := podLogs(t, cs, "imgvol")
		return strings.Contains(l, "hello from orch busybox") && strings.Contains(l, "read-only"), nil
	})
}
