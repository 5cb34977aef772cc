package kubelet

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// verifyRunAsNonRoot is kubelet's check (kuberuntime
// security_context_others.go) of the effective runAsNonRoot against the
// effective runAsUser or, without one, the image's user: a root or
// unverifiable (non-numeric) user refuses the start.
func verifyRunAsNonRoot(pod *corev1.Pod, c *corev1.Container, imageUser string) error {
	nonRoot, runAsUser := effectiveUser(pod, c)
	if nonRoot == nil || !*nonRoot {
		return nil
	}
	if runAsUser != nil {
		if *runAsUser == 0 {
			return fmt.Errorf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", podDesc(pod), c.Name)
		}
		return nil
	}
	uid, name := imageUID(imageUser)
	switch {
	case uid == nil && name != "":
		return fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)", name, podDesc(pod), c.Name)
	case uid != nil && *uid == 0:
		return fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", podDesc(pod), c.Name)
	}
	return nil
}

// effectiveUser is runAsNonRoot and runAsUser of the container's security
// context, each falling back to the pod's.
func effectiveUser(pod *corev1.Pod, c *corev1.Container) (nonRoot *bool, uid *int64) {
	if psc := pod.Spec.SecurityContext; psc != nil {
		nonRoot, uid = psc.RunAsNonRoot, psc.RunAsUser
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsNonRoot != nil {
			nonRoot = sc.RunAsNonRoot
		}
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
	}
	return nonRoot, uid
}

// imageUID reads an image config's user ("uid", "uid:gid", "name",
// "name:group") as containerd's CRI plugin does; an empty user is root.
func imageUID(user string) (*int64, string) {
	user, _, _ = strings.Cut(user, ":")
	if user == "" {
		return new(int64), ""
	}
	uid, err := strconv.ParseInt(user, 10, 64)
	if err != nil {
		return nil, user
	}
	return &uid, ""
}

// podDesc is kubelet's format.Pod: name_namespace(uid).
func podDesc(pod *corev1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}
