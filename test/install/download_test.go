package install

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/orch/orch/test/testutil"
)

const testVersion = "v9.9.9-test"

// assets are the fake binaries of a release: shell scripts that say which
// arch they are for.
var assets = map[string]string{"amd64": "orch", "arm64": "orch-arm64", "arm": "orch-armhf"}

// fakeRelease writes a release layout for testVersion under a new dir; with
// tamper, the checksum files name a different hash.
func fakeRelease(t *testing.T, tamper bool) string {
	t.Helper()
	dir := t.TempDir()
	vdir := filepath.Join(dir, testVersion)
	must(t, os.MkdirAll(filepath.Join(dir, "channels"), 0o755))
	must(t, os.MkdirAll(vdir, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "channels", "stable"), []byte(testVersion+"\n"), 0o644))
	for arch, bin := range assets {
		body := []byte("#!/bin/sh\necho fake orch " + arch + "\n")
		must(t, os.WriteFile(filepath.Join(vdir, bin), body, 0o755))
		sum := sha256.Sum256(body)
		if tamper {
			sum[0] ^= 0xff
		}
		line := fmt.Sprintf("%s  %s\n%s  orch-airgap-images-%s.tar.zst\n", hex.EncodeToString(sum[:]), bin, strings.Repeat("0", 64), arch)
		must(t, os.WriteFile(filepath.Join(vdir, "sha256sum-"+arch+".txt"), []byte(line), 0o644))
	}
	return dir
}

func serve(t *testing.T, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runInstall runs install.sh under root with env; it returns the output
// and whether it succeeded.
func runInstall(t *testing.T, root string, env ...string) (string, bool) {
	t.Helper()
	return runInstallWith(t, []string{"sh"}, root, env...)
}

// runInstallWith runs install.sh with the given shell (dash is Debian's
// sh; busybox's ash is Alpine's).
func runInstallWith(t *testing.T, shell []string, root string, env ...string) (string, bool) {
	t.Helper()
	repo, err := testutil.RepoRoot()
	must(t, err)
	cmd := exec.Command(shell[0], append(shell[1:], filepath.Join(repo, "scripts", "install.sh"))...)
	cmd.Env = append(cleanEnv(), append([]string{"ORCH_ROOT=" + root, "TMPDIR=" + t.TempDir()}, env...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// cleanEnv is the test's environment without orch's and the installer's
// variables, so a developer's settings cannot change the result.
func cleanEnv() []string { return testutil.ChildEnv("INSTALL_ORCH_") }

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	must(t, err)
	return string(b)
}

func TestDownloadsArchFromChannel(t *testing.T) {
	base := serve(t, fakeRelease(t, false))
	for machine, arch := range map[string]string{"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "armv6l": "arm"} {
		t.Run(machine, func(t *testing.T) {
			root := t.TempDir()
			out, ok := runInstall(t, root, "ORCH_RELEASE_URL="+base, "ORCH_ARCH="+machine, "INSTALL_ORCH_INIT=none")
			if !ok {
				t.Fatalf("install failed:\n%s", out)
			}
			got := read(t, filepath.Join(root, "usr/local/bin/orch"))
			if want := "echo fake orch " + arch + "\n"; !strings.HasSuffix(got, want) {
				t.Fatalf("installed %q, want the %s binary", got, arch)
			}
			if !strings.Contains(out, "verified sha256") || !strings.Contains(out, testVersion) {
				t.Errorf("output does not say what was verified:\n%s", out)
			}
		})
	}
}

func TestExplicitVersionAndBinDir(t *testing.T) {
	dir := fakeRelease(t, false)
	must(t, os.Remove(filepath.Join(dir, "channels", "stable")))
	root := t.TempDir()
	out, ok := runInstall(t, root, "ORCH_RELEASE_URL="+serve(t, dir), "INSTALL_ORCH_VERSION="+testVersion,
		"ORCH_ARCH=x86_64", "INSTALL_ORCH_BIN_DIR=/opt/bin", "INSTALL_ORCH_INIT=none")
	if !ok {
		t.Fatalf("install failed:\n%s", out)
	}
	for _, f := range []string{"orch", "orch-killall.sh", "orch-uninstall.sh"} {
		if _, err := os.Stat(filepath.Join(root, "opt/bin", f)); err != nil {
			t.Error(err)
		}
	}
}

// TestWrongChecksumInstallsNothing: the script must stop before it writes
// a single file.
func TestWrongChecksumInstallsNothing(t *testing.T) {
	base := serve(t, fakeRelease(t, true))
	root := t.TempDir()
	out, ok := runInstall(t, root, "ORCH_RELEASE_URL="+base, "ORCH_ARCH=x86_64", "INSTALL_ORCH_INIT=systemd")
	if ok {
		t.Fatalf("install with a wrong checksum succeeded:\n%s", out)
	}
	if !strings.Contains(out, "checksum mismatch for orch") {
		t.Errorf("error does not name the mismatch:\n%s", out)
	}
	assertEmpty(t, root)
}

func TestMissingReleaseFails(t *testing.T) {
	base := serve(t, t.TempDir())
	root := t.TempDir()
	out, ok := runInstall(t, root, "ORCH_RELEASE_URL="+base, "ORCH_ARCH=x86_64")
	if ok || !strings.Contains(out, "cannot read channel stable") {
		t.Fatalf("want a clear failure for a host without the channel, got ok=%v:\n%s", ok, out)
	}
	assertEmpty(t, root)
}

func assertEmpty(t *testing.T, root string) {
	t.Helper()
	entries, err := os.ReadDir(root)
	must(t, err)
	if len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("the failed install left %v under its root", names)
	}
}

func TestAgentUnitAndEnvFile(t *testing.T) {
	base := serve(t, fakeRelease(t, false))
	root := t.TempDir()
	env := []string{"ORCH_RELEASE_URL=" + base, "ORCH_ARCH=x86_64", "INSTALL_ORCH_INIT=systemd",
		"ORCH_URL=https://10.0.0.1:6443", "ORCH_TOKEN=K10abc::node:secret", "INSTALL_ORCH_EXEC=--node-label role=edge"}
	out, ok := runInstall(t, root, env...)
	if !ok {
		t.Fatalf("install failed:\n%s", out)
	}
	unit := read(t, filepath.Join(root, "etc/systemd/system/orch-agent.service"))
	for _, want := range []string{"Type=notify", "KillMode=process", "Delegate=yes", "Restart=always",
		"ExecStart=/usr/local/bin/orch agent --node-label role=edge\n", "EnvironmentFile=-/etc/systemd/system/%N.service.env"} {
		if !strings.Contains(unit, want) {
			t.Errorf("unit lacks %q:\n%s", want, unit)
		}
	}
	envPath := filepath.Join(root, "etc/systemd/system/orch-agent.service.env")
	if got := read(t, envPath); got != "ORCH_URL=https://10.0.0.1:6443\nORCH_TOKEN=K10abc::node:secret\n" {
		t.Errorf("env file %q", got)
	}
	if st, err := os.Stat(envPath); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("env file mode: %v %v", st.Mode(), err)
	}
	if strings.Contains(out, "secret") {
		t.Errorf("the token is printed:\n%s", out)
	}
	// The same again changes nothing.
	before := mtimes(t, root)
	out, ok = runInstall(t, root, env...)
	if !ok {
		t.Fatalf("second install failed:\n%s", out)
	}
	if strings.Contains(out, "wrote ") {
		t.Errorf("a re-run with nothing changed wrote files:\n%s", out)
	}
	if after := mtimes(t, root); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("files changed on a re-run:\nbefore %v\nafter  %v", before, after)
	}
}

