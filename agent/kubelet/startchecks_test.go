package kubelet

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/images"
	"github.com/orch/orch/agent/runtime"
)

// userImages wraps the harness images: every image has user, pulls are
// counted and fail while failing is set.
type userImages struct {
	*fakeImages
	mu      sync.Mutex
	user    string
	pulls   int
	failing bool
}

func (u *userImages) EnsureImage(ctx context.Context, ref string, p corev1.PullPolicy, a *images.Auth) (ImageInfo, error) {
	u.mu.Lock()
	u.pulls++
	fail := u.failing
	u.mu.Unlock()
	if fail {
		return ImageInfo{}, &images.PullError{Ref: ref, Err: context.DeadlineExceeded}
	}
	info, err := u.fakeImages.EnsureImage(ctx, ref, p, a)
	info.User = u.user
	return info, err
}

func (h *harness) userImages(user string) *userImages {
	u := &userImages{fakeImages: h.img, user: user}
	h.k.cfg.Images = u
	return u
}

func TestVerifyRunAsNonRoot(t *testing.T) {
	pod := func(psc *corev1.PodSecurityContext, sc *corev1.SecurityContext) (*corev1.Pod, *corev1.Container) {
		p := testPod("nr")
		p.Spec.SecurityContext = psc
		p.Spec.Containers[0].SecurityContext = sc
		return p, &p.Spec.Containers[0]
	}
	yes := &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	for _, c := range []struct {
		name      string
		psc       *corev1.PodSecurityContext
		sc        *corev1.SecurityContext
		imageUser string
		want      string // "" = allowed
	}{
		{"unset", nil, nil, "", ""},
		{"pod: image root (empty user)", yes, nil, "", `container has runAsNonRoot and image will run as root (pod: "nr_default(uid-nr)", container: app)`},
		{"pod: image uid 0", yes, nil, "0:0", "image will run as root"},
		{"pod: image non-numeric", yes, nil, "nobody", `container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root (pod: "nr_default(uid-nr)", container: app)`},
		{"pod: image numeric", yes, nil, "1000:1000", ""},
		{"pod: runAsUser 1000 beats root image", &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(1000))}, nil, "", ""},
		{"container: runAsUser 0", nil, &corev1.SecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(int64(0))}, "1000", "container's runAsUser breaks non-root policy"},
		{"container: runAsUser overrides pod", yes, &corev1.SecurityContext{RunAsUser: ptr.To(int64(0))}, "1000", "breaks non-root policy"},
		{"container: runAsNonRoot false overrides pod", yes, &corev1.SecurityContext{RunAsNonRoot: ptr.To(false)}, "", ""},
		{"container: nonRoot with image root", nil, &corev1.SecurityContext{RunAsNonRoot: ptr.To(true)}, "root", "non-numeric user (root)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, ctr := pod(c.psc, c.sc)
			err := verifyRunAsNonRoot(p, ctr, c.imageUser)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("err %v, want %q", err, c.want)
			}
		})
	}
}

func TestRunAsNonRootRefusesStart(t *testing.T) {
	h := newHarness(t)
	h.userImages("")
	h.add(testPod("nr", func(p *corev1.Pod) {
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true)}
	}))
	if after := h.sync("nr"); after <= 0 {
		t.Fatalf("no retry scheduled: %v", after)
	}
	cs := h.pod("nr").Status.ContainerStatuses[0]
	want := `container has runAsNonRoot and image will run as root (pod: "nr_default(uid-nr)", container: app)`
	if w := cs.State.Waiting; w == nil || w.Reason != "CreateContainerConfigError" || w.Message != want {
		t.Fatalf("state %+v", cs.State)
	}
	for _, call := range h.rt.Calls {
		if strings.HasPrefix(call, "create") {
			t.Fatalf("container created: %v", h.rt.Calls)
		}
	}
	if ev := h.events(); !strings.Contains(ev, "Warning Failed Error: "+want) {
		t.Fatalf("events:\n%s", ev)
	}
	// the image user fixed (e.g. a new image): the container starts
	h.userImages("1000")
	delete(h.k.pods["uid-nr"].images, "app")
	h.sync("nr")
	if cs := h.pod("nr").Status.ContainerStatuses[0]; cs.State.Running == nil {
		t.Fatalf("after a non-root image: %+v", cs.State)
	}
}

func TestPullAlwaysOnEveryStart(t *testing.T) {
	h := newHarness(t)
	u := h.userImages("")
	h.add(testPod("pa", func(p *corev1.Pod) { p.Spec.Containers[0].ImagePullPolicy = corev1.PullAlways }))
	h.sync("pa")
	h.sync("pa") // running: no pull
	if u.pulls != 1 {
		t.Fatalf("pulls after start = %d, want 1", u.pulls)
	}
	h.exit("pa", "app", 0, 1, false)
	h.sync("pa") // first restart is immediate and pulls again
	if cs := h.pod("pa").Status.ContainerStatuses[0]; u.pulls != 2 || cs.State.Running == nil || cs.RestartCount != 1 {
		t.Fatalf("after restart: pulls %d state %+v", u.pulls, cs.State)
	}
	h.exit("pa", "app", 1, 1, false)
	u.failing = true
	h.offset += 11 * time.Second // past the crash back-off
	h.sync("pa")
	cs := h.pod("pa").Status.ContainerStatuses[0]
	if w := cs.State.Waiting; w == nil || w.Reason != "ErrImagePull" || cs.LastTerminationState.Terminated == nil {
		t.Fatalf("pull failure on restart: %+v last %+v", cs.State, cs.LastTerminationState)
	}
	h.offset += 2 * time.Second
	h.sync("pa")
	if w := h.pod("pa").Status.ContainerStatuses[0].State.Waiting; w == nil || w.Reason != "ImagePullBackOff" {
		t.Fatalf("while backing off: %+v", w)
	}
	if ev := h.events(); !strings.Contains(ev, "Failed to pull image") {
		t.Fatalf("events:\n%s", ev)
	}
	u.failing = false
	h.offset += 11 * time.Second // past the pull back-off
	h.sync("pa")
	if cs := h.pod("pa").Status.ContainerStatuses[0]; cs.State.Running == nil || cs.RestartCount != 2 {
		t.Fatalf("after the pull recovered: %+v", cs.State)
	}
}

