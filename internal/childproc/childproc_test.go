package childproc

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestChildOutlivesLockedThreads forks a child with Pdeathsig, then ends
// many OS threads the way a goroutine left in another namespace does: the
// child must stay alive, since the thread that forked it is kept.
func TestChildOutlivesLockedThreads(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	done, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); <-done }()
	for range 64 {
		end := make(chan struct{})
		go func() {
			runtime.LockOSThread() // never unlocked: Go ends the thread
			close(end)
		}()
		<-end
	}
	select {
	case err := <-done:
		t.Fatalf("child died when other threads ended: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
}

func TestStartError(t *testing.T) {
	if _, err := Start(exec.Command("/nonexistent/binary")); err == nil {
		t.Fatal("no error starting a missing binary")
	}
}

func TestWaitResult(t *testing.T) {
	done, err := Start(exec.Command("sh", "-c", "exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := <-done; err == nil || !asExit(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("wait error %v, want exit status 3", err)
	}
	if _, ok := <-done; ok {
		t.Fatal("channel not closed after the result")
	}
}

func asExit(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}
