package volumes

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/orch/orch/agent/envvars"
)

func cmVol(name, cm string, items []corev1.KeyToPath, mode *int32, optional *bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Items: items, DefaultMode: mode, Optional: optional}}}
}

func secretVol(name, secret string, optional *bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: secret, DefaultMode: ptr.To[int32](0o400), Optional: optional}}}
}

func hostSources() *envvars.MemSources {
	src := envvars.NewMemSources()
	src.PutConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"},
		Data: map[string]string{"a.conf": "A", "b.conf": "B"}, BinaryData: map[string][]byte{"bin": {0, 1, 2}}})
	src.PutSecret(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sec"},
		Data: map[string][]byte{"password": []byte("hunter2")}})
	return src
}

// assertNoMounts fails if anything is mounted under dir.
func assertNoMounts(t *testing.T, dir string) {
	t.Helper()
	mps, err := mountsUnder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(mps) > 0 {
		t.Fatalf("mounts left under %s: %v", dir, mps)
	}
}

func isTmpfs(t *testing.T, dir string) bool {
	t.Helper()
	ok, err := isMountPoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestHostEmptyDir(t *testing.T) {
	requireRoot(t)
	m := newTestManager(t, Config{})
	pod := testPod("uid-empty",
		corev1.Volume{Name: "disk", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: "mem", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
			Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi"))}}})
	ctx := context.Background()
	for range 2 { // idempotent
		vols, err := m.SetupPod(ctx, pod, hostSources())
		if err != nil {
			t.Fatal(err)
		}
		disk, mem := vols["disk"], vols["mem"]
		if disk.HostPath != filepath.Join(m.cfg.PodsDir, "uid-empty/volumes/kubernetes.io~empty-dir/disk") || disk.ReadOnly {
			t.Fatalf("disk volume %+v", disk)
		}
		if isTmpfs(t, disk.HostPath) || !isTmpfs(t, mem.HostPath) {
			t.Fatal("want disk on disk and mem on tmpfs")
		}
		if fileModeOf(t, disk.HostPath) != 0o777 || fileModeOf(t, mem.HostPath) != 0o777 {
			t.Fatal("emptyDir must be mode 0777")
		}
	}
	mem := filepath.Join(m.cfg.PodsDir, "uid-empty/volumes/kubernetes.io~empty-dir/mem")
	must(t, os.WriteFile(filepath.Join(mem, "small"), make([]byte, 512<<10), 0o644))
	err := os.WriteFile(filepath.Join(mem, "big"), make([]byte, 2<<20), 0o644)
	if err == nil {
		t.Fatal("writing 2Mi into a 1Mi tmpfs succeeded")
	}
	t.Logf("write beyond sizeLimit: %v", err)
	busy, err := os.Open(filepath.Join(mem, "small")) // a busy tmpfs is detached lazily
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	teardownAndCheck(t, m, pod.UID)
}

func teardownAndCheck(t *testing.T, m *Manager, uid types.UID) {
	t.Helper()
	for range 2 { // idempotent
		if err := m.TeardownPod(context.Background(), uid); err != nil {
			t.Fatal(err)
		}
	}
	assertNoMounts(t, m.cfg.PodsDir)
	if _, err := os.Stat(m.podDir(uid)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("pod dir left: %v", err)
	}
	uids, err := m.PodUIDs()
	if err != nil || len(uids) != 0 {
		t.Fatalf("PodUIDs after teardown = %v, %v", uids, err)
	}
}

func TestHostConfigMapSecret(t *testing.T) {
	requireRoot(t)
	m := newTestManager(t, Config{})
	pod := testPod("uid-cm",
		cmVol("all", "cm", nil, ptr.To[int32](0o640), nil),
		cmVol("items", "cm", []corev1.KeyToPath{{Key: "a.conf", Path: "conf/a"}, {Key: "bin", Path: "b", Mode: ptr.To[int32](0o600)}}, nil, nil),
		secretVol("sec", "sec", nil),
		cmVol("opt", "missing", nil, nil, ptr.To(true)),
		secretVol("optsec", "missing", ptr.To(true)),
		cmVol("optkey", "cm", []corev1.KeyToPath{{Key: "nokey", Path: "x"}, {Key: "b.conf", Path: "y"}}, nil, ptr.To(true)))
	vols, err := m.SetupPod(context.Background(), pod, hostSources())
	if err != nil {
		t.Fatal(err)
	}
	uids, _ := m.PodUIDs()
	if !reflect.DeepEqual(uids, []types.UID{"uid-cm"}) {
		t.Fatalf("PodUIDs = %v", uids)
	}
	for name, v := range vols {
		if !v.ReadOnly {
			t.Errorf("volume %s must be read-only", name)
		}
	}
	checks := []struct {
		vol, path, content string
		mode               os.FileMode
	}{
		{"all", "a.conf", "A", 0o640}, {"all", "b.conf", "B", 0o640}, {"all", "bin", "\x00\x01\x02", 0o640},
		{"items", "conf/a", "A", 0o644}, {"items", "b", "\x00\x01\x02", 0o600},
		{"sec", "password", "hunter2", 0o400}, {"optkey", "y", "B", 0o644},
	}
	for _, c := range checks {
		p := filepath.Join(vols[c.vol].HostPath, c.path)
		if got := readFile(t, p); got != c.content || fileModeOf(t, p) != c.mode {
			t.Errorf("%s/%s = %q mode %o, want %q %o", c.vol, c.path, got, fileModeOf(t, p), c.content, c.mode)
		}
	}
	if got := visible(t, vols["items"].HostPath); !reflect.DeepEqual(got, []string{"b", "conf"}) {
		t.Errorf("items volume shows %v", got)
	}
	for _, v := range []string{"opt", "optsec"} {
		if got := visible(t, vols[v].HostPath); len(got) != 0 {
			t.Errorf("optional missing %s shows %v", v, got)
		}
	}
	if !isTmpfs(t, vols["sec"].HostPath) || !isTmpfs(t, vols["optsec"].HostPath) || isTmpfs(t, vols["all"].HostPath) {
		t.Error("secret volumes must be on tmpfs, configMaps not")
	}
	checkBindMount(t, vols["sec"].HostPath, "password", "hunter2")
	checkBindMount(t, vols["items"].HostPath, "conf/a", "A")
	teardownAndCheck(t, m, pod.UID)
}

// visible lists the user-visible names of an atomic volume.
func visible(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	for _, p := range listTree(t, dir) {
		if !strings.HasPrefix(p, "..") {
			out = append(out, p)
		}
	}
	return out
}

func TestHostMissingNotOptional(t *testing.T) {
	requireRoot(t)
	m := newTestManager(t, Config{})
	cases := []struct {
		name     string
		vol      corev1.Volume
		notFound bool
		unsup    bool
	}{
		{"configmap", cmVol("v", "missing", nil, nil, nil), true, false},
		{"secret", secretVol("v", "missing", ptr.To(false)), true, false},
		{"key", cmVol("v", "cm", []corev1.KeyToPath{{Key: "nokey", Path: "x"}}, nil, nil), false, false},
		{"pvc", corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "c"}}}, false, true},
	}
	for _, tc := range cases {
		pod := testPod("uid-miss-"+tc.name, tc.vol)
		_, err := m.SetupPod(context.Background(), pod, hostSources())
		if err == nil || apierrors.IsNotFound(err) != tc.notFound || errors.Is(err, ErrUnsupported) != tc.unsup {
			t.Errorf("%s: err = %v", tc.name, err)
		}
		t.Logf("%s: %v", tc.name, err)
		teardownAndCheck(t, m, pod.UID)
	}
}

