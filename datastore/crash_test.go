package datastore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orch/orch/datastore"
	"go.uber.org/zap"
)

// envCrashChild switches the test binary into the crash-test child: it
// writes to the store in the named directory until killed.
const envCrashChild = "ORCH_DATASTORE_CRASH_CHILD"

// envCrashRound names the child's keys so later rounds do not collide.
const envCrashRound = "ORCH_DATASTORE_CRASH_ROUND"

// envCrashBoot is the child's Config.BootID (default: the real one).
const envCrashBoot = "ORCH_DATASTORE_CRASH_BOOT"

func TestMain(m *testing.M) {
	if dir := os.Getenv(envCrashChild); dir != "" {
		if err := runCrashChild(dir); err != nil {
			fmt.Fprintln(os.Stderr, "crash child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runCrashChild creates single keys and two-key txns from many goroutines,
// printing each acknowledged write as "key <k>" or "txn <n>".
func runCrashChild(dir string) error {
	server, client, err := datastore.NewTestPKIConfigs()
	if err != nil {
		return err
	}
	ctx := context.Background()
	s, err := datastore.Open(ctx, datastore.Config{Dir: dir, NodeID: "node1", BindAddr: "127.0.0.1:0",
		ServerTLS: server, ClientTLS: client, Bootstrap: true, Logger: zap.NewNop(),
		SnapshotThreshold: 500, TrailingLogs: 100, SnapshotInterval: 100 * time.Millisecond,
		BootID: os.Getenv(envCrashBoot)})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s.WaitLeader(wctx); err != nil {
		return err
	}
	var mu sync.Mutex
	ack := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintln(os.Stdout, line)
	}
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				if err := crashWrite(ctx, s, w, i, ack); err != nil {
					fmt.Fprintln(os.Stderr, "write:", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return s.Close()
}

func crashWrite(ctx context.Context, s *datastore.RaftStore, w, i int, ack func(string)) error {
	if i%2 == 0 {
		key := fmt.Sprintf("/crash/key/%s-%02d-%06d", os.Getenv(envCrashRound), w, i)
		if _, err := s.Create(ctx, key, []byte(key)); err != nil {
			return err
		}
		ack("key " + key)
		return nil
	}
	name := fmt.Sprintf("%s-%02d-%06d", os.Getenv(envCrashRound), w, i)
	_, err := s.Txn(ctx, []datastore.Op{
		{Type: datastore.OpCreate, Key: "/crash/txn/a/" + name, Value: []byte("a")},
		{Type: datastore.OpCreate, Key: "/crash/txn/b/" + name, Value: []byte("b")},
	})
	if err != nil {
		return err
	}
	ack("txn " + name)
	return nil
}

func TestRaftStoreCrashLosesNoAcknowledgedWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary")
	}
	dir := t.TempDir()
	for round := 0; round < 2; round++ { // the second round crashes a recovered store
		acked := runAndKill(t, dir, round, 1500, "")
		checkCrashState(t, dir, acked, "")
	}
}

// TestRaftStoreMachineCrashRebuildsState kills the child, then simulates
// the machine going down with it: the state file (written without fsync)
// is torn, and the store reopens under another boot ID. The state must be
// rebuilt from the raft snapshot and the fsynced log, losing nothing.
func TestRaftStoreMachineCrashRebuildsState(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary")
	}
	dir := t.TempDir()
	for round := 0; round < 2; round++ {
		boot := fmt.Sprintf("boot-%d", round)
		acked := runAndKill(t, dir, round, 1500, boot)
		marker, err := os.ReadFile(filepath.Join(dir, "state.unsynced"))
		if err != nil || strings.TrimSpace(string(marker)) != boot {
			t.Fatalf("unsynced marker after the kill: %q, %v; want %q", marker, err, boot)
		}
		tearStateFile(t, filepath.Join(dir, "state.db"))
		checkCrashState(t, dir, acked, fmt.Sprintf("boot-%d", round+1))
		if _, err := os.Stat(filepath.Join(dir, "state.unsynced")); !os.IsNotExist(err) {
			t.Fatalf("marker left after a clean close: %v", err)
		}
	}
}

// tearStateFile zeroes every other 4 KiB page after the meta pages, as a
// power loss can leave pages that were never written back.
func tearStateFile(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	mustOK(t, err)
	defer f.Close()
	st, err := f.Stat()
	mustOK(t, err)
	zero := make([]byte, 4096)
	for off := int64(2 * 4096); off < st.Size(); off += 2 * 4096 {
		_, err := f.WriteAt(zero, off)
		mustOK(t, err)
	}
	mustOK(t, f.Sync())
}

// runAndKill starts the child on dir, kill -9s it after n acknowledgements
// and returns the acknowledged lines.
func runAndKill(t *testing.T, dir string, round, n int, boot string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envCrashChild+"="+dir, fmt.Sprintf("%s=%d", envCrashRound, round), envCrashBoot+"="+boot)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	mustOK(t, err)
	mustOK(t, cmd.Start())
	done := false
	t.Cleanup(func() {
		if !done {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	var acked []string
	sc := bufio.NewScanner(out)
	for len(acked) < n && sc.Scan() {
		acked = append(acked, sc.Text())
	}
	mustOK(t, cmd.Process.Kill())
	for sc.Scan() { // acks printed before the kill landed
		acked = append(acked, sc.Text())
	}
	_ = cmd.Wait()
	done = true
	if len(acked) < n {
		t.Fatalf("child acknowledged only %d writes", len(acked))
	}
	return acked
}

// checkCrashState reopens dir and checks every acknowledged write, txn
// atomicity and that the revision matches the number of writes.
func checkCrashState(t *testing.T, dir string, acked []string, boot string) {
	t.Helper()
	cfg := datastore.NewTestConfig(t, dir)
	cfg.BootID = boot
	s := datastore.OpenTest(t, cfg)
	ctx := context.Background()
	for _, line := range acked {
		kind, name, _ := strings.Cut(line, " ")
		switch kind {
		case "key":
			_, err := s.Get(ctx, name)
			mustOK(t, err)
		case "txn":
			_, err := s.Get(ctx, "/crash/txn/a/"+name)
			mustOK(t, err)
		default:
			t.Fatalf("bad child output %q", line)
		}
	}
	keys, _ := s.Count(ctx, "/crash/key/")
	a, _ := s.Count(ctx, "/crash/txn/a/")
	b, _ := s.Count(ctx, "/crash/txn/b/")
	if a != b {
		t.Fatalf("half-applied txn: %d a-keys, %d b-keys", a, b)
	}
	if rev := s.Revision(); rev != keys+a {
		t.Fatalf("revision %d, but %d keys + %d txns were written", rev, keys, a)
	}
	t.Logf("acknowledged %d, present %d keys + %d txns at revision %d", len(acked), keys, a, s.Revision())
	mustOK(t, s.Close())
}