// mtimes maps every file under root to its modification time.
func mtimes(t *testing.T, root string) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	must(t, filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !info.IsDir() { // temporary files come and go in directories
			m[p] = info.ModTime().UnixNano()
		}
		return nil
	}))
	return m
}

func TestServerExecNameAndSymlinks(t *testing.T) {
	base := serve(t, fakeRelease(t, false))
	root := t.TempDir()
	out, ok := runInstall(t, root, "ORCH_RELEASE_URL="+base, "ORCH_ARCH=x86_64", "INSTALL_ORCH_INIT=systemd",
		"INSTALL_ORCH_EXEC=server --cluster-init", "INSTALL_ORCH_NAME=edge")
	if !ok {
		t.Fatalf("install failed:\n%s", out)
	}
	unit := read(t, filepath.Join(root, "etc/systemd/system/orch-edge.service"))
	if !strings.Contains(unit, "ExecStart=/usr/local/bin/orch server --cluster-init\n") {
		t.Errorf("unit:\n%s", unit)
	}
	for _, l := range []string{"kubectl", "ctr"} {
		if dest, err := os.Readlink(filepath.Join(root, "usr/local/bin", l)); err != nil || dest != "/usr/local/bin/orch" {
			t.Errorf("%s symlink: %q %v", l, dest, err)
		}
	}
	if !strings.Contains(read(t, filepath.Join(root, "usr/local/bin/orch-uninstall.sh")), "ORCH_DEFAULT_SERVICES='orch orch-agent orch-edge'") {
		t.Error("orch-uninstall.sh does not know the service orch-edge")
	}
	root2 := t.TempDir()
	if out, ok := runInstall(t, root2, "ORCH_RELEASE_URL="+base, "ORCH_ARCH=x86_64", "INSTALL_ORCH_INIT=none", "INSTALL_ORCH_SYMLINK=skip"); !ok {
		t.Fatalf("install failed:\n%s", out)
	}
	if _, err := os.Lstat(filepath.Join(root2, "usr/local/bin/kubectl")); err == nil {
		t.Error("INSTALL_ORCH_SYMLINK=skip made a kubectl symlink")
	}
}

