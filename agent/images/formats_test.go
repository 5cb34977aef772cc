package images

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.uber.org/zap/zaptest"
	corev1 "k8s.io/api/core/v1"
)

// readLayout returns the files of an OCI layout tar.
func readLayout(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name], _ = io.ReadAll(tr)
	}
}

// toDockerArchive rewrites an OCI layout tar as a `docker save` archive
// (manifest.json, config and layer files; no index.json).
func toDockerArchive(t *testing.T, layout, repoTag, out string) {
	t.Helper()
	files := readLayout(t, layout)
	var idx struct{ Manifests []struct{ Digest string } }
	var man struct {
		Config struct{ Digest string }
		Layers []struct{ Digest string }
	}
	blob := func(d string) []byte { return files["blobs/sha256/"+d[len("sha256:"):]] }
	if err := json.Unmarshal(files["index.json"], &idx); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(blob(idx.Manifests[0].Digest), &man); err != nil {
		t.Fatal(err)
	}
	entries := map[string][]byte{"config.json": blob(man.Config.Digest), "layer0/layer.tar": blob(man.Layers[0].Digest)}
	mj, _ := json.Marshal([]map[string]any{{"Config": "config.json", "RepoTags": []string{repoTag},
		"Layers": []string{"layer0/layer.tar"}}})
	entries["manifest.json"] = mj
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, name := range []string{"config.json", "layer0/layer.tar", "manifest.json"} {
		b := entries[name]
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write(b)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
}

func gzipFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := gzip.NewWriter(f)
	_, _ = zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestImportFormats(t *testing.T) {
	c, base := startContainerd(t)
	dir := filepath.Join(base, "images")
	src := t.TempDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	toDockerArchive(t, buildTar(t, src, "docker.io/library/fromdocker:1.0"), "fromdocker:1.0",
		filepath.Join(dir, "docker-save.tar"))
	gzipFile(t, buildTar(t, src, "docker.io/library/gzipped:1.0"), filepath.Join(dir, "gzipped.tar.gz"))
	s := New(zaptest.NewLogger(t), c, Options{Namespace: ns, StateFile: filepath.Join(base, "state.json")})
	got, err := s.ImportDir(context.Background(), dir)
	want := []string{"docker.io/library/fromdocker:1.0", "docker.io/library/gzipped:1.0"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("import: %v, %v", got, err)
	}
	for _, ref := range want {
		if _, err := s.EnsureImage(context.Background(), ref, corev1.PullNever, nil); err != nil {
			t.Errorf("%s: %v", ref, err)
		}
	}
	cleanupImages(t, s, want...)
}
