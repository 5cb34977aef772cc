// Package crossbuild holds the compile-only check that orch still builds
// for the release targets the test machines are not: linux/arm64 and
// linux/arm with GOARM=7 (a Raspberry Pi 2/3/Zero 2 on a 32-bit OS), so a
// change that breaks 32-bit ARM (an untyped constant overflowing int, a
// syscall field of another width, a dependency without a 32-bit port)
// fails the test run. The binaries are built as scripts/release.sh builds
// them (static, stripped) into a temporary directory and checked to be
// static ELF executables of the right machine; nothing runs them.
package crossbuild
