package sdnotify

import (
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func listen(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func read(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	buf := make([]byte, 512)
	if err := conn.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func TestReadyReachesSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	conn := listen(t, path)
	t.Setenv(EnvVar, path)
	n := FromEnv()
	if !n.Enabled() {
		t.Fatal("notifier from $NOTIFY_SOCKET is disabled")
	}
	if v, ok := lookup(EnvVar); ok {
		t.Fatalf("%s still set (%q): children would inherit it", EnvVar, v)
	}
	if err := n.Ready("API ready"); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, conn), "READY=1\nSTATUS=API ready\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestAbstractSocket(t *testing.T) {
	name := "orch-sdnotify-test-" + filepath.Base(t.TempDir())
	conn := listen(t, "\x00"+name)
	if err := New("@" + name).Stopping(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, conn); got != "STOPPING=1\n" {
		t.Fatalf("got %q", got)
	}
}

func TestNoSocketIsQuiet(t *testing.T) {
	t.Setenv(EnvVar, "")
	n := FromEnv()
	if n.Enabled() {
		t.Fatal("enabled without a socket")
	}
	if err := n.Ready("x"); err != nil {
		t.Fatal(err)
	}
}

func TestMissingSocketIsAnError(t *testing.T) {
	if err := New(filepath.Join(t.TempDir(), "absent")).Ready("x"); err == nil {
		t.Fatal("no error for a socket that does not exist")
	}
}

func lookup(k string) (string, bool) { return os.LookupEnv(k) }
