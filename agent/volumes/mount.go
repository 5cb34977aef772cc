package volumes

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

const mountInfoPath = "/proc/self/mountinfo"

// mountPoints returns the mount points in /proc/self/mountinfo.
func mountPoints() ([]string, error) {
	f, err := os.Open(mountInfoPath)
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		out = append(out, unescapeOctal(fields[4]))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	return out, nil
}

// unescapeOctal undoes the kernel's \040-style escaping in mountinfo.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountsUnder lists mount points at or below dir, deepest first.
func mountsUnder(dir string) ([]string, error) {
	all, err := mountPoints()
	if err != nil {
		return nil, err
	}
	dir = filepath.Clean(dir)
	var out []string
	for _, mp := range all {
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out, nil
}

// isMountPoint reports whether dir is itself a mount point: from statx's
// STATX_ATTR_MOUNT_ROOT where the kernel reports it (Linux 5.8+), which
// costs one system call where mountinfo is read and parsed whole (every
// pod sync checks its secret and projected volumes' tmpfs), else from
// mountinfo.
func isMountPoint(dir string) (bool, error) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, dir, unix.AT_SYMLINK_NOFOLLOW, 0, &st); err == nil &&
		st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 {
		return st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0, nil
	}
	return isMountPointByMountinfo(dir)
}

// isMountPointByMountinfo reports whether dir is listed in mountinfo.
func isMountPointByMountinfo(dir string) (bool, error) {
	mps, err := mountsUnder(dir)
	if err != nil {
		return false, err
	}
	for _, mp := range mps {
		if mp == filepath.Clean(dir) {
			return true, nil
		}
	}
	return false, nil
}

// ensureTmpfs mounts a tmpfs on dir (creating it) unless one is there.
// size <= 0 means the kernel default.
func ensureTmpfs(dir string, size int64, mode os.FileMode) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	mounted, err := isMountPoint(dir)
	if err != nil || mounted {
		return err
	}
	opts := fmt.Sprintf("mode=%#o", mode.Perm())
	if size > 0 {
		opts += fmt.Sprintf(",size=%d", size)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("mount tmpfs on %s (%s): %w", dir, opts, err)
	}
	return nil
}

// unmountAll unmounts every mount at or below dir, deepest first, falling
// back to a lazy unmount when busy. Not mounted is success.
func unmountAll(dir string) error {
	mps, err := mountsUnder(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, mp := range mps {
		err := unix.Unmount(mp, 0)
		if errors.Is(err, unix.EBUSY) {
			err = unix.Unmount(mp, unix.MNT_DETACH)
		}
		if err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", mp, err))
		}
	}
	return errors.Join(errs...)
}
