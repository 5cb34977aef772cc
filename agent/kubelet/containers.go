package kubelet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/orch/orch/agent/prober"
	"github.com/orch/orch/agent/qos"
	"github.com/orch/orch/agent/runtime"
)

// runContainers starts what should run: init containers one at a time
// (native sidecars stay up), then the app containers. It returns the
// containers' waiting reasons and when to look again.
func (k *Kubelet) runContainers(ctx context.Context, pod *corev1.Pod, st *podState, env *podEnv) (map[string]waiting, time.Duration) {
	list, err := k.cfg.Runtime.ListContainers(ctx, string(pod.UID))
	if err != nil {
		return k.pullWaits(st), time.Second
	}
	views := groupContainers(list)
	r := &runPass{ctx: ctx, k: k, pod: pod, st: st, env: env, views: views, waits: k.pullWaits(st)}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if qos.IsRestartableInit(c) {
			r.handle(c, containerPolicy(pod, c, true))
			if !views[c.Name].running() {
				return r.waits, r.after
			}
			continue
		}
		if views[c.Name].succeeded() {
			continue
		}
		if v := views[c.Name]; v.exited() && pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
			return r.waits, r.after // failed for good: the pod fails
		}
		r.handle(c, containerPolicy(pod, c, true))
		return r.waits, r.after
	}
	for i := range pod.Spec.Containers {
		r.handle(&pod.Spec.Containers[i], containerPolicy(pod, &pod.Spec.Containers[i], false))
	}
	for _, c := range ephemeralContainers(pod) {
		r.handle(c, corev1.RestartPolicyNever) // run once, never restarted
	}
	return r.waits, r.after
}

// runPass is one pass over a pod's containers.
type runPass struct {
	ctx   context.Context
	k     *Kubelet
	pod   *corev1.Pod
	st    *podState
	env   *podEnv
	views map[string]*containerView
	waits map[string]waiting
	after time.Duration
}

