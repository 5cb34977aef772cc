package release

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/orch/orch/internal/version"
	"github.com/orch/orch/test/testutil"
)

const (
	testVersion = "v9.8.7-releasetest"
	testCommit  = "0123456789abcdef0123456789abcdef01234567"
	testEpoch   = "1700000000" // 2023-11-14T22:13:20Z
)

// assets maps GOARCH to the release arch and binary name (k3s's names).
var assets = map[string][2]string{"amd64": {"amd64", "orch"}, "arm64": {"arm64", "orch-arm64"}, "arm": {"arm", "orch-armhf"}}

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: %s not in PATH", tool)
		}
	}
}

// runRelease runs scripts/release.sh with env added and returns its output.
func runRelease(t *testing.T, env ...string) (string, error) {
	t.Helper()
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "release.sh"))
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping in -short: links a release binary")
	}
	needTools(t, "bash", "go", "tar", "zstd", "sha256sum")
	a, ok := assets[runtime.GOARCH]
	if runtime.GOOS != "linux" || !ok {
		t.Skipf("skipping: no release for %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	arch, binName := a[0], a[1]
	dist := t.TempDir()
	if out, err := runRelease(t, "VERSION="+testVersion, "COMMIT="+testCommit, "DIST="+dist,
		"RELEASE_ARCHS="+arch, "SOURCE_DATE_EPOCH="+testEpoch); err != nil {
		t.Fatalf("release.sh: %v\n%s", err, out)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dist)))
	t.Cleanup(srv.Close)

	v := resolveChannels(t, srv.URL)
	sums := checksums(t, get(t, srv.URL+"/"+v+"/sha256sum-"+arch+".txt"))
	bundleName := "orch-airgap-images-" + arch + ".tar.zst"
	if len(sums) != 2 || sums[binName] == "" || sums[bundleName] == "" {
		t.Fatalf("sha256sum-%s.txt = %v, want exactly %s and %s", arch, sums, binName, bundleName)
	}
	bin := downloadVerified(t, srv.URL+"/"+v+"/"+binName, sums[binName])
	bundle := downloadVerified(t, srv.URL+"/"+v+"/"+bundleName, sums[bundleName])
	checkInstaller(t, srv.URL, v)
	if imgs := get(t, srv.URL+"/"+v+"/orch-images.txt"); len(imgs) != 0 {
		t.Errorf("orch-images.txt = %q, want empty: orch needs no image by default", imgs)
	}
	checkBinary(t, bin)
	checkBundle(t, bundle)
}

// resolveChannels resolves "stable" and "latest" as an installer does.
func resolveChannels(t *testing.T, base string) string {
	t.Helper()
	for _, ch := range []string{"stable", "latest"} {
		if v := strings.TrimSpace(string(get(t, base+"/channels/"+ch))); v != testVersion {
			t.Fatalf("channels/%s = %q, want %q", ch, v, testVersion)
		}
	}
	return testVersion
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %v", url, resp.Status, err)
	}
	return b
}

// checksums parses sha256sum output: "<hex>  <name>" lines.
func checksums(t *testing.T, b []byte) map[string]string {
	t.Helper()
	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok || len(sum) != 64 {
			t.Fatalf("checksum line %q is not sha256sum output", line)
		}
		sums[name] = sum
	}
	return sums
}

// downloadVerified downloads url into a file and checks its SHA-256.
func downloadVerified(t *testing.T, url, want string) string {
	t.Helper()
	b := get(t, url)
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != want {
		t.Fatalf("%s: sha256 %x, checksum file says %s", url, sum, want)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(url))
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkInstaller checks that <base>/install.sh and <base>/<v>/install.sh
// are the checkout's scripts/install.sh.
func checkInstaller(t *testing.T, base, v string) {
	t.Helper()
	root, err := testutil.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(root, "scripts", "install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/install.sh", "/" + v + "/install.sh"} {
		if !bytes.Equal(get(t, base+p), want) {
			t.Errorf("%s is not scripts/install.sh", p)
		}
	}
}

// checkBinary runs the downloaded binary's --version and checks that it is
// static and stripped.
func checkBinary(t *testing.T, bin string) {
	t.Helper()
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	want := "orch version " + testVersion + " (01234567)\n" +
		"git commit " + testCommit + "\n" +
		"kubernetes version " + version.KubernetesVersion() + "\n" +
		"go version " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + "\n" +
		"built 2023-11-14T22:13:20Z\n"
	if string(out) != want {
		t.Errorf("--version printed\n%s\nwant\n%s", out, want)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an ELF interpreter: not static", bin)
		}
	}
	if f.Section(".symtab") != nil {
		t.Errorf("%s has a .symtab: not stripped", bin)
	}
}

// checkBundle reads the air-gap bundle: a tar (zstd) of an OCI layout with
// an empty index, orch's default set-up needing no image.
func checkBundle(t *testing.T, bundle string) {
	t.Helper()
	raw, err := exec.Command("zstd", "-dc", bundle).Output()
	if err != nil {
		t.Fatalf("zstd -dc %s: %v", bundle, err)
	}
	files := map[string][]byte{}
	var names []string
	tr := tar.NewReader(bytes.NewReader(raw))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("bundle tar: %v", err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.ModTime.Unix() != 1700000000 {
			t.Errorf("bundle entry %s: uid %d gid %d mtime %v, want 0 0 @%s", h.Name, h.Uid, h.Gid, h.ModTime, testEpoch)
		}
		names = append(names, h.Name)
		files[h.Name], _ = io.ReadAll(tr)
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "blobs/ blobs/sha256/ index.json oci-layout" {
		t.Errorf("bundle holds %v, want an empty OCI layout", names)
	}
	var layout struct{ ImageLayoutVersion string }
	var index struct {
		SchemaVersion int
		Manifests     []json.RawMessage
	}
	if err := json.Unmarshal(files["oci-layout"], &layout); err != nil || layout.ImageLayoutVersion != "1.0.0" {
		t.Errorf("oci-layout %q: %v", files["oci-layout"], err)
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || index.SchemaVersion != 2 || index.Manifests == nil || len(index.Manifests) != 0 {
		t.Errorf("index.json %q: %v; want schemaVersion 2 and an empty manifests list", files["index.json"], err)
	}
}

// TestReleaseRejects checks that bad input fails before anything is built.
func TestReleaseRejects(t *testing.T) {
	needTools(t, "bash")
	for _, tc := range []struct{ env, want string }{
		{"VERSION=../../etc", "use letters, digits and . _ + - only"},
		{"VERSION=.hidden", "use letters, digits and . _ + - only"},
		{"RELEASE_ARCHS=amd64 mips", "unknown arch mips"}, // VERSION given below: no git needed
	} {
		dist := t.TempDir()
		out, err := runRelease(t, "VERSION=v1.0.0", "COMMIT="+testCommit, tc.env, "DIST="+dist, "GO=/nonexistent/go")
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("%s: err %v, output %q; want a failure saying %q", tc.env, err, out, tc.want)
		}
		if entries, _ := os.ReadDir(dist); len(entries) != 0 {
			t.Errorf("%s: dist holds %d entries after a rejected release", tc.env, len(entries))
		}
	}
}
