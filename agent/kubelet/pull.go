package kubelet

import (
	"context"
	"errors"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/agent/images"
)

// ensureImages makes every container's image available, once per pod, and
// returns when a failed pull should be retried (0: none failed). Images of
// containers with pull policy Always are pulled again before each later
// start (startImage).
func (k *Kubelet) ensureImages(ctx context.Context, pod *corev1.Pod, st *podState) time.Duration {
	var retry time.Duration
	secrets := k.lazyPullSecrets(ctx, pod)
	for _, c := range allContainers(pod) {
		if _, ok := st.images[c.Name]; ok && st.pulledFor[c.Name] == c.Image {
			continue
		}
		delete(st.images, c.Name) // a new spec image: pull it first
		retry = minPositive(retry, k.ensureImage(ctx, pod, st, c, secrets))
	}
	return retry
}

// startImage is called before c starts: with pull policy Always (or a
// :latest / untagged image without a policy) the image is resolved again
// unless this sync pulled it already, as kubelet does at every container
// start. It reports whether the start may go on, and when to retry if not.
func (k *Kubelet) startImage(ctx context.Context, pod *corev1.Pod, st *podState, c *corev1.Container) (bool, time.Duration) {
	if !alwaysPull(c) || st.fresh[c.Name] {
		return true, 0
	}
	retry := k.ensureImage(ctx, pod, st, c, k.lazyPullSecrets(ctx, pod))
	return st.fresh[c.Name], retry
}

// alwaysPull says whether every start of c pulls its image.
func alwaysPull(c *corev1.Container) bool {
	if c.ImagePullPolicy != "" {
		return c.ImagePullPolicy == corev1.PullAlways
	}
	name := c.Image
	if i := strings.LastIndex(name, "@"); i >= 0 {
		return false
	}
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	_, tag, ok := strings.Cut(name, ":")
	return !ok || tag == "latest"
}

func (k *Kubelet) lazyPullSecrets(ctx context.Context, pod *corev1.Pod) func() []*corev1.Secret {
	var secrets []*corev1.Secret
	read := false
	return func() []*corev1.Secret {
		if !read {
			secrets, read = k.pullSecrets(ctx, pod), true
		}
		return secrets
	}
}

// ensureImage pulls c's image per its policy, honoring the pull back-off,
// and records the result in st; it returns when to retry a failed pull.
func (k *Kubelet) ensureImage(ctx context.Context, pod *corev1.Pod, st *podState, c *corev1.Container, secrets func() []*corev1.Secret) time.Duration {
	now := k.cfg.Now()
	ps := st.pull[c.Name]
	if ps != nil && now.Before(ps.retryAt) {
		k.onceEvent(pod, st, "backoff/"+c.Name+"/"+ps.retryAt.String(), corev1.EventTypeNormal, "BackOff", "Back-off pulling image %q", c.Image)
		return ps.retryAt.Sub(now)
	}
	present := !alwaysPull(c) && k.cfg.Images.Present(ctx, c.Image)
	var auth *images.Auth
	if !present {
		k.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, "Pulling", "Pulling image %q", c.Image)
		auth = pullAuth(c.Image, secrets())
	}
	start := time.Now()
	info, err := k.cfg.Images.EnsureImage(ctx, c.Image, c.ImagePullPolicy, auth)
	if err == nil {
		delete(st.pull, c.Name)
		st.images[c.Name], st.fresh[c.Name], st.pulledFor[c.Name] = info, true, c.Image
		if present {
			k.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, "Pulled", "Container image %q already present on machine", c.Image)
		} else {
			k.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, "Pulled", "Successfully pulled image %q in %s", c.Image, time.Since(start).Round(time.Millisecond))
		}
		return 0
	}
	if ps == nil {
		ps = &pullState{}
		st.pull[c.Name] = ps
	}
	ps.failures++
	ps.err = err.Error()
	ps.failedAt, ps.retryAt = now, now.Add(pullBackoff(ps.failures))
	k.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "Failed", "Failed to pull image %q: %v", c.Image, err)
	k.cfg.Recorder.Eventf(pod, corev1.EventTypeWarning, "Failed", "Error: %s", pullReason(err))
	return ps.retryAt.Sub(now)
}

// pullBackoff is kubelet's image back-off: 10 s doubling to 5 min.
func pullBackoff(failures int) time.Duration {
	d := backoffInitial
	for i := 1; i < failures && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

func pullReason(err error) string {
	switch {
	case errors.Is(err, images.ErrImageNeverPull):
		return "ErrImageNeverPull"
	case errors.Is(err, images.ErrInvalidImageName):
		return "InvalidImageName"
	}
	return "ErrImagePull"
}

// pullWaits are the waiting reasons of containers whose image is missing:
// the pull error right after a failure, ImagePullBackOff while backing off.
func (k *Kubelet) pullWaits(st *podState) map[string]waiting {
	out := map[string]waiting{}
	now := k.cfg.Now()
	for name, ps := range st.pull {
		if now.Sub(ps.failedAt) < time.Second {
			out[name] = waiting{Reason: "ErrImagePull", Message: ps.err}
			continue
		}
		out[name] = waiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image: " + ps.err}
	}
	return out
}

func (k *Kubelet) onceEvent(pod *corev1.Pod, st *podState, key, typ, reason, format string, args ...interface{}) {
	if st.once[key] {
		return
	}
	st.once[key] = true
	k.cfg.Recorder.Eventf(pod, typ, reason, format, args...)
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// allContainers are the pod's init, app and ephemeral containers.
func allContainers(pod *corev1.Pod) []*corev1.Container {
	var out []*corev1.Container
	for i := range pod.Spec.InitContainers {
		out = append(out, &pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	return append(out, ephemeralContainers(pod)...)
}

// ephemeralContainers are the pod's ephemeral containers as containers.
func ephemeralContainers(pod *corev1.Pod) []*corev1.Container {
	out := make([]*corev1.Container, 0, len(pod.Spec.EphemeralContainers))
	for i := range pod.Spec.EphemeralContainers {
		c := corev1.Container(pod.Spec.EphemeralContainers[i].EphemeralContainerCommon)
		out = append(out, &c)
	}
	return out
}
