package runtime

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// TestRecoverAfterAgentRestart simulates an agent restart: the first
// runtime and client go away, containerd itself is restarted, and a new
// runtime finds the running containers by their labels and keeps their logs
// flowing.
func TestRecoverAfterAgentRestart(t *testing.T) {
	requireHost(t)
	ctx := context.Background()
	d, err := startDaemon(ctx, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.teardown)
	tar := buildImage(t, d)
	if err := importTar(ctx, d.client, testNS, tar); err != nil {
		t.Fatal(err)
	}
	r1 := newRuntime(t, d)
	p := newPod(t, true)
	s := p.spec("ticker", "sh", "-c", "i=0; while true; do i=$((i+1)); echo tick-$i; sleep 0.1; done")
	s.RestartCount = 2
	cur := r1
	t.Cleanup(func() {
		if err := cur.RemoveContainer(context.Background(), s.ID); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if err := r1.CreateContainer(ctx, s); err != nil {
		t.Fatal(err)
	}
	if err := r1.StartContainer(ctx, s.ID); err != nil {
		t.Fatal(err)
	}
	// a container with stdin: after the restart it is attachable again
	in := p.spec("reader", "sh", "-c", "while read l; do echo got:$l; done; echo stdin-eof; sleep 1000")
	in.Stdin = true
	t.Cleanup(func() { _ = cur.RemoveContainer(context.Background(), in.ID) })
	if err := r1.CreateContainer(ctx, in); err != nil {
		t.Fatal(err)
	}
	if err := r1.StartContainer(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, r1, s.ID, StateRunning, 20*time.Second)
	waitLog(t, st.LogPath, "tick-3", 10*time.Second)

	// Agent goes away: runtime, client and containerd.
	r1.Close()
	d.client.Close()
	if err := d.m.Stop(); err != nil {
		t.Fatal(err)
	}
	m2, err := StartManagedConfig(ctx, zaptest.NewLogger(t), d.m.cfg)
	if err != nil {
		t.Fatal(err)
	}
	d.m = m2
	c2, err := Connect(ctx, m2.Address())
	if err != nil {
		t.Fatal(err)
	}
	d.client = c2
	r2 := newRuntime(t, d)
	cur = r2

	list, err := r2.ListContainers(ctx, p.uid)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 2 && list[0].ID != s.ID {
		list[0], list[1] = list[1], list[0]
	}
	if len(list) != 2 || list[0].ID != s.ID || list[0].State != StateRunning || list[0].Name != "ticker" ||
		list[0].RestartCount != 2 || list[0].PodName != p.name || list[0].LogPath != st.LogPath {
		t.Fatalf("after restart: %+v", list)
	}
	b, _ := os.ReadFile(st.LogPath)
	n := strings.Count(string(b), "tick-")
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(string(b), "tick-") < n+5 {
		if time.Now().After(deadline) {
			t.Fatalf("log stopped growing after reattach:\n%s", b)
		}
		time.Sleep(100 * time.Millisecond)
		b, _ = os.ReadFile(st.LogPath)
	}
	// attach after the restart: the output reaches the client too
	var out syncBuffer
	actx, acancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- r2.Attach(actx, s.ID, AttachRequest{Stdout: &out}) }()
	waitBuf(t, &out, "tick-")
	acancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// stdin survives the restart and is attachable again
	var rout syncBuffer
	pr, pw := io.Pipe()
	go func() { done <- r2.Attach(ctx, in.ID, AttachRequest{Stdin: pr, Stdout: &rout}) }()
	_, _ = pw.Write([]byte("after-restart\n"))
	waitBuf(t, &rout, "got:after-restart")
	_ = pw.Close() // without stdinOnce the end of input detaches
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ist, _ := r2.ContainerStatus(ctx, in.ID); ist.State != StateRunning || strings.Contains(rout.String(), "stdin-eof") {
		t.Fatalf("stdin container after restart: %s, output %q", ist.State, rout.String())
	}
	if other, _ := r2.ListContainers(ctx, "no-such-pod"); len(other) != 0 {
		t.Fatalf("list of another pod: %+v", other)
	}
}
