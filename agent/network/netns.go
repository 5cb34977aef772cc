package network

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sys/unix"
)

const nsfsMagic = 0x6e736673

// ensureNetnsDir makes dir a shared mount point, as iproute2 and CNI do, so
// namespace bind mounts under it propagate to other mount namespaces.
func ensureNetnsDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create netns dir %s: %w", dir, err)
	}
	err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("make %s a shared mount: %w", dir, err)
	}
	if err := unix.Mount(dir, dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind mount %s on itself: %w", dir, err)
	}
	if err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("make %s a shared mount: %w", dir, err)
	}
	return nil
}

// isNetns reports whether path is a mounted network namespace.
func isNetns(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == nsfsMagic
}

// ensureNetns makes path a bind mount of a fresh network namespace unless it
// already is one. It reports whether it created the namespace.
func ensureNetns(path string) (bool, error) {
	if isNetns(path) {
		return false, nil
	}
	if err := ensureNetnsDir(filepath.Dir(path)); err != nil {
		return false, err
	}
	// A file that is not a namespace is a leftover of an interrupted setup.
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("remove stale %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return false, fmt.Errorf("create netns mount point %s: %w", path, err)
	}
	f.Close()
	if err := bindNewNetns(path); err != nil {
		_ = os.Remove(path)
		return false, err
	}
	return true, nil
}

// bindNewNetns creates a network namespace on a throwaway OS thread and bind
// mounts it at path. The thread stays locked, so Go ends it with the
// goroutine and no other goroutine ever runs in the new namespace.
func bindNewNetns(path string) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with us
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("unshare network namespace: %w", err)
			return
		}
		src := fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
		if err := unix.Mount(src, path, "none", unix.MS_BIND, ""); err != nil {
			errc <- fmt.Errorf("bind mount netns at %s: %w", path, err)
			return
		}
		errc <- nil
	}()
	return <-errc
}

// removeNetns unmounts and removes path; a missing namespace is success.
func removeNetns(path string) error {
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil &&
		!errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount netns %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove netns %s: %w", path, err)
	}
	return nil
}