func TestHostDownwardAndProjected(t *testing.T) {
	requireRoot(t)
	m := newTestManager(t, Config{Allocatable: func() corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}
	}})
	items := []corev1.DownwardAPIVolumeFile{
		{Path: "name", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
		{Path: "labels", FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
		{Path: "mem", ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "c", Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}},
	}
	pod := testPod("uid-dw",
		corev1.Volume{Name: "dw", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: items}}},
		corev1.Volume{Name: "proj", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			DefaultMode: ptr.To[int32](0o440), Sources: []corev1.VolumeProjection{
				{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Items: []corev1.KeyToPath{{Key: "a.conf", Path: "a"}}}},
				{Secret: &corev1.SecretProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}}},
				{DownwardAPI: &corev1.DownwardAPIProjection{Items: items[:1]}},
			}}}})
	vols, err := m.SetupPod(context.Background(), pod, hostSources())
	if err != nil {
		t.Fatal(err)
	}
	dw, proj := vols["dw"].HostPath, vols["proj"].HostPath
	want := map[string]string{dw + "/name": "p-uid-dw", dw + "/labels": `app="web"`, dw + "/mem": "2048",
		proj + "/a": "A", proj + "/password": "hunter2", proj + "/name": "p-uid-dw"}
	for p, w := range want {
		if got := readFile(t, p); got != w {
			t.Errorf("%s = %q, want %q", p, got, w)
		}
	}
	if fileModeOf(t, proj+"/password") != 0o440 || !isTmpfs(t, proj) || isTmpfs(t, dw) {
		t.Error("projected: want mode 0440 on tmpfs; downwardAPI on disk")
	}
	pod.Labels["tier"] = "fe"
	must(t, m.UpdatePod(context.Background(), pod, hostSources()))
	if got := readFile(t, dw+"/labels"); got != "app=\"web\"\ntier=\"fe\"" {
		t.Errorf("labels after update = %q", got)
	}
	teardownAndCheck(t, m, pod.UID)
}

