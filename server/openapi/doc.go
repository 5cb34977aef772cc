// Package openapi serves the OpenAPI v2 and v3 documents of the API orch
// serves. The documents are the upstream Kubernetes v1.37.1 specs filtered to
// orch's resources by the generator in ./gen (run scripts/gen-openapi.sh),
// stored gzipped in ./data and embedded. Nothing is decoded at start: the
// gzipped bytes are sent as they are to clients that accept gzip (client-go
// and kubectl do) and streamed through a decompressor otherwise.
//
// The package also holds the table of subresources orch serves beyond
// status and scale, shared by API discovery and the generator.
package openapi
