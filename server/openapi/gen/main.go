// Command gen filters the upstream Kubernetes OpenAPI specs to the resources
// orch serves and writes them, gzipped, into server/openapi/data: v2.json.gz,
// v2.pb.gz (the protobuf form kubectl asks for), v3/<path>.json.gz and
// index.json with the SHA-512 of every uncompressed document.
// Run it through scripts/gen-openapi.sh.
package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"

	"github.com/orch/orch/server/openapi"
	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/registry/all"
)

func main() {
	specDir := flag.String("spec", "", "upstream api/openapi-spec directory")
	outDir := flag.String("out", "server/openapi/data", "output directory")
	flag.Parse()
	if *specDir == "" {
		fmt.Fprintln(os.Stderr, "gen: -spec is required")
		os.Exit(2)
	}
	if err := run(*specDir, *outDir); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(specDir, outDir string) error {
	s := newServed(all.Resources(registry.Config{}), openapi.ExtraSubresources())
	// Remove what an earlier run wrote (keep README.md).
	for _, old := range []string{"v3", "v2.json.gz", "v2.pb.gz", "index.json"} {
		if err := os.RemoveAll(filepath.Join(outDir, old)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(outDir, "v3"), 0o755); err != nil {
		return err
	}
	idx := openapi.Index{V3: map[string]openapi.Entry{}}
	var err error
	if idx.V2, err = genV2(s, filepath.Join(specDir, "swagger.json"), outDir); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(specDir, "v3", "*_openapi.json"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), "_openapi.json")
		name := strings.ReplaceAll(base, "__", "/")
		if !s.keepV3(name) {
			continue
		}
		doc, err := readDoc(f)
		if err != nil {
			return err
		}
		prune(doc, s.keepPath)
		e, err := writeDoc(doc, filepath.Join(outDir, "v3", base+".json.gz"))
		if err != nil {
			return err
		}
		idx.V3[name] = e
	}
	b, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(outDir, "index.json"), append(b, '\n'), 0o644)
}

func genV2(s *served, file, outDir string) (openapi.Entry, error) {
	doc, err := readDoc(file)
	if err != nil {
		return openapi.Entry{}, err
	}
	prune(doc, s.keepPath)
	e, err := writeDoc(doc, filepath.Join(outDir, "v2.json.gz"))
	if err != nil {
		return e, err
	}
	raw, err := encode(doc)
	if err != nil {
		return e, err
	}
	pdoc, err := openapi_v2.ParseDocument(raw)
	if err != nil {
		return e, fmt.Errorf("parse filtered v2 for protobuf: %w", err)
	}
	pb, err := proto.Marshal(pdoc)
	if err != nil {
		return e, fmt.Errorf("marshal v2 protobuf: %w", err)
	}
	e.ProtoSize = int64(len(pb))
	return e, writeGzip(filepath.Join(outDir, "v2.pb.gz"), pb)
}

func readDoc(file string) (map[string]any, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return doc, nil
}

func encode(doc map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func writeDoc(doc map[string]any, file string) (openapi.Entry, error) {
	b, err := encode(doc)
	if err != nil {
		return openapi.Entry{}, fmt.Errorf("%s: %w", file, err)
	}
	e := openapi.Entry{Hash: fmt.Sprintf("%X", sha512.Sum512(b)), Size: int64(len(b))}
	return e, writeGzip(file, b)
}

func writeGzip(file string, b []byte) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(b); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(file, buf.Bytes(), 0o644)
}