// handle starts, restarts, resizes or kills one container, which restarts
// under policy.
func (r *runPass) handle(c *corev1.Container, policy corev1.RestartPolicy) {
	v := r.views[c.Name]
	if v.running() {
		if kind, failed := r.k.cfg.Probes.LivenessFailed(r.pod.UID, c.Name, v.latest.ID); failed {
			msg := prober.KillMessage(c.Name, kind, policy != corev1.RestartPolicyNever)
			r.k.killContainer(r.ctx, r.pod, c, *v.latest, r.st.podIP, msg)
			r.after = minPositive(r.after, time.Second)
			return
		}
		if r.redefine(c, v) {
			v = r.views[c.Name]
		} else if !r.k.resizeContainer(r.ctx, r.pod, r.st, c, *v.latest) {
			r.after = minPositive(r.after, time.Second)
			return
		}
	}
	d := decide(policy, v, r.k.cfg.Now())
	if r.st.redefined[c.Name] && v.exited() { // restart at once, whatever the policy (kubelet's containerChanged)
		d = decision{act: actStart, restartCount: v.latest.RestartCount + 1}
	}
	switch d.act {
	case actWait:
		l := v.latest
		delay := crashBackoff(l.RestartCount, l.FinishedAt.Sub(l.StartedAt))
		r.waits[c.Name] = waiting{Reason: "CrashLoopBackOff", Message: crashLoopMessage(delay, c.Name, r.pod)}
		r.k.onceEvent(r.pod, r.st, "crash/"+l.ID, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container %s in pod %s_%s(%s)", c.Name, r.pod.Name, r.pod.Namespace, r.pod.UID)
		r.after = minPositive(r.after, d.wait)
	case actStart:
		if _, ok := r.st.images[c.Name]; !ok {
			return // image missing: waiting reason from the pull
		}
		if ok, retry := r.k.startImage(r.ctx, r.pod, r.st, c); !ok {
			r.waits[c.Name] = r.k.pullWaits(r.st)[c.Name]
			r.after = minPositive(r.after, retry)
			return
		}
		if err := verifyRunAsNonRoot(r.pod, c, r.st.images[c.Name].User); err != nil {
			r.waits[c.Name] = waiting{Reason: "CreateContainerConfigError", Message: err.Error()}
			r.k.cfg.Recorder.Eventf(r.pod, corev1.EventTypeWarning, "Failed", "Error: %v", err)
			r.after = minPositive(r.after, 10*time.Second)
			return
		}
		r.st.fresh[c.Name] = false
		if err := r.k.startContainer(r.ctx, r.pod, r.st, r.env, c, r.k.recoveredRestartCount(r.pod, c, d.restartCount, v), v); err != nil {
			reason := "CreateContainerError"
			if errors.As(err, new(configError)) {
				reason = "CreateContainerConfigError"
			}
			r.waits[c.Name] = waiting{Reason: reason, Message: err.Error()}
			r.k.cfg.Recorder.Eventf(r.pod, corev1.EventTypeWarning, "Failed", "Error: %v", err)
			r.after = minPositive(r.after, 5*time.Second)
			return
		}
		delete(r.waits, c.Name)
		delete(r.st.redefined, c.Name)
		if list, err := r.k.cfg.Runtime.ListContainers(r.ctx, string(r.pod.UID)); err == nil {
			r.views[c.Name] = groupContainers(list)[c.Name]
		}
	}
}

// redefine kills the running container v of c when its image is no longer
// the spec's (a pod update changed it), so this pass starts it again with
// the new image; it reports whether it did.
func (r *runPass) redefine(c *corev1.Container, v *containerView) bool {
	img, ok := r.st.images[c.Name]
	if !ok || v.latest.Image == "" || v.latest.Image == img.Ref {
		return false
	}
	r.st.redefined[c.Name] = true
	r.k.killContainer(r.ctx, r.pod, c, *v.latest, r.st.podIP, fmt.Sprintf("Container %s definition changed, will be restarted", c.Name))
	if list, err := r.k.cfg.Runtime.ListContainers(r.ctx, string(r.pod.UID)); err == nil {
		r.views[c.Name] = groupContainers(list)[c.Name]
	}
	return true
}

// startContainer creates (unless an earlier pass did) and starts instance
// restartCount of c, removing instances older than the previous one.
func (k *Kubelet) startContainer(ctx context.Context, pod *corev1.Pod, st *podState, env *podEnv, c *corev1.Container, restartCount int, v *containerView) error {
	id := runtime.ContainerID(string(pod.UID), c.Name, restartCount)
	if v == nil || v.latest == nil || v.latest.ID != id {
		spec, err := k.containerSpec(ctx, pod, st, env, c, restartCount)
		if err != nil {
			return err
		}
		if err := k.cfg.Runtime.CreateContainer(ctx, spec); err != nil {
			return err
		}
		st.applied[id] = spec.Resources
		k.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, "Created", "Created container: %s", c.Name)
	}
	if err := k.cfg.Runtime.StartContainer(ctx, id); err != nil {
		return err
	}
	k.cfg.Recorder.Eventf(pod, corev1.EventTypeNormal, "Started", "Started container %s", c.Name)
	if k.cfg.Hooks != nil {
		if err := k.cfg.Hooks.PostStart(ctx, pod, c, id, st.podIP); err != nil {
			if cs, serr := k.cfg.Runtime.ContainerStatus(ctx, id); serr == nil {
				k.killContainer(ctx, pod, c, cs, st.podIP, fmt.Sprintf("FailedPostStartHook: container %s", c.Name))
			}
		}
	}
	if v != nil {
		for _, old := range v.all {
			if old.RestartCount < restartCount-1 {
				if err := k.cfg.Runtime.RemoveContainer(ctx, old.ID); err != nil {
					k.log.Debug("removing old container failed", zap.String("container", old.ID), zap.Error(err))
				}
				k.removeTerminationFile(pod.UID, c.Name, old.RestartCount)
				delete(st.messages, old.ID)
				delete(st.applied, old.ID)
			}
		}
	}
	return nil
}

// gracePeriod is the pod's termination grace period.
func gracePeriod(pod *corev1.Pod) time.Duration {
	switch {
	case pod.DeletionGracePeriodSeconds != nil:
		return time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	}
	return 30 * time.Second
}
