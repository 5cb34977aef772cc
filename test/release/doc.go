// Package release tests `make release` (scripts/release.sh) end to end:
// it builds a release for the host's arch into a temporary dist directory,
// serves it on loopback with a plain file server, resolves the version
// through the channel file as an installer does, downloads the binary and
// the air-gap bundle, checks them against sha256sum-<arch>.txt, runs the
// binary's `--version`, and reads the bundle's OCI layout. The other
// arches are compiled by test/crossbuild.
package release
