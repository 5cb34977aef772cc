package volumes

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orch/orch/agent/envvars"
)

const genSize = 256 << 10 // big enough that a torn write would be visible

func genData(key string, gen int) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("%s%06d", key, gen)), genSize/8)
}

// parseGen checks that data is one complete generation of key.
func parseGen(key string, data []byte) (int, error) {
	if len(data) != genSize {
		return 0, fmt.Errorf("%s: torn read, %d bytes", key, len(data))
	}
	var gen int
	if _, err := fmt.Sscanf(string(data[:8]), key+"%06d", &gen); err != nil {
		return 0, fmt.Errorf("%s: bad header %q", key, data[:8])
	}
	if !bytes.Equal(data, genData(key, gen)) {
		return 0, fmt.Errorf("%s: mixed content", key)
	}
	return gen, nil
}

func putGen(src *envvars.MemSources, gen int) {
	src.PutSecret(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sec"},
		Data: map[string][]byte{"ka": genData("ka", gen), "kb": genData("kb", gen)}})
}

// readSet reads ka and kb through one ..data snapshot; ok=false when the
// snapshot vanished under the reader (an old dir removed), which is allowed.
func readSet(dir string) (int, bool, error) {
	fd, err := unix.Open(filepath.Join(dir, dataDirName), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return 0, false, nil
	}
	defer unix.Close(fd)
	var gens [2]int
	for i, k := range []string{"ka", "kb"} {
		ffd, err := unix.Openat(fd, k, unix.O_RDONLY, 0)
		if err != nil {
			return 0, false, nil
		}
		f := os.NewFile(uintptr(ffd), k)
		data, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return 0, false, err
		}
		if gens[i], err = parseGen(k, data); err != nil {
			return 0, false, err
		}
	}
	if gens[0] != gens[1] {
		return 0, false, fmt.Errorf("inconsistent set: ka gen %d, kb gen %d", gens[0], gens[1])
	}
	return gens[0], true, nil
}

// readVisible reads ka through its user-visible path: it must be whole.
func readVisible(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, "ka"))
	if errors.Is(err, os.ErrNotExist) {
		return nil // resolved into an old dir just removed
	}
	if err != nil {
		return err
	}
	_, err = parseGen("ka", data)
	return err
}

func TestHostAtomicUpdate(t *testing.T) {
	requireRoot(t)
	m := newTestManager(t, Config{})
	src := envvars.NewMemSources()
	putGen(src, 0)
	pod := testPod("uid-upd", secretVol("sec", "sec", nil))
	ctx := context.Background()
	vols, err := m.SetupPod(ctx, pod, src)
	if err != nil {
		t.Fatal(err)
	}
	dir := vols["sec"].HostPath
	r := startReader(dir)
	const gens = 40
	for g := 1; g <= gens; g++ {
		putGen(src, g)
		if err := m.UpdatePod(ctx, pod, src); err != nil {
			_ = r.stop()
			t.Fatal(err)
		}
	}
	for i := 0; r.sets.Load() < 5 && len(r.errc) == 0; i++ { // make sure the reader really ran
		if gen, ok, _ := readSet(dir); ok && gen != gens {
			t.Fatalf("final gen %d", gen)
		}
		if i > 1_000_000 {
			t.Fatal("reader never completed a read")
		}
	}
	if err := r.stop(); err != nil {
		t.Fatalf("reader saw: %v", err)
	}
	t.Logf("reader saw %d consistent sets, last gen %d", r.sets.Load(), r.lastGen.Load())
	if gen, ok, err := readSet(dir); !ok || err != nil || gen != gens {
		t.Fatalf("final set: gen %d ok %v err %v, want gen %d", gen, ok, err, gens)
	}
	var ts int
	for _, p := range listTree(t, dir) {
		if strings.HasPrefix(p, "..20") && !strings.Contains(p, "/") {
			ts++
		}
	}
	if ts != 1 {
		t.Fatalf("%d timestamped dirs left, want 1", ts)
	}
	teardownAndCheck(t, m, pod.UID)
}

// reader reads the volume in a loop until stopped, recording the first
// inconsistency it sees.
type reader struct {
	done          atomic.Bool
	sets, lastGen atomic.Int64
	errc          chan error
	wg            sync.WaitGroup
}

func startReader(dir string) *reader {
	r := &reader{errc: make(chan error, 1)}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for !r.done.Load() {
			if err := r.once(dir); err != nil {
				r.errc <- err
				return
			}
		}
	}()
	return r
}

func (r *reader) once(dir string) error {
	gen, ok, err := readSet(dir)
	if err == nil {
		err = readVisible(dir)
	}
	if err != nil || !ok {
		return err
	}
	if last := r.lastGen.Load(); int64(gen) < last {
		return fmt.Errorf("generation went back from %d to %d", last, gen)
	}
	r.lastGen.Store(int64(gen))
	r.sets.Add(1)
	return nil
}

func (r *reader) stop() error {
	r.done.Store(true)
	r.wg.Wait()
	select {
	case err := <-r.errc:
		return err
	default:
		return nil
	}
}
