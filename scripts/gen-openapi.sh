#!/bin/sh
# Regenerates server/openapi/data from the upstream Kubernetes OpenAPI specs,
# filtered to the resources orch serves (server/registry.All).
# Run it after adding a resource or subresource; commit the result.
set -eu
K8S_VERSION=v1.37.1 # k8s.io/kubernetes version whose api/openapi-spec is used
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# Download outside the orch module so go.mod and go.sum stay untouched.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dir=$(cd "$tmp" && GO111MODULE=on GOFLAGS=-mod=mod go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
if [ -z "$dir" ] || [ ! -f "$dir/api/openapi-spec/swagger.json" ]; then
	echo "gen-openapi: k8s.io/kubernetes@$K8S_VERSION not found in the module cache" >&2
	exit 1
fi
go run ./server/openapi/gen -spec "$dir/api/openapi-spec" -out server/openapi/data
du -sh server/openapi/data
