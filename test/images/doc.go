// Package images builds small, deterministic OCI image tarballs for tests
// from the host's static busybox (Debian's busybox-static), so tests never
// need a registry. BuildBusybox writes an OCI image layout tar whose index
// names the image with the given references (as `ctr import` / containerd's
// Import expect), e.g. docker.io/library/nginx:1.25 served by busybox httpd.
//
// Caveat: Debian's busybox-static 1.35 `wget -T <secs>` segfaults; use
// `timeout N wget ...` in test commands instead.
package images
