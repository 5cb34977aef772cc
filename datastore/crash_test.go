package datastore_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
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
		SnapshotThreshold: 500, TrailingLogs: 100, SnapshotInterval: 100 * time.Millisecond})
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
		acked := runAndKill(t, dir, round, 1500)
		checkCrashState(t, dir, acked)
	}
}

// runAndKill starts the child on dir, kill -9s it after n acknowledgements
// and returns the acknowledged lines.
func runAndKill(t *testing.T, dir string, round, n int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envCrashChild+"="+dir, fmt.Sprintf("%s=%d", envCrashRound, round))
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
func checkCrashState(t *testing.T, dir string, acked []string) {
	t.Helper()
	s := datastore.OpenTest(t, datastore.NewTestConfig(t, dir))
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
