package openapi

import (
	"compress/gzip"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/munnerz/goautoneg"
)

// embedded holds the generated documents (read-only data, not state).
//
//go:embed data
var embedded embed.FS

// Sentinel errors of the handlers; the API server turns them into a metav1.Status.
var (
	// ErrNotFound is returned for a document that is not served.
	ErrNotFound = errors.New("openapi: document not found")
	// ErrNotAcceptable is returned when no served media type matches the Accept header.
	ErrNotAcceptable = errors.New("openapi: no acceptable media type")
)

// Media types of the OpenAPI documents, as kube-openapi names them.
const (
	MediaTypeJSON             = "application/json"
	MediaTypeV2Protobuf       = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
	mediaSubtypeV2Protobuf    = "com.github.proto-openapi.spec.v2.v1.0+protobuf"
	mediaSubtypeV2ProtobufOld = "com.github.proto-openapi.spec.v2@v1.0+protobuf"
)

// Index is data/index.json: the SHA-512 (upper-case hex, as kube-openapi's
// ETag) and size of every uncompressed document.
type Index struct {
	V2 Entry            `json:"v2"`
	V3 map[string]Entry `json:"v3"` // by discovery path, e.g. "apis/apps/v1"
}

// Entry describes one generated document.
type Entry struct {
	Hash      string `json:"hash"`
	Size      int64  `json:"size"`
	ProtoSize int64  `json:"protoSize,omitempty"`
}

// Specs serves the documents of one file system laid out as data/.
// Only the small index is decoded, on first use.
type Specs struct {
	fsys   fs.FS
	once   sync.Once
	idx    Index
	idxErr error
}

// New returns the Specs embedded in the binary.
func New() *Specs {
	sub, err := fs.Sub(embedded, "data")
	if err != nil {
		panic(fmt.Sprintf("openapi: embedded data: %v", err)) // cannot happen: the directory is embedded
	}
	return NewFS(sub)
}

// NewFS returns Specs reading from fsys (tests use fstest.MapFS).
func NewFS(fsys fs.FS) *Specs { return &Specs{fsys: fsys} }

// Index returns the decoded index.
func (s *Specs) Index() (Index, error) {
	s.once.Do(func() {
		b, err := fs.ReadFile(s.fsys, "index.json")
		if err != nil {
			s.idxErr = fmt.Errorf("openapi: read index: %w", err)
			return
		}
		if err := json.Unmarshal(b, &s.idx); err != nil {
			s.idxErr = fmt.Errorf("openapi: decode index: %w", err)
		}
	})
	return s.idx, s.idxErr
}

// V3URL is the server-relative URL of a v3 document, with its hash.
func V3URL(name, hash string) string {
	u := url.URL{Path: path.Join("/openapi/v3", name), RawQuery: url.Values{"hash": {hash}}.Encode()}
	return u.String()
}

// ServeV2 serves /openapi/v2 as JSON or protobuf, by the Accept header.
func (s *Specs) ServeV2(w http.ResponseWriter, r *http.Request) error {
	idx, err := s.Index()
	if err != nil {
		return err
	}
	w.Header().Add("Vary", "Accept")
	for _, c := range parseAccept(r) {
		if !typeMatches(c, "application") {
			continue
		}
		switch {
		case subtypeMatches(c, "json"):
			return s.serveFile(w, r, "v2.json.gz", MediaTypeJSON, idx.V2.Hash, idx.V2.Size)
		case c.SubType == mediaSubtypeV2Protobuf || c.SubType == mediaSubtypeV2ProtobufOld:
			return s.serveFile(w, r, "v2.pb.gz", MediaTypeV2Protobuf, idx.V2.Hash, idx.V2.ProtoSize)
		}
	}
	return ErrNotAcceptable
}

// ServeV3Index serves /openapi/v3: the served documents (those keep accepts)
// with their hashed URLs.
func (s *Specs) ServeV3Index(w http.ResponseWriter, r *http.Request, keep func(name string) bool) error {
	paths, err := s.V3Paths(keep, nil)
	if err != nil {
		return err
	}
	return ServeV3Paths(w, r, paths)
}

// ServeV3 serves /openapi/v3/<name> as JSON. With ?hash= equal to the
// current hash the answer may be cached forever; a stale hash redirects.
func (s *Specs) ServeV3(w http.ResponseWriter, r *http.Request, name string) error {
	idx, err := s.Index()
	if err != nil {
		return err
	}
	e, ok := idx.V3[name]
	if !ok {
		return ErrNotFound
	}
	w.Header().Add("Vary", "Accept")
	for _, c := range parseAccept(r) {
		if !typeMatches(c, "application") || !subtypeMatches(c, "json") {
			continue
		}
		if h := r.URL.Query().Get("hash"); h != "" {
			if h != e.Hash {
				http.Redirect(w, r, V3URL(name, e.Hash), http.StatusMovedPermanently)
				return nil
			}
			w.Header().Set("Cache-Control", "public, immutable")
			w.Header().Set("Expires", time.Now().AddDate(1, 0, 0).UTC().Format(http.TimeFormat))
		}
		file := "v3/" + strings.ReplaceAll(name, "/", "__") + ".json.gz"
		return s.serveFile(w, r, file, MediaTypeJSON, e.Hash, e.Size)
	}
	return ErrNotAcceptable
}

// serveFile writes a gzipped file: as it is with Content-Encoding gzip when
// the client accepts gzip, decompressed on the fly otherwise.
func (s *Specs) serveFile(w http.ResponseWriter, r *http.Request, file, contentType, etag string, size int64) error {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Etag", strconv.Quote(etag))
	h.Add("Vary", "Accept-Encoding")
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	f, err := s.fsys.Open(file)
	if err != nil {
		return fmt.Errorf("openapi: %s: %w", file, err)
	}
	defer f.Close()
	gz := acceptsGzip(r)
	if gz {
		st, err := f.Stat()
		if err != nil {
			return fmt.Errorf("openapi: %s: %w", file, err)
		}
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.FormatInt(st.Size(), 10))
	} else if size > 0 {
		h.Set("Content-Length", strconv.FormatInt(size, 10))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	// The status line is out: from here on errors can only cut the body short.
	if gz {
		_, _ = io.Copy(w, f)
		return nil
	}
	if zr, err := gzip.NewReader(f); err == nil {
		_, _ = io.Copy(w, zr)
	}
	return nil
}

func parseAccept(r *http.Request) []goautoneg.Accept {
	a := r.Header.Get("Accept")
	if a == "" {
		a = "*/*"
	}
	return goautoneg.ParseAccept(a)
}

func typeMatches(c goautoneg.Accept, t string) bool { return c.Type == t || c.Type == "*" }

func subtypeMatches(c goautoneg.Accept, st string) bool { return c.SubType == st || c.SubType == "*" }

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		fields := strings.Split(part, ";")
		enc := strings.TrimSpace(fields[0])
		if enc != "gzip" && enc != "*" {
			continue
		}
		for _, p := range fields[1:] {
			if q := strings.TrimSpace(p); q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
				return false
			}
		}
		return true
	}
	return false
}

func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == strconv.Quote(etag) {
			return true
		}
	}
	return false
}
