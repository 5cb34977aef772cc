package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"time"

	openapi_v2 "github.com/google/gnostic-models/openapiv2"
	"google.golang.org/protobuf/proto"
)

// V2Additions is what resources known only at run time (custom
// resources) add to /openapi/v2: {"definitions": {...}, "paths": {...}}.
type V2Additions struct{ JSON []byte }

// V2Cache keeps the last merged v2 document (embedded document plus
// additions), so that a changed set of custom resources costs one merge
// and an unchanged one none. The zero value is ready; safe for
// concurrent use.
type V2Cache struct {
	mu        sync.Mutex
	additions string // the JSON the cached document was merged from
	json, pb  []byte // pb is made on first protobuf request
	jsonHash  string
}

// ServeV2With serves /openapi/v2 like ServeV2 with add merged in; nil
// (no custom resources) serves the embedded document.
func (s *Specs) ServeV2With(w http.ResponseWriter, r *http.Request, cache *V2Cache, add *V2Additions) error {
	if add == nil {
		return s.ServeV2(w, r)
	}
	w.Header().Add("Vary", "Accept")
	for _, c := range parseAccept(r) {
		if !typeMatches(c, "application") {
			continue
		}
		switch {
		case subtypeMatches(c, "json"):
			doc, hash, err := cache.merged(s, add, false)
			if err != nil {
				return err
			}
			return serveBytes(w, r, doc, MediaTypeJSON, hash)
		case c.SubType == mediaSubtypeV2Protobuf || c.SubType == mediaSubtypeV2ProtobufOld:
			doc, hash, err := cache.merged(s, add, true)
			if err != nil {
				return err
			}
			return serveBytes(w, r, doc, MediaTypeV2Protobuf, hash)
		}
	}
	return ErrNotAcceptable
}

// merged returns the merged document as JSON or protobuf, and its ETag.
func (c *V2Cache) merged(s *Specs, add *V2Additions, protobuf bool) ([]byte, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.json == nil || c.additions != string(add.JSON) {
		doc, err := s.mergeV2(add)
		if err != nil {
			return nil, "", err
		}
		c.additions, c.json, c.pb, c.jsonHash = string(add.JSON), doc, nil, hashOf(doc)
	}
	if !protobuf {
		return c.json, c.jsonHash, nil
	}
	if c.pb == nil {
		d, err := openapi_v2.ParseDocument(c.json)
		if err != nil {
			return nil, "", fmt.Errorf("openapi: v2 document to protobuf: %w", err)
		}
		if c.pb, err = proto.Marshal(d); err != nil {
			return nil, "", fmt.Errorf("openapi: v2 document to protobuf: %w", err)
		}
	}
	return c.pb, c.jsonHash + "-pb", nil
}

// mergeV2 adds the definitions and paths of add to the embedded document.
func (s *Specs) mergeV2(add *V2Additions) ([]byte, error) {
	raw, err := s.readGzipped("v2.json.gz")
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("openapi: v2: %w", err)
	}
	var extra map[string]map[string]json.RawMessage
	if err := json.Unmarshal(add.JSON, &extra); err != nil {
		return nil, fmt.Errorf("openapi: v2 additions: %w", err)
	}
	for _, k := range []string{"definitions", "paths"} {
		m := map[string]json.RawMessage{}
		if len(top[k]) > 0 {
			if err := json.Unmarshal(top[k], &m); err != nil {
				return nil, fmt.Errorf("openapi: v2 %s: %w", k, err)
			}
		}
		maps.Copy(m, extra[k])
		if top[k], err = json.Marshal(m); err != nil {
			return nil, fmt.Errorf("openapi: v2 %s: %w", k, err)
		}
	}
	return json.Marshal(top)
}

// serveBytes writes a document held in memory with its ETag, honouring
// If-None-Match and ranges (without copying it).
func serveBytes(w http.ResponseWriter, r *http.Request, doc []byte, contentType, etag string) error {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Etag", strconv.Quote(etag))
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(doc))
	return nil
}
