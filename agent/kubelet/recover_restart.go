package kubelet

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
)

// logName matches a container log file: <restartCount>.log, optionally
// rotated (<restartCount>.log.<n>).
var logName = regexp.MustCompile(`^(\d+)\.log(\.\d+)?$`)

// recoveredRestartCount is the restart count to start c with. When the
// runtime holds no instance of c although the pod ran before (its state was
// lost: a reboot with a fresh containerd root), kubelet's
// calcRestartCountByLogDir is followed: one more than the highest N.log in
// c's log directory, so restartCount keeps counting and no log is reused.
func (k *Kubelet) recoveredRestartCount(pod *corev1.Pod, c *corev1.Container, want int, v *containerView) int {
	if v != nil && v.latest != nil {
		return want
	}
	if n := nextRestartCountFromLogs(k.containerLogDir(pod, c.Name)); n > want {
		k.log.Info("container state lost; restart count taken from its logs",
			zap.String("pod", pod.Namespace+"/"+pod.Name), zap.String("container", c.Name), zap.Int("restartCount", n))
		return n
	}
	return want
}

// containerLogDir is where the runtime writes c's logs:
// <data-dir>/agent/logs/<ns>_<name>_<uid>/<container> (PodsDir is
// <data-dir>/agent/pods).
func (k *Kubelet) containerLogDir(pod *corev1.Pod, name string) string {
	return filepath.Join(filepath.Dir(k.cfg.PodsDir), "logs", fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID), name)
}

// nextRestartCountFromLogs is 1 + the highest restart count among the log
// files in dir, 0 when there is none.
func nextRestartCountFromLogs(dir string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	next := 0
	for _, e := range entries {
		m := logName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		if n, err := strconv.Atoi(m[1]); err == nil && n+1 > next {
			next = n + 1
		}
	}
	return next
}
