package images

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	containerd "github.com/containerd/containerd/v2/client"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"github.com/orch/orch/agent/runtime"
	testimages "github.com/orch/orch/test/images"
)

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// startContainerd runs a managed containerd under /run/orcht-<rand> for one
// test and removes everything on cleanup.
func startContainerd(t *testing.T) (*containerd.Client, string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: containerd tests need root")
	}
	if _, err := exec.LookPath("containerd"); err != nil {
		t.Skip("skipping: containerd not in PATH")
	}
	base := "/run/orcht-" + randHex(4)
	t.Cleanup(func() { unmountUnder(base); os.RemoveAll(base) })
	ctx := context.Background()
	m, err := runtime.StartManagedConfig(ctx, zaptest.NewLogger(t), runtime.ManagedConfig{
		RootDir: filepath.Join(base, "root"), StateDir: filepath.Join(base, "state")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	c, err := runtime.Connect(ctx, m.Address())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, base
}

func unmountUnder(dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	var mps []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 4 && strings.HasPrefix(fs[4], dir+"/") {
			mps = append(mps, fs[4])
		}
	}
	for i := len(mps) - 1; i >= 0; i-- {
		_ = unix.Unmount(mps[i], unix.MNT_DETACH)
	}
}

// registry is a minimal read-only OCI distribution server on loopback,
// serving the images of one OCI layout tar, optionally behind basic auth.
type registry struct {
	srv       *httptest.Server
	blobs     map[string][]byte
	manifests map[string]string // tag → manifest digest
	user, pw  string
}

func newRegistry(t *testing.T, layoutTar, user, pw string) *registry {
	t.Helper()
	r := &registry{blobs: map[string][]byte{}, manifests: map[string]string{}, user: user, pw: pw}
	f, err := os.Open(layoutTar)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var index []byte
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		switch {
		case h.Name == "index.json":
			index = b
		case strings.HasPrefix(h.Name, "blobs/sha256/") && h.Typeflag == tar.TypeReg:
			r.blobs["sha256:"+strings.TrimPrefix(h.Name, "blobs/sha256/")] = b
		}
	}
	var idx struct {
		Manifests []struct {
			Digest      string            `json:"digest"`
			Annotations map[string]string `json:"annotations"`
		} `json:"manifests"`
	}
	if err := json.Unmarshal(index, &idx); err != nil {
		t.Fatal(err)
	}
	for _, m := range idx.Manifests {
		name := m.Annotations["io.containerd.image.name"]
		r.manifests[name[strings.LastIndex(name, ":")+1:]] = m.Digest
	}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *registry) host() string { return strings.TrimPrefix(r.srv.URL, "http://") }

func (r *registry) serve(w http.ResponseWriter, req *http.Request) {
	if r.user != "" {
		if u, p, ok := req.BasicAuth(); !ok || u != r.user || p != r.pw {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
	}
	p := req.URL.Path
	switch {
	case p == "/v2/" || p == "/v2":
		w.WriteHeader(http.StatusOK)
	case strings.Contains(p, "/manifests/"):
		ref := p[strings.LastIndex(p, "/")+1:]
		if d, ok := r.manifests[ref]; ok {
			ref = d
		}
		r.blob(w, req, ref, "application/vnd.oci.image.manifest.v1+json")
	case strings.Contains(p, "/blobs/"):
		r.blob(w, req, p[strings.LastIndex(p, "/")+1:], "application/octet-stream")
	default:
		http.NotFound(w, req)
	}
}

func (r *registry) blob(w http.ResponseWriter, req *http.Request, digest, ctype string) {
	b, ok := r.blobs[digest]
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"errors":[{"code":"MANIFEST_UNKNOWN","message":"manifest unknown"}]}`)
		return
	}
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Docker-Content-Digest", digest)
	w.Header().Set("Content-Length", itoa(len(b)))
	if req.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func buildTar(t *testing.T, dir string, refs ...string) string {
	return testimages.BuildBusybox(t, dir, refs...)
}
