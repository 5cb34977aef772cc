package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry"
)

// writeError answers with the metav1.Status of err. Errors that are not API
// status errors become 500s (or 503 when this server cannot write). A 503,
// or a Status asking for it, carries Retry-After (client-go then retries);
// a 429 without it (a disruption budget refusing an eviction) is final.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	st := s.toStatus(err)
	switch {
	case st.Details != nil && st.Details.RetryAfterSeconds > 0:
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	case st.Code == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "1")
	}
	s.writeJSON(w, r, int(st.Code), st)
}

func (s *Server) toStatus(err error) *metav1.Status {
	var apiStatus apierrors.APIStatus
	var st metav1.Status
	switch {
	case errors.As(err, &apiStatus):
		st = apiStatus.Status()
	case errors.Is(err, datastore.ErrNotLeader):
		st = apierrors.NewServiceUnavailable("the datastore has no leader or this server is not the leader; try again").ErrStatus
	case errors.Is(err, datastore.ErrLeaderChanged):
		st = apierrors.NewTimeoutError("the datastore leader changed while the request was in flight; it may or may not have been applied", 1).ErrStatus
	case errors.Is(err, context.DeadlineExceeded):
		st = apierrors.NewTimeoutError("request did not complete within the allowed duration", 1).ErrStatus
	case errors.Is(err, datastore.ErrClosed):
		st = apierrors.NewServiceUnavailable("the datastore is shutting down").ErrStatus
	default:
		s.log.Error("internal error", zap.Error(err))
		st = apierrors.NewInternalError(err).ErrStatus
	}
	st.APIVersion, st.Kind = "v1", "Status"
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	if st.Code == 0 {
		st.Code = http.StatusInternalServerError
	}
	return &st
}

// writeJSON writes v as JSON (or YAML when the client asked only for YAML).
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, code int, v interface{}) {
	data, err := json.Marshal(v)
	if err != nil {
		s.log.Error("encode response", zap.Error(err))
		http.Error(w, "internal error encoding response", http.StatusInternalServerError)
		return
	}
	ctype := "application/json"
	if wantsYAML(r) {
		if y, err := yaml.JSONToYAML(data); err == nil {
			data, ctype = y, "application/yaml"
		}
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write(data)
	}
}

// writeObject writes a single object in the representation the client
// negotiated (JSON, Table, PartialObjectMetadata).
func (s *Server) writeObject(w http.ResponseWriter, r *http.Request, rc *reqCtx, code int, obj runtime.Object) {
	out, err := s.transformObject(r, rc, obj)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeNegotiated(w, r, rc, code, out)
}

// writeNegotiated writes a transformed object or list as protobuf when the
// client negotiated it, else as JSON (or YAML).
func (s *Server) writeNegotiated(w http.ResponseWriter, r *http.Request, rc *reqCtx, code int, out interface{}) {
	obj, ok := out.(runtime.Object)
	if !rc.out.proto || !ok {
		s.writeJSON(w, r, code, out)
		return
	}
	var buf bytes.Buffer
	if err := s.dec.protobuf.Encode(obj, &buf); err != nil {
		s.log.Error("encode protobuf response", zap.Error(err))
		s.writeJSON(w, r, code, out)
		return
	}
	w.Header().Set("Content-Type", runtime.ContentTypeProtobuf)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// hasProtobuf is true when res's objects have a protobuf form (the
// built-in types; not custom resources).
func hasProtobuf(res *registry.Resource) bool {
	_, ok := res.New().(interface{ Marshal() ([]byte, error) })
	return ok
}

// successStatus is the Status kube answers for deletes and subresource posts.
func successStatus(code int, details *metav1.StatusDetails) *metav1.Status {
	return &metav1.Status{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status:   metav1.StatusSuccess, Code: int32(code), Details: details,
	}
}

func forbiddenStatus(msg string) metav1.Status {
	return metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusForbidden,
		Reason: metav1.StatusReasonForbidden, Message: msg,
	}
}

func notFoundPath() error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotFound,
		Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource",
		Details: &metav1.StatusDetails{},
	}}
}

func notAcceptable(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusNotAcceptable,
		Reason: metav1.StatusReasonNotAcceptable, Message: msg,
	}}
}

func badRequestf(format string, args ...interface{}) error {
	return apierrors.NewBadRequest(fmt.Sprintf(format, args...))
}
