// Package install tests scripts/install.sh.
//
// The download tests (every run of the suite, no root needed) serve a
// release layout from a loopback HTTP server and run the script with
// ORCH_ROOT: arch and channel resolution, checksum verification (a wrong
// checksum installs nothing), the systemd unit and OpenRC script it writes,
// the environment file's mode, INSTALL_ORCH_* variables and a re-run that
// changes nothing.
//
// The system tests (`make test-install`, ORCH_TEST_INSTALL=1, root) boot
// Debian in systemd-nspawn containers and install a real `make release`
// from a release server listening on each container's loopback: see
// system_test.go.
package install
