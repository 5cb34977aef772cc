package openapi

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Doc is a v3 document made at run time (a custom resource group version).
type Doc struct {
	Name string // e.g. "apis/example.com/v1"
	JSON []byte
	hash string
}

// NewDoc returns the document with its hash computed once.
func NewDoc(name string, json []byte) Doc { return Doc{Name: name, JSON: json, hash: hashOf(json)} }

// Hash is the document's hash, for its URL and ETag.
func (d Doc) Hash() string {
	if d.hash != "" {
		return d.hash
	}
	return hashOf(d.JSON)
}

// ServeV3Paths serves /openapi/v3 from its content (V3Paths).
func ServeV3Paths(w http.ResponseWriter, r *http.Request, paths map[string]string) error {
	type ref struct {
		ServerRelativeURL string `json:"serverRelativeURL"`
	}
	out := struct {
		Paths map[string]ref `json:"paths"`
	}{Paths: make(map[string]ref, len(paths))}
	for name, u := range paths {
		out.Paths[name] = ref{ServerRelativeURL: u}
	}
	return writeJSONDoc(w, r, out)
}

// V3Paths is the content of /openapi/v3: the server-relative URL (with its
// hash) of every embedded document keep accepts and of docs, by name.
func (s *Specs) V3Paths(keep func(name string) bool, docs []Doc) (map[string]string, error) {
	idx, err := s.Index()
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(idx.V3)+len(docs))
	for name, e := range idx.V3 {
		if keep == nil || keep(name) {
			out[name] = V3URL(name, e.Hash)
		}
	}
	for _, d := range docs {
		out[d.Name] = V3URL(d.Name, d.Hash())
	}
	return out, nil
}

// ServeDoc serves a run-time v3 document.
func ServeDoc(w http.ResponseWriter, r *http.Request, d Doc) error {
	h := d.Hash()
	if q := r.URL.Query().Get("hash"); q != "" && q != h {
		http.Redirect(w, r, V3URL(d.Name, h), http.StatusMovedPermanently)
		return nil
	}
	return serveBytes(w, r, d.JSON, MediaTypeJSON, h)
}

func writeJSONDoc(w http.ResponseWriter, r *http.Request, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return serveBytes(w, r, b, MediaTypeJSON, hashOf(b))
}

// Components returns named component schemas of an embedded v3 document
// (e.g. ObjectMeta and what it refers to, for custom resource documents).
func (s *Specs) Components(doc string, names ...string) (map[string]json.RawMessage, error) {
	b, err := s.readGzipped("v3/" + strings.ReplaceAll(doc, "/", "__") + ".json.gz")
	if err != nil {
		return nil, err
	}
	var d struct {
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", doc, err)
	}
	out := make(map[string]json.RawMessage, len(names))
	for _, n := range names {
		if s, ok := d.Components.Schemas[n]; ok {
			out[n] = s
		}
	}
	return out, nil
}

// V2Definitions returns the embedded OpenAPI v2 definitions (the schemas
// of the built-in types, keyed by their definition names).
func (s *Specs) V2Definitions() (map[string]*spec.Schema, error) {
	f, err := s.fsys.Open("v2.json.gz")
	if err != nil {
		return nil, fmt.Errorf("openapi: v2: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("openapi: v2: %w", err)
	}
	var d struct {
		Definitions map[string]*spec.Schema `json:"definitions"`
	}
	if err := json.NewDecoder(zr).Decode(&d); err != nil {
		return nil, fmt.Errorf("openapi: v2: %w", err)
	}
	return d.Definitions, nil
}

// readGzipped returns an embedded document, decompressed.
func (s *Specs) readGzipped(file string) ([]byte, error) {
	f, err := s.fsys.Open(file)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", file, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", file, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", file, err)
	}
	return b, nil
}
