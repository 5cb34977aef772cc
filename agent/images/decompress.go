package images

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	pathpkg "path"

	"github.com/klauspost/compress/zstd"
)

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// decompress returns the tar stream of an image tarball that may be
// gzip- or zstd-compressed (told by its magic bytes, not its name: the
// release's air-gap bundles are orch-airgap-images-<arch>.tar.zst), and a
// func that releases the decoder.
func decompress(br *bufio.Reader) (io.Reader, func(), error) {
	magic, _ := br.Peek(len(zstdMagic))
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, func() { _ = zr.Close() }, nil
	case bytes.HasPrefix(magic, zstdMagic):
		// One goroutine and low memory: the agent runs on small boards.
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		if err != nil {
			return nil, nil, fmt.Errorf("zstd: %w", err)
		}
		return zr, zr.Close, nil
	}
	return br, func() {}, nil
}

// isEmptyLayout says whether the tarball at path is an OCI layout whose
// index lists no manifest: what a release's air-gap bundle holds while
// orch's default set-up needs no image. containerd refuses to import it
// (images.ErrEmptyWalk, as for a tarball whose images are all for other
// platforms); ImportFile takes it for "no images" instead.
func isEmptyLayout(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	r, closeR, err := decompress(bufio.NewReader(f))
	if err != nil {
		return false
	}
	defer closeR()
	tr := tar.NewReader(r)
	empty := false
	for {
		h, err := tr.Next()
		if err != nil {
			return err == io.EOF && empty
		}
		switch pathpkg.Clean(h.Name) {
		case "manifest.json":
			return false // a docker archive
		case "index.json":
			var idx struct {
				Manifests []json.RawMessage `json:"manifests"`
			}
			if json.NewDecoder(io.LimitReader(tr, 1<<20)).Decode(&idx) != nil || len(idx.Manifests) != 0 {
				return false
			}
			empty = true
		}
	}
}
