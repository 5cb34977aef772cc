// Package reviews holds the API's create-only review resources, which are
// answered from the request and never stored: authentication.k8s.io/v1
// TokenReview (is this bearer token valid, and whose is it?) and
// SelfSubjectReview (`kubectl auth whoami`). Each is an apiserver.Virtual
// the server wiring passes to the API server.
package reviews
