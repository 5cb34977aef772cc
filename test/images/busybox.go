package images

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// BusyboxPath is where Debian's busybox-static installs its binary.
const BusyboxPath = "/bin/busybox"

// Applets get a symlink to /bin/busybox in the image.
var Applets = []string{
	"sh", "ash", "httpd", "nc", "sleep", "cat", "echo", "ls", "wget", "ping", "id",
	"hostname", "env", "true", "false", "test", "[", "ps", "kill", "grep", "head",
	"tail", "mkdir", "rm", "touch", "date", "printf", "wc", "sed", "awk", "nslookup",
	"ip", "ifconfig", "mount", "df", "du", "uname", "whoami", "yes", "dd", "seq", "tee",
	"cp", "mv", "chmod", "stat", "top", "pwd", "sync", "timeout", "xargs", "tr", "sort",
}

// epoch is the fixed timestamp of every file and of the image config, so the
// image digest depends only on the busybox binary and the references.
var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// TB is the part of testing.TB BuildBusybox uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

// BuildBusybox writes <dir>/<file-safe ref>.tar, an OCI image layout tar of a
// busybox image named refs[0] (and any further refs), and returns its path.
// It skips the test when /bin/busybox is missing.
func BuildBusybox(t TB, dir string, refs ...string) string {
	t.Helper()
	if _, err := os.Stat(BusyboxPath); err != nil {
		t.Skipf("skipping: %s missing (apt-get install busybox-static)", BusyboxPath)
	}
	if len(refs) == 0 {
		t.Fatalf("BuildBusybox: no image reference given")
	}
	path := filepath.Join(dir, fileName(refs[0])+".tar")
	if err := WriteBusyboxImage(path, BusyboxPath, refs...); err != nil {
		t.Fatalf("build busybox image: %v", err)
	}
	return path
}

func fileName(ref string) string {
	b := []byte(ref)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// WriteBusyboxImage writes the OCI layout tar to path (atomically: a temp
// file renamed into place, so a directory watcher sees a complete file).
func WriteBusyboxImage(path, busybox string, refs ...string) error {
	bin, err := os.ReadFile(busybox)
	if err != nil {
		return fmt.Errorf("read busybox: %w", err)
	}
	layer, diffID, err := layerOf(rootfsEntries(bin))
	if err != nil {
		return err
	}
	return writeSingleLayer(path, layer, diffID, imageConfig(diffID)["config"].(map[string]any), refs)
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int               `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    map[string]string `json:"platform,omitempty"`
}

type blobSet struct {
	order []string
	data  map[string][]byte
}

func newBlobs() *blobSet { return &blobSet{data: map[string][]byte{}} }

func (b *blobSet) add(mediaType string, data []byte) descriptor {
	sum := sha256.Sum256(data)
	hexd := hex.EncodeToString(sum[:])
	if _, ok := b.data[hexd]; !ok {
		b.order = append(b.order, hexd)
		b.data[hexd] = data
	}
	return descriptor{MediaType: mediaType, Digest: "sha256:" + hexd, Size: len(data)}
}

func imageConfig(diffID string) map[string]any {
	return map[string]any{
		"created":      epoch.Format(time.RFC3339),
		"architecture": runtime.GOARCH,
		"os":           "linux",
		"config": map[string]any{
			"Env":        []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			"Cmd":        []string{"sh"},
			"WorkingDir": "/",
		},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}},
		"history": []map[string]any{{"created": epoch.Format(time.RFC3339),
			"created_by": "orch test/images busybox"}},
	}
}

func ociIndex(m descriptor, refs []string) map[string]any {
	var ms []descriptor
	for _, ref := range refs {
		d := m
		d.Annotations = map[string]string{
			"io.containerd.image.name":          ref,
			"org.opencontainers.image.ref.name": ref,
		}
		d.Platform = map[string]string{"architecture": runtime.GOARCH, "os": "linux"}
		ms = append(ms, d)
	}
	return map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": ms}
}