func TestHostFsGroup(t *testing.T) {
	requireRoot(t)
	m := newTestManager(t, Config{})
	pod := testPod("uid-fsg", cmVol("cfg", "cm", []corev1.KeyToPath{{Key: "a.conf", Path: "a"}}, ptr.To[int32](0o600), nil),
		corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	pod.Spec.SecurityContext = &corev1.PodSecurityContext{FSGroup: ptr.To[int64](4321)}
	vols, err := m.SetupPod(context.Background(), pod, hostSources())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{filepath.Join(vols["cfg"].HostPath, "a"), 0o640}, {vols["scratch"].HostPath, os.ModeSetgid | os.ModeDir | 0o777}} {
		st, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode()&(os.ModePerm|os.ModeSetgid|os.ModeDir) != c.mode || !sameGroup(st, ptr.To[int64](4321)) {
			t.Errorf("%s: mode %v, want %v, group 4321", c.path, st.Mode(), c.mode)
		}
	}
	// Same content again is a no-op even with fsGroup applied.
	changed, err := writeAtomic(vols["cfg"].HostPath, map[string]FileProjection{"a": {Data: []byte("A"), Mode: 0o600, FsGroup: ptr.To[int64](4321)}})
	if err != nil || changed {
		t.Errorf("rewrite same payload: changed=%v err=%v", changed, err)
	}
	teardownAndCheck(t, m, pod.UID)
}

// checkBindMount bind-mounts a volume elsewhere, as the runtime will, and
// reads a file through it: the user-visible links must be relative.
func checkBindMount(t *testing.T, src, file, want string) {
	t.Helper()
	target := t.TempDir()
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind %s: %v", src, err)
	}
	defer func() {
		if err := unix.Unmount(target, 0); err != nil {
			t.Errorf("unmount %s: %v", target, err)
		}
	}()
	if got := readFile(t, filepath.Join(target, file)); got != want {
		t.Errorf("through bind mount %s = %q, want %q", file, got, want)
	}
}

func TestHostUpdatePod(t *testing.T) {
	requireRoot(t)
	m := newTestManager(t, Config{})
	ctx := context.Background()
	src := hostSources()
	pod := testPod("uid-up2", cmVol("cfg", "cm", nil, nil, nil))
	if err := m.UpdatePod(ctx, pod, src); err != nil { // not set up: nothing to do
		t.Fatal(err)
	}
	if uids, _ := m.PodUIDs(); len(uids) != 0 {
		t.Fatalf("UpdatePod created pod dirs: %v", uids)
	}
	vols, err := m.SetupPod(ctx, pod, src)
	if err != nil {
		t.Fatal(err)
	}
	dir := vols["cfg"].HostPath
	src.PutConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cm"},
		Data: map[string]string{"a.conf": "A2", "c.conf": "C"}})
	must(t, m.UpdatePod(ctx, pod, src))
	if got := visible(t, dir); !reflect.DeepEqual(got, []string{"a.conf", "c.conf"}) || readFile(t, dir+"/a.conf") != "A2" {
		t.Fatalf("after update: %v", got)
	}
	src.DeleteConfigMap("ns", "cm") // not optional: error, last content kept
	if err := m.UpdatePod(ctx, pod, src); !apierrors.IsNotFound(err) {
		t.Fatalf("update after delete: %v", err)
	}
	if readFile(t, dir+"/c.conf") != "C" {
		t.Fatal("content lost after failed update")
	}
	teardownAndCheck(t, m, pod.UID)
}

// TestHostIsMountPoint: statx's answer and mountinfo's agree on a tmpfs,
// on a plain directory, on a directory inside the tmpfs and on /.
func TestHostIsMountPoint(t *testing.T) {
	requireRoot(t)
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := ensureTmpfs(dir, 1<<20, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unmountAll(dir) })
	inner := filepath.Join(dir, "inner")
	if err := os.Mkdir(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{dir: true, filepath.Dir(dir): false, inner: false, "/": true} {
		got, err := isMountPoint(path)
		byInfo, err2 := isMountPointByMountinfo(path)
		if err != nil || err2 != nil || got != want || byInfo != want {
			t.Errorf("%s: statx %v (%v), mountinfo %v (%v), want %v", path, got, err, byInfo, err2, want)
		}
	}
	if err := ensureTmpfs(dir, 1<<20, 0o755); err != nil { // already mounted: nothing stacked
		t.Fatal(err)
	}
	if mps, _ := mountsUnder(dir); len(mps) != 1 {
		t.Errorf("mounts under %s after a second ensureTmpfs: %v", dir, mps)
	}
}
