// Package fieldmanager keeps metadata.managedFields and performs
// server-side apply with upstream's implementation
// (k8s.io/apimachinery/pkg/util/managedfields, structured-merge-diff). The
// built-in types get their schema from the OpenAPI definitions embedded in
// server/openapi (one type converter, built on first use: a few MB);
// custom resources use the deduced converter (lists are atomic), through
// the same Managers cache keyed by kind and subresource.
package fieldmanager
