package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

type entry struct {
	name     string
	mode     int64
	typ      byte
	linkname string
	data     []byte
}

const (
	passwd = "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"
	// users lists nobody: the supplemental groups tests see it merged.
	group = "root:x:0:\nusers:x:100:nobody\nnogroup:x:65534:\nnobody:x:65534:\n"
	index = "<html><body><h1>hello from orch busybox</h1></body></html>\n"
)

func rootfsEntries(bin []byte) []entry {
	dir := func(n string, m int64) entry { return entry{name: n, mode: m, typ: tar.TypeDir} }
	file := func(n string, m int64, d string) entry {
		return entry{name: n, mode: m, typ: tar.TypeReg, data: []byte(d)}
	}
	es := []entry{
		dir("bin/", 0o755), dir("dev/", 0o755), dir("etc/", 0o755), dir("proc/", 0o555),
		dir("root/", 0o700), dir("sys/", 0o555), dir("tmp/", 0o1777), dir("usr/", 0o755),
		dir("usr/bin/", 0o755), dir("var/", 0o755), dir("www/", 0o755),
		{name: "bin/busybox", mode: 0o755, typ: tar.TypeReg, data: bin},
		file("etc/passwd", 0o644, passwd), file("etc/group", 0o644, group),
		file("etc/hosts", 0o644, "127.0.0.1 localhost\n"), file("etc/resolv.conf", 0o644, ""),
		file("www/index.html", 0o644, index),
	}
	apps := append([]string(nil), Applets...)
	sort.Strings(apps)
	for _, a := range apps {
		es = append(es, entry{name: "bin/" + a, mode: 0o777, typ: tar.TypeSymlink, linkname: "busybox"})
	}
	return es
}

func writeEntry(tw *tar.Writer, e entry) error {
	h := &tar.Header{Name: e.name, Mode: e.mode, Typeflag: e.typ, Linkname: e.linkname,
		Size: int64(len(e.data)), ModTime: epoch, Uname: "root", Gname: "root", Format: tar.FormatPAX}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("tar header %s: %w", e.name, err)
	}
	if len(e.data) > 0 {
		if _, err := tw.Write(e.data); err != nil {
			return fmt.Errorf("tar data %s: %w", e.name, err)
		}
	}
	return nil
}

// writeLayout writes the OCI image layout (oci-layout, index.json, blobs) as
// a tar at path via a temp file in the same directory.
func writeLayout(path string, blobs *blobSet, index []byte) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	es := []entry{
		{name: "oci-layout", mode: 0o644, typ: tar.TypeReg, data: []byte(`{"imageLayoutVersion":"1.0.0"}`)},
		{name: "index.json", mode: 0o644, typ: tar.TypeReg, data: index},
		{name: "blobs/", mode: 0o755, typ: tar.TypeDir},
		{name: "blobs/sha256/", mode: 0o755, typ: tar.TypeDir},
	}
	for _, h := range blobs.order {
		es = append(es, entry{name: "blobs/sha256/" + h, mode: 0o644, typ: tar.TypeReg, data: blobs.data[h]})
	}
	for _, e := range es {
		if err := writeEntry(tw, e); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-image-*")
	if err != nil {
		return fmt.Errorf("create image tar: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("write image tar: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