func TestAlwaysPull(t *testing.T) {
	for img, want := range map[string]bool{"busybox": true, "busybox:latest": true, "reg:5000/busybox": true,
		"busybox:1.36": false, "reg:5000/busybox:1.36": false, "busybox@sha256:abc": false} {
		if got := alwaysPull(&corev1.Container{Image: img}); got != want {
			t.Errorf("alwaysPull(%q) = %v", img, got)
		}
	}
	if !alwaysPull(&corev1.Container{Image: "busybox:1.36", ImagePullPolicy: corev1.PullAlways}) ||
		alwaysPull(&corev1.Container{Image: "busybox", ImagePullPolicy: corev1.PullIfNotPresent}) {
		t.Error("an explicit policy must win")
	}
}

func TestTerminationMessageFile(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("tm", func(p *corev1.Pod) {
		p.Spec.RestartPolicy = corev1.RestartPolicyNever
		p.Spec.Containers[0].TerminationMessagePath = "/dev/termination-log"
	}))
	h.sync("tm")
	id := runtime.ContainerID("uid-tm", "app", 0)
	spec, _ := h.rt.Spec(id)
	file := h.k.terminationFile("uid-tm", "app", 0)
	var mounted bool
	for _, m := range spec.Mounts {
		mounted = mounted || (m.ContainerPath == "/dev/termination-log" && m.HostPath == file)
	}
	if fi, err := os.Stat(file); !mounted || err != nil || fi.Mode().Perm() != 0o666 {
		t.Fatalf("termination file %s: mounted %v, %v %v", file, mounted, fi, err)
	}
	if err := os.WriteFile(file, []byte(strings.Repeat("x", 5000)+"the end"), 0o666); err != nil {
		t.Fatal(err)
	}
	h.exit("tm", "app", 0, 3, false)
	h.sync("tm")
	term := h.pod("tm").Status.ContainerStatuses[0].State.Terminated
	if term == nil || len(term.Message) != 4096 || !strings.HasSuffix(term.Message, "the end") {
		t.Fatalf("terminated %+v", term)
	}
}

func TestTerminationMessageFallback(t *testing.T) {
	h := newHarness(t)
	pod := testPod("fb")
	c := &pod.Spec.Containers[0]
	c.TerminationMessagePath, c.TerminationMessagePolicy = "/dev/termination-log", corev1.TerminationMessageFallbackToLogsOnError
	logPath := filepath.Join(t.TempDir(), "0.log")
	var log strings.Builder
	for i := 0; i < 100; i++ {
		log.WriteString("2024-01-01T00:00:00.000000000Z stdout F line-" + strconv.Itoa(i) + "\n")
	}
	log.WriteString("2024-01-01T00:00:00.000000000Z stderr P part-\n2024-01-01T00:00:00.000000000Z stderr F end\n")
	if err := os.WriteFile(logPath, []byte(log.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := h.k.terminationMount(pod, c, 0); err != nil { // empty file
		t.Fatal(err)
	}
	cs := &runtime.ContainerStatus{ID: "x", RestartCount: 0, State: runtime.StateExited, ExitCode: 2, LogPath: logPath}
	msg := h.k.terminationMessage(pod, c, cs)
	if !strings.HasPrefix(msg, "line-22\n") || !strings.HasSuffix(msg, "line-99\npart-end\n") {
		t.Fatalf("fallback message (last 80 lines):\n%s", msg)
	}
	cs.ExitCode = 0 // success: no fallback
	if msg := h.k.terminationMessage(pod, c, cs); msg != "" {
		t.Fatalf("message of a succeeded container: %q", msg)
	}
	cs.ExitCode = 1
	if err := os.WriteFile(logPath, []byte("2024-01-01T00:00:00Z stdout F "+strings.Repeat("y", 3000)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg := h.k.terminationMessage(pod, c, cs); len(msg) != 2048 {
		t.Fatalf("fallback message of %d bytes, want 2048", len(msg))
	}
	if err := os.WriteFile(h.k.terminationFile(pod.UID, "app", 0), []byte("from file"), 0o666); err != nil {
		t.Fatal(err)
	}
	if msg := h.k.terminationMessage(pod, c, cs); msg != "from file" {
		t.Fatalf("file message: %q", msg)
	}
}

// TestBadSubPathIsAConfigError: a subPathExpr that cannot be used (here
// the harness resolves no env, so it is missing) leaves the container
// waiting with CreateContainerConfigError, as kubelet.
func TestBadSubPathIsAConfigError(t *testing.T) {
	h := newHarness(t)
	h.add(testPod("sub", func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "w", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		c := &p.Spec.Containers[0]
		c.Env = []corev1.EnvVar{{Name: "POD_NAME", Value: ".."}}
		c.VolumeMounts = []corev1.VolumeMount{{Name: "w", MountPath: "/w", SubPathExpr: "$(POD_NAME)"}}
	}))
	h.sync("sub")
	cs := h.pod("sub").Status.ContainerStatuses[0]
	if w := cs.State.Waiting; w == nil || w.Reason != "CreateContainerConfigError" || !strings.Contains(w.Message, `volumeMount "w"`) {
		t.Fatalf("state %+v", cs.State)
	}
}
