package apiserver

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// serveDiscovery answers /api, /api/v1, /apis, /apis/<group> and
// /apis/<group>/<version>, as kube-apiserver does.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request) error {
	segs := splitPath(r.URL.Path)
	res := s.allResources()
	aggregated := wantsAggregated(r.Header.Get("Accept"))
	switch {
	case len(segs) == 1 && segs[0] == "api" && aggregated:
		return writeDiscovery(w, r, aggregatedMediaType, aggregatedList(res, true))
	case len(segs) == 1 && segs[0] == "api":
		return writeDiscovery(w, r, "application/json", &metav1.APIVersions{
			TypeMeta: metav1.TypeMeta{Kind: "APIVersions"},
			Versions: []string{"v1"}, ServerAddressByClientCIDRs: s.serverAddresses(),
		})
	case len(segs) == 1 && aggregated:
		list := aggregatedList(res, false)
		s.aggregatedDiscovery(r, list)
		return writeDiscovery(w, r, aggregatedMediaType, list)
	case len(segs) == 1:
		return writeDiscovery(w, r, "application/json", &metav1.APIGroupList{
			TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}, Groups: append(servedGroups(res), s.aggregatedGroups(r.Context())...),
		})
	case len(segs) == 2 && segs[0] == "api":
		return s.writeResourceList(w, r, schema.GroupVersion{Version: segs[1]})
	case len(segs) == 2:
		g, ok := findGroup(res, segs[1])
		if !ok {
			g, ok = s.aggregatedGroup(r.Context(), segs[1])
		}
		if !ok {
			return notFoundPath()
		}
		g.TypeMeta = metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"}
		return writeDiscovery(w, r, "application/json", &g)
	case len(segs) == 3 && segs[0] == "apis":
		return s.writeResourceList(w, r, schema.GroupVersion{Group: segs[1], Version: segs[2]})
	}
	return notFoundPath()
}

func (s *Server) writeResourceList(w http.ResponseWriter, r *http.Request, gv schema.GroupVersion) error {
	list := apiResources(s.allResources(), gv)
	if len(list) == 0 {
		return notFoundPath()
	}
	tm := metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}
	if gv.Group == "" {
		tm.APIVersion = "" // upstream's /api/v1 carries no apiVersion
	}
	return writeDiscovery(w, r, "application/json", &metav1.APIResourceList{
		TypeMeta: tm, GroupVersion: gv.String(), APIResources: list,
	})
}

// writeDiscovery writes v as JSON with an ETag, answering 304 to a matching If-None-Match.
func writeDiscovery(w http.ResponseWriter, r *http.Request, contentType string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode discovery: %w", err)
	}
	sum := sha256.Sum256(b)
	etag := strconv.Quote(hex.EncodeToString(sum[:]))
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Add("Vary", "Accept")
	h.Set("Etag", etag)
	if inm := r.Header.Get("If-None-Match"); inm != "" && strings.Contains(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
	return nil
}
