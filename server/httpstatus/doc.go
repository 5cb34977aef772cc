// Package httpstatus writes the answers of orch's own HTTP endpoints beside
// the Kubernetes API (/cacerts and /v1-orch/...): JSON bodies and errors as
// Kubernetes metav1.Status objects, never cached.
package httpstatus
