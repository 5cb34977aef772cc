package kubelet

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/orch/orch/agent/runtime"
)

// Termination messages, as kubelet: a file under the pod's dir is
// bind-mounted at the container's terminationMessagePath (default
// /dev/termination-log); when the container has exited its content (at
// most the last 4096 bytes) becomes state.terminated.message. With policy
// FallbackToLogsOnError, a failed container whose file is empty gets the
// last 80 lines (at most 2048 bytes) of its log instead.
const (
	maxTerminationMessage = 4096
	maxFallbackLines      = 80
	maxFallbackBytes      = 2048
)

// terminationFile is the host file behind instance restartCount of
// container name's terminationMessagePath.
func (k *Kubelet) terminationFile(uid types.UID, name string, restartCount int) string {
	return filepath.Join(k.podDir(uid), "containers", name, strconv.Itoa(restartCount))
}

// terminationMount creates the (empty, world-writable: the container may
// run as any user) termination message file and returns its mount; none
// when the container has no terminationMessagePath.
func (k *Kubelet) terminationMount(pod *corev1.Pod, c *corev1.Container, restartCount int) ([]runtime.Mount, error) {
	if c.TerminationMessagePath == "" {
		return nil, nil
	}
	p := k.terminationFile(pod.UID, c.Name, restartCount)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("container %s termination message file: %w", c.Name, err)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o666)
	if err != nil {
		return nil, fmt.Errorf("container %s termination message file: %w", c.Name, err)
	}
	f.Close()
	if err := os.Chmod(p, 0o666); err != nil {
		return nil, fmt.Errorf("container %s termination message file: %w", c.Name, err)
	}
	return []runtime.Mount{{HostPath: p, ContainerPath: c.TerminationMessagePath}}, nil
}

func (k *Kubelet) removeTerminationFile(uid types.UID, name string, restartCount int) {
	_ = os.Remove(k.terminationFile(uid, name, restartCount))
}

// terminationMessages returns the messages of the pod's exited containers
// by container ID; a message once read is cached in st (an exited
// container does not change).
func (k *Kubelet) terminationMessages(pod *corev1.Pod, st *podState, views map[string]*containerView) map[string]string {
	for _, c := range allContainers(pod) {
		v := views[c.Name]
		if v == nil {
			continue
		}
		for _, cs := range []*runtime.ContainerStatus{v.latest, v.previous} {
			if cs == nil || cs.State != runtime.StateExited {
				continue
			}
			if _, ok := st.messages[cs.ID]; !ok {
				// an empty answer is read again: the log may still be
				// catching up with the container's last output
				if msg := k.terminationMessage(pod, c, cs); msg != "" {
					st.messages[cs.ID] = msg
				}
			}
		}
	}
	return st.messages
}

func (k *Kubelet) terminationMessage(pod *corev1.Pod, c *corev1.Container, cs *runtime.ContainerStatus) string {
	fallback := c.TerminationMessagePolicy == corev1.TerminationMessageFallbackToLogsOnError && cs.ExitCode != 0
	if c.TerminationMessagePath == "" {
		return logsIf(fallback, cs.LogPath)
	}
	p := k.terminationFile(pod.UID, c.Name, cs.RestartCount)
	data, err := readTail(p, maxTerminationMessage)
	switch {
	case os.IsNotExist(err):
		return logsIf(fallback, cs.LogPath)
	case err != nil:
		return fmt.Sprintf("Error on reading termination log %s: %v", p, err)
	case len(data) == 0:
		return logsIf(fallback, cs.LogPath)
	}
	return string(data)
}

func logsIf(fallback bool, logPath string) string {
	if !fallback || logPath == "" {
		return ""
	}
	return lastLogLines(logPath, maxFallbackLines, maxFallbackBytes)
}

// readTail reads at most the last max bytes of path.
func readTail(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > max {
		if _, err := f.Seek(st.Size()-max, io.SeekStart); err != nil {
			return nil, err
		}
	}
	return io.ReadAll(io.LimitReader(f, max))
}

// lastLogLines is the content of the last lines entries of a CRI log file
// (stdout and stderr as written, without timestamps), at most maxBytes
// from their start, as kubelet's readLastStringFromContainerLogs.
func lastLogLines(path string, lines int, maxBytes int) string {
	data, err := readTail(path, 256*1024)
	if err != nil {
		return ""
	}
	entries := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(entries) > lines {
		entries = entries[len(entries)-lines:]
	}
	var out bytes.Buffer
	for _, e := range entries {
		// <timestamp> <stream> <P|F> <content>
		f := bytes.SplitN(e, []byte(" "), 4)
		if len(f) < 3 {
			continue
		}
		if len(f) == 4 {
			out.Write(f[3])
		}
		if string(f[2]) == "F" {
			out.WriteByte('\n')
		}
	}
	b := out.Bytes()
	if len(b) > maxBytes {
		b = b[:maxBytes]
	}
	return string(b)
}
