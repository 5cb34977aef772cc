package images

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestBuildBusyboxDeterministicLayout(t *testing.T) {
	a := BuildBusybox(t, t.TempDir(), "docker.io/library/busybox:1.36")
	b := BuildBusybox(t, t.TempDir(), "docker.io/library/busybox:1.36")
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if !bytes.Equal(da, db) {
		t.Fatal("two builds differ")
	}
	if filepath.Base(a) != "docker.io_library_busybox_1.36.tar" {
		t.Errorf("file name %s", a)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(da))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name], _ = io.ReadAll(tr)
	}
	if string(files["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout = %q", files["oci-layout"])
	}
	var idx struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &idx); err != nil {
		t.Fatal(err)
	}
	if len(idx.Manifests) != 1 || idx.Manifests[0].Annotations["io.containerd.image.name"] != "docker.io/library/busybox:1.36" {
		t.Fatalf("index: %s", files["index.json"])
	}
	d := idx.Manifests[0].Digest
	if _, ok := files["blobs/sha256/"+d[len("sha256:"):]]; !ok {
		t.Errorf("manifest blob %s missing", d)
	}
}
