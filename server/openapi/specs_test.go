package openapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
)

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEmbeddedData checks the generated files against the index.
func TestEmbeddedData(t *testing.T) {
	s := New()
	idx, err := s.Index()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"api", "apis", "version", "api/v1", "apis/apps/v1", "apis/batch/v1"} {
		if _, ok := idx.V3[want]; !ok {
			t.Errorf("index has no v3 document %q", want)
		}
	}
	check := func(file string, e Entry) []byte {
		gz, err := fs.ReadFile(s.fsys, file)
		if err != nil {
			t.Fatal(err)
		}
		raw := gunzip(t, gz)
		if got := fmt.Sprintf("%X", sha512.Sum512(raw)); got != e.Hash || int64(len(raw)) != e.Size {
			t.Errorf("%s: hash/size do not match the index", file)
		}
		return raw
	}
	for name, e := range idx.V3 {
		check("v3/"+strings.ReplaceAll(name, "/", "__")+".json.gz", e)
	}
	check("v2.json.gz", idx.V2)
	pb := gunzip(t, mustRead(t, s.fsys, "v2.pb.gz"))
	var doc openapi_v2.Document
	if err := proto.Unmarshal(pb, &doc); err != nil {
		t.Fatalf("v2 protobuf: %v", err)
	}
	if doc.Paths == nil || len(doc.Paths.Path) == 0 || doc.Definitions == nil {
		t.Fatal("v2 protobuf has no paths or definitions")
	}
}

func mustRead(t *testing.T, fsys fs.FS, name string) []byte {
	t.Helper()
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestV3FieldValidation checks what kubectl relies on: the fieldValidation
// parameter of creates, and the schema kubectl explain reads.
func TestV3FieldValidation(t *testing.T) {
	s := New()
	idx, _ := s.Index()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, V3URL("api/v1", idx.V3["api/v1"].Hash), nil)
	if err := s.ServeV3(rec, req, "api/v1"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]struct {
			Post *struct {
				Parameters []struct{ Name string } `json:"parameters"`
			} `json:"post"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]json.RawMessage `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	post := doc.Paths["/api/v1/namespaces/{namespace}/pods"].Post
	if post == nil {
		t.Fatal("no POST pods path")
	}
	found := false
	for _, p := range post.Parameters {
		found = found || p.Name == "fieldValidation"
	}
	if !found {
		t.Error("POST pods has no fieldValidation parameter")
	}
	for _, want := range []string{"io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.PodSpec", "io.k8s.api.policy.v1.Eviction"} {
		if doc.Components.Schemas[want] == nil {
			t.Errorf("schema %s missing", want)
		}
	}
	if _, ok := doc.Paths["/api/v1/componentstatuses"]; ok {
		t.Error("componentstatuses is not served but kept")
	}
	if rec.Header().Get("Cache-Control") != "public, immutable" || rec.Header().Get("Expires") == "" {
		t.Errorf("hashed URL without cache headers: %v", rec.Header())
	}
}

func TestServeV2Negotiation(t *testing.T) {
	s := New()
	tests := []struct {
		accept, encoding, wantType string
		wantErr                    error
	}{
		{"", "", MediaTypeJSON, nil},
		{"application/json", "gzip", MediaTypeJSON, nil},
		{"application/com.github.proto-openapi.spec.v2@v1.0+protobuf", "gzip", MediaTypeV2Protobuf, nil},
		{"application/com.github.proto-openapi.spec.v2.v1.0+protobuf, application/json", "", MediaTypeV2Protobuf, nil},
		{"text/html", "", "", ErrNotAcceptable},
	}
	for _, tt := range tests {
		t.Run(tt.accept, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, "/openapi/v2", nil)
			req.Header.Set("Accept", tt.accept)
			req.Header.Set("Accept-Encoding", tt.encoding)
			err := s.ServeV2(rec, req)
			if err != tt.wantErr {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got := rec.Header().Get("Content-Type"); got != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", got, tt.wantType)
			}
			body := rec.Body.Bytes()
			if tt.encoding == "gzip" {
				if rec.Header().Get("Content-Encoding") != "gzip" {
					t.Fatal("gzip accepted but not used")
				}
				body = gunzip(t, body)
			}
			if tt.wantType == MediaTypeJSON && !json.Valid(body) {
				t.Error("body is not JSON")
			}
			if tt.wantType == MediaTypeV2Protobuf {
				var doc openapi_v2.Document
				if err := proto.Unmarshal(body, &doc); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

func TestServeV3HashAndETag(t *testing.T) {
	s := New()
	idx, _ := s.Index()
	hash := idx.V3["apis/apps/v1"].Hash

	rec := httptest.NewRecorder()
	if err := s.ServeV3(rec, httptest.NewRequest(http.MethodGet, "/openapi/v3/apis/apps/v1?hash=OLD", nil), "apis/apps/v1"); err != nil {
		t.Fatal(err)
	}
	if rec.Code != http.StatusMovedPermanently || rec.Header().Get("Location") != V3URL("apis/apps/v1", hash) {
		t.Errorf("stale hash: code %d location %q", rec.Code, rec.Header().Get("Location"))
	}

	rec = httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/openapi/v3/apis/apps/v1", nil)
	req.Header.Set("If-None-Match", `"`+hash+`"`)
	if err := s.ServeV3(rec, req, "apis/apps/v1"); err != nil || rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match: code %d err %v", rec.Code, err)
	}

	if err := s.ServeV3(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil), "apis/nope/v1"); err != ErrNotFound {
		t.Errorf("unknown document: err %v", err)
	}
}

func TestServeV3Index(t *testing.T) {
	s := New()
	rec := httptest.NewRecorder()
	keep := func(name string) bool { return name != "apis/batch/v1" }
	if err := s.ServeV3Index(rec, httptest.NewRequest(http.MethodGet, "/openapi/v3", nil), keep); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	idx, _ := s.Index()
	if got, want := out.Paths["api/v1"].ServerRelativeURL, "/openapi/v3/api/v1?hash="+idx.V3["api/v1"].Hash; got != want {
		t.Errorf("api/v1 URL = %q, want %q", got, want)
	}
	if _, ok := out.Paths["apis/batch/v1"]; ok {
		t.Error("filtered document listed")
	}
}

func TestAcceptsGzip(t *testing.T) {
	for h, want := range map[string]bool{
		"": false, "gzip": true, "deflate, gzip;q=1.0": true, "gzip;q=0": false, "*": true, "br": false,
	} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Accept-Encoding", h)
		if got := acceptsGzip(r); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
}
