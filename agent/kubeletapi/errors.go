package kubeletapi

import (
	"encoding/json"
	"errors"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// httpError is an error with the HTTP status it answers with.
type httpError struct {
	code   int
	reason metav1.StatusReason
	msg    string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(msg string) error {
	return &httpError{http.StatusBadRequest, metav1.StatusReasonBadRequest, msg}
}

// writeErr answers err as a metav1.Status (500 unless err is an httpError).
func writeErr(w http.ResponseWriter, err error) {
	var he *httpError
	if errors.As(err, &he) {
		writeStatus(w, he.code, he.reason, he.msg)
		return
	}
	writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error())
}

func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, msg string) {
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status: metav1.StatusFailure, Code: int32(code), Reason: reason, Message: msg}
	b, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
