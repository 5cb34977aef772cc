// Package ext stands in for traefik's nested module
// github.com/traefik/traefik/dynamic/ext (pkg/config/dynamic/ext in its
// repository), which its v3.7.10 module zip lacks: two empty extension
// points of the dynamic configuration, as upstream's open-source build has.
package ext

// HTTP extends the HTTP configuration.
type HTTP struct{}

// Router extends a router.
type Router struct{}
