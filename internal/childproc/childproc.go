package childproc

import (
	"os/exec"
	"runtime"
)

// Start starts cmd from an OS thread locked for the child's lifetime and
// waits for it on that thread. The returned channel receives cmd.Wait's
// error once and is then closed. cmd.Wait must not be called by the caller.
func Start(cmd *exec.Cmd) (<-chan error, error) {
	started := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
		close(done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}
