//go:build linux

package memtune

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapping is one line of /proc/self/maps.
type mapping struct {
	start, end uintptr
	perms      string
	path       string
}

// parseMaps returns the file (and [special]) mappings in a /proc/<pid>/maps
// text; anonymous mappings have no path and are skipped.
func parseMaps(data []byte) []mapping {
	var out []mapping
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		s, err1 := strconv.ParseUint(lo, 16, 64)
		e, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil || e <= s {
			continue
		}
		out = append(out, mapping{start: uintptr(s), end: uintptr(e), perms: f[1], path: strings.Join(f[5:], " ")})
	}
	return out
}

// readOnlyOf returns the read-only (code and read-only data) mappings of the
// file at path: the ones whose pages can only ever be clean file pages.
func readOnlyOf(maps []mapping, path string) []mapping {
	var out []mapping
	for _, m := range maps {
		if m.path == path && len(m.perms) == 4 && m.perms[1] == '-' && m.perms[3] == 'p' {
			out = append(out, m)
		}
	}
	return out
}

// releaseBinary sets MADV_RANDOM and then MADV_PAGEOUT on the executable's
// read-only mappings, then drops the executable's page-cache pages that no
// process maps (POSIX_FADV_DONTNEED), and returns how many bytes it advised.
func releaseBinary() (int64, error) {
	ms, err := exeMappings("self")
	if err != nil {
		return 0, err
	}
	var n int64
	for _, m := range ms {
		if err := madvise(m, unix.MADV_RANDOM); err != nil {
			return n, err
		}
		if err := madvise(m, unix.MADV_PAGEOUT); err != nil {
			return n, err
		}
		n += int64(m.end - m.start)
	}
	// The reclaimed pages sit in per-CPU LRU batches for a moment and are
	// skipped by an immediate fadvise; a second later they go.
	time.Sleep(time.Second)
	// /proc/self/exe opens our inode even if the file was replaced since.
	return n, dropCache("/proc/self/exe")
}

// dropCache asks the kernel to drop the file's clean page-cache pages that
// are not mapped (installing the binary, or reading it at exec, leaves all
// of it cached). Without this, every later fault maps the cached pages
// around the faulting one (fault-around) and the process's RSS grows by
// pages it does not use. Mapped pages, ours or another process's, stay.
func dropCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open executable: %w", err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("fadvise %s: %w", path, err)
	}
	return nil
}

// ReleaseProcess pages out the read-only mappings of another process's
// executable (process_madvise MADV_PAGEOUT; Linux 5.10, root or the same
// user) and drops that file's unmapped page-cache pages. It is what Settle
// does for orch, for a child that cannot do it itself (the managed
// containerd); MADV_RANDOM cannot be set from outside, so its faults still
// read ahead. It returns how many bytes it advised.
func ReleaseProcess(pid int) (int64, error) {
	proc := strconv.Itoa(pid)
	ms, err := exeMappings(proc)
	if err != nil {
		return 0, err
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return 0, fmt.Errorf("pidfd of %d: %w", pid, err)
	}
	defer unix.Close(fd)
	// struct iovec with the other process's addresses (never dereferenced
	// here, so kept as integers).
	iov := make([]struct{ base, len uintptr }, len(ms))
	var n int64
	for i, m := range ms {
		iov[i].base, iov[i].len = m.start, m.end-m.start
		n += int64(m.end - m.start)
	}
	_, _, e := unix.Syscall6(unix.SYS_PROCESS_MADVISE, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)),
		uintptr(unix.MADV_PAGEOUT), 0, 0)
	if e != 0 {
		return 0, fmt.Errorf("process_madvise %d: %w", pid, e)
	}
	time.Sleep(time.Second) // as in releaseBinary: let the LRU batches drain
	return n, dropCache("/proc/" + proc + "/exe")
}

// exeMappings returns the read-only mappings of the executable of
// /proc/<proc> ("self" or a pid).
func exeMappings(proc string) ([]mapping, error) {
	exe, err := os.Readlink("/proc/" + proc + "/exe")
	if err != nil {
		return nil, fmt.Errorf("find executable of %s: %w", proc, err)
	}
	data, err := os.ReadFile("/proc/" + proc + "/maps")
	if err != nil {
		return nil, fmt.Errorf("read mappings of %s: %w", proc, err)
	}
	ms := readOnlyOf(parseMaps(data), exe)
	if len(ms) == 0 {
		return nil, fmt.Errorf("no read-only mapping of %s in %s", exe, proc)
	}
	return ms, nil
}

func madvise(m mapping, advice int) error {
	_, _, e := unix.Syscall(unix.SYS_MADVISE, m.start, m.end-m.start, uintptr(advice))
	if e != 0 {
		return fmt.Errorf("madvise %#x-%#x advice %d: %w", m.start, m.end, advice, e)
	}
	return nil
}
