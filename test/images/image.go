package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// File is one file of an image built by WriteImage.
type File struct {
	Name string // path in the image, without a leading slash
	Mode int64
	Data []byte
}

// Config is the part of an OCI image config WriteImage sets.
type Config struct {
	Entrypoint []string
	Cmd        []string
	Env        []string
	WorkingDir string
	User       string
}

// WriteImage writes an OCI layout tar at path: one layer holding files
// (their directories are made), the config, and an index naming refs.
func WriteImage(path string, files []File, cfg Config, refs ...string) error {
	var es []entry
	dirs := map[string]bool{}
	for _, f := range files {
		for d := dirOf(f.Name); d != ""; d = dirOf(d) {
			if !dirs[d] {
				dirs[d] = true
				es = append([]entry{{name: d + "/", mode: 0o755, typ: tar.TypeDir}}, es...)
			}
		}
	}
	for _, f := range files {
		es = append(es, entry{name: f.Name, mode: f.Mode, typ: tar.TypeReg, data: f.Data})
	}
	layer, diffID, err := layerOf(es)
	if err != nil {
		return err
	}
	return writeSingleLayer(path, layer, diffID, runConfig(cfg), refs)
}

func dirOf(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[:i]
		}
	}
	return ""
}

func runConfig(c Config) map[string]any {
	env := c.Env
	if len(env) == 0 {
		env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	}
	m := map[string]any{"Env": env, "WorkingDir": c.WorkingDir}
	if c.WorkingDir == "" {
		m["WorkingDir"] = "/"
	}
	if len(c.Entrypoint) > 0 {
		m["Entrypoint"] = c.Entrypoint
	}
	if len(c.Cmd) > 0 {
		m["Cmd"] = c.Cmd
	}
	if c.User != "" {
		m["User"] = c.User
	}
	return m
}

// layerOf returns the gzipped layer tar of es and its diff ID.
func layerOf(es []entry) ([]byte, string, error) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, e := range es {
		if err := writeEntry(tw, e); err != nil {
			return nil, "", err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(raw.Bytes())
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	if err != nil {
		return nil, "", err
	}
	zw.ModTime = epoch
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, "", err
	}
	return gz.Bytes(), "sha256:" + hex.EncodeToString(sum[:]), nil
}

// writeSingleLayer writes the layout of a one-layer image.
func writeSingleLayer(path string, layer []byte, diffID string, run map[string]any, refs []string) error {
	blobs := newBlobs()
	layerDesc := blobs.add("application/vnd.oci.image.layer.v1.tar+gzip", layer)
	cfg := imageConfig(diffID)
	cfg["config"] = run
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	cfgDesc := blobs.add("application/vnd.oci.image.config.v1+json", cfgJSON)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        cfgDesc,
		"layers":        []descriptor{layerDesc},
	})
	if err != nil {
		return err
	}
	mDesc := blobs.add("application/vnd.oci.image.manifest.v1+json", manifest)
	index, err := json.Marshal(ociIndex(mDesc, refs))
	if err != nil {
		return err
	}
	return writeLayout(path, blobs, index)
}
