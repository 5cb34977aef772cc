package images

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/klauspost/compress/zstd"
	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
)

func zstdBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	zw, err := zstd.NewWriter(&out)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func zstdFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, zstdBytes(t, b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// emptyLayoutTar is what scripts/release.sh puts in an air-gap bundle when
// orch needs no image: an OCI layout with an empty index.
func emptyLayoutTar(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []string{"blobs/", "blobs/sha256/"} {
		_ = tw.WriteHeader(&tar.Header{Name: d, Mode: 0o755, Typeflag: tar.TypeDir})
	}
	for name, body := range map[string]string{
		"oci-layout": `{"imageLayoutVersion":"1.0.0"}`,
		"index.json": `{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[]}`,
	} {
		_ = tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg})
		_, _ = tw.Write([]byte(body))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecompress(t *testing.T) {
	plain := []byte("a tar stream, as far as decompress cares")
	var gz bytes.Buffer
	gzipWriteTo(t, &gz, plain)
	for name, in := range map[string][]byte{"plain": plain, "gzip": gz.Bytes(), "zstd": zstdBytes(t, plain)} {
		r, closeR, err := decompress(bufio.NewReader(bytes.NewReader(in)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got, err := io.ReadAll(r)
		closeR()
		if err != nil || !bytes.Equal(got, plain) {
			t.Errorf("%s: read %q, %v; want %q", name, got, err, plain)
		}
	}
	if _, _, err := decompress(bufio.NewReader(bytes.NewReader([]byte{0x1f, 0x8b, 0, 0}))); err == nil {
		t.Error("a truncated gzip header: no error")
	}
	if !isImageTarball("orch-airgap-images-arm64.tar.zst") {
		t.Error("*.tar.zst is not taken for an image tarball")
	}
}

// TestImportZstd imports a zstd-compressed image and an air-gap bundle of
// the release that holds no image.
func TestImportZstd(t *testing.T) {
	c, base := startContainerd(t)
	dir := filepath.Join(base, "images")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	zstdFile(t, buildTar(t, t.TempDir(), "docker.io/library/zstded:1.0"), filepath.Join(dir, "zstded.tar.zst"))
	if err := os.WriteFile(filepath.Join(dir, "orch-airgap-images-amd64.tar.zst"), zstdBytes(t, emptyLayoutTar(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	s := New(zaptest.NewLogger(t), c, Options{Namespace: ns, StateFile: filepath.Join(base, "state.json")})
	got, err := s.ImportDir(context.Background(), dir)
	want := []string{"docker.io/library/zstded:1.0"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("import: %v, %v; want %v and no error", got, err, want)
	}
	if _, err := s.EnsureImage(context.Background(), want[0], corev1.PullNever, nil); err != nil {
		t.Error(err)
	}
	cleanupImages(t, s, want...)
}

func gzipWriteTo(t *testing.T, w io.Writer, b []byte) {
	t.Helper()
	zw := gzip.NewWriter(w)
	_, _ = zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestIsEmptyLayout(t *testing.T) {
	dir := t.TempDir()
	empty := emptyLayoutTar(t)
	oneImage := bytes.Replace(empty, []byte(`"manifests":[]`), []byte(`"manifests":[{}]`), 1)
	for name, tc := range map[string]struct {
		body []byte
		want bool
	}{
		"empty.tar":         {empty, true},
		"empty.tar.zst":     {zstdBytes(t, empty), true},
		"one-image.tar":     {oneImage, false},
		"not-a-tar.tar":     {[]byte("garbage"), false},
		"truncated.tar.zst": {zstdBytes(t, empty)[:20], false},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, tc.body, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := isEmptyLayout(p); got != tc.want {
			t.Errorf("isEmptyLayout(%s) = %v, want %v", name, got, tc.want)
		}
	}
}