func TestOpenRCScript(t *testing.T) {
	base := serve(t, fakeRelease(t, false))
	root := t.TempDir()
	out, ok := runInstall(t, root, "ORCH_RELEASE_URL="+base, "ORCH_ARCH=aarch64", "INSTALL_ORCH_INIT=openrc",
		"ORCH_URL=https://10.0.0.1:6443", "ORCH_TOKEN_FILE=/etc/orch/token")
	if !ok {
		t.Fatalf("install failed:\n%s", out)
	}
	script := read(t, filepath.Join(root, "etc/init.d/orch-agent"))
	for _, want := range []string{"#!/sbin/openrc-run\n", "command=/usr/local/bin/orch\n", `command_args="agent"`,
		"supervisor=supervise-daemon", `. "/etc/orch/${RC_SVCNAME}.env"`} {
		if !strings.Contains(script, want) {
			t.Errorf("OpenRC script lacks %q:\n%s", want, script)
		}
	}
	envPath := filepath.Join(root, "etc/orch/orch-agent.env")
	if got := read(t, envPath); got != "ORCH_URL=https://10.0.0.1:6443\nORCH_TOKEN_FILE=/etc/orch/token\n" {
		t.Errorf("env file %q", got)
	}
	if st, _ := os.Stat(envPath); st.Mode().Perm() != 0o600 {
		t.Errorf("env file mode %v", st.Mode())
	}
	if _, err := os.Stat(filepath.Join(root, "etc/systemd")); err == nil {
		t.Error("an OpenRC install wrote systemd files")
	}
}

func TestSkipDownloadUsesInstalledBinary(t *testing.T) {
	root := t.TempDir()
	bin := filepath.Join(root, "usr/local/bin/orch")
	must(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	must(t, os.WriteFile(bin, []byte("#!/bin/sh\necho air-gapped\n"), 0o755))
	out, ok := runInstall(t, root, "ORCH_RELEASE_URL=http://127.0.0.1:1", "INSTALL_ORCH_SKIP_DOWNLOAD=true", "INSTALL_ORCH_INIT=systemd")
	if !ok {
		t.Fatalf("install failed:\n%s", out)
	}
	if got := read(t, bin); !strings.Contains(got, "air-gapped") {
		t.Errorf("binary replaced: %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/systemd/system/orch.service")); err != nil {
		t.Error(err)
	}
}

func TestBadSettingsAreRefused(t *testing.T) {
	for name, env := range map[string][]string{
		"token without url":   {"INSTALL_ORCH_EXEC=agent", "ORCH_TOKEN=x"},
		"http url":            {"ORCH_URL=http://x:6443", "ORCH_TOKEN=x"},
		"quote in exec":       {"INSTALL_ORCH_EXEC=server --tls-san 'a b'"},
		"bad name":            {"INSTALL_ORCH_NAME=Edge/1"},
		"bad init":            {"INSTALL_ORCH_INIT=upstart"},
		"unsupported arch":    {"ORCH_ARCH=riscv64", "ORCH_RELEASE_URL=http://127.0.0.1:1"},
		"newline in token":    {"ORCH_URL=https://x:6443", "ORCH_TOKEN=a\nEVIL=1"},
		"bad symlink setting": {"INSTALL_ORCH_SYMLINK=maybe", "ORCH_BINARY=/bin/true"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			out, ok := runInstall(t, root, env...)
			if ok || !strings.Contains(out, "[ERROR]") {
				t.Fatalf("accepted (ok=%v):\n%s", ok, out)
			}
		})
	}
}

// TestBusyboxAsh runs the script with Alpine's shell, busybox ash: a
// download with its checksum, the OpenRC script, a re-run that writes
// nothing, and a wrong checksum.
func TestBusyboxAsh(t *testing.T) {
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Skip("busybox not installed (scripts/install-deps.sh installs busybox-static)")
	}
	ash := []string{busybox, "sh"}
	base := serve(t, fakeRelease(t, false))
	root := t.TempDir()
	env := []string{"ORCH_RELEASE_URL=" + base, "ORCH_ARCH=aarch64", "INSTALL_ORCH_INIT=openrc",
		"ORCH_URL=https://10.0.0.1:6443", "ORCH_TOKEN=K10abc::node:secret"}
	out, ok := runInstallWith(t, ash, root, env...)
	if !ok {
		t.Fatalf("install under ash failed:\n%s", out)
	}
	if got := read(t, filepath.Join(root, "usr/local/bin/orch")); !strings.Contains(got, "fake orch arm64") {
		t.Errorf("installed %q", got)
	}
	if script := read(t, filepath.Join(root, "etc/init.d/orch-agent")); !strings.Contains(script, `command_args="agent"`) {
		t.Errorf("OpenRC script:\n%s", script)
	}
	if out, ok := runInstallWith(t, ash, root, env...); !ok || strings.Contains(out, "wrote ") {
		t.Errorf("re-run under ash (ok=%v) wrote files:\n%s", ok, out)
	}
	bad := t.TempDir()
	if out, ok := runInstallWith(t, ash, bad, "ORCH_RELEASE_URL="+serve(t, fakeRelease(t, true)), "ORCH_ARCH=x86_64"); ok || !strings.Contains(out, "checksum mismatch") {
		t.Errorf("wrong checksum under ash (ok=%v):\n%s", ok, out)
	}
	assertEmpty(t, bad)
}
