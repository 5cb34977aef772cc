package ipam

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Errors returned by the Store; check them with errors.Is.
var (
	// ErrExhausted means every allocatable address of the range is taken.
	ErrExhausted = errors.New("ipam: no free IP address in range")
	// ErrInvalidOwner means the owner is empty or contains a line break.
	ErrInvalidOwner = errors.New("ipam: invalid owner")
	// ErrInvalidRange means the subnet cannot hold any pod address.
	ErrInvalidRange = errors.New("ipam: invalid range")
)

const (
	lastReservedFile = "last_reserved_ip"
	lockFile         = "lock"
)

// Interface is what the node's network code needs from an allocator.
type Interface interface {
	Allocate(owner string) (net.IP, error)
	Release(owner string) error
	Get(owner string) (net.IP, bool, error)
	List() ([]Allocation, error)
}

var _ Interface = (*Store)(nil)

// Allocation is one allocated IP and its owner.
type Allocation struct {
	IP    net.IP
	Owner string
}

// Store is an on-disk IP allocator for one IPv4 subnet.
type Store struct {
	dir   string
	rng   Range
	mu    sync.Mutex
	lockF *os.File
	// hints is each owner's IP as the last scan or allocation saw it
	// (guarded by mu); a hint is used only once its file is read back.
	hints map[string]net.IP
}

// New opens (creating if needed) the allocator directory dir for subnet.
func New(dir string, subnet *net.IPNet) (*Store, error) {
	rng, err := NewRange(subnet)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("ipam: create dir %s: %w", dir, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("ipam: open lock file: %w", err)
	}
	s := &Store{dir: dir, rng: rng, lockF: f, hints: map[string]net.IP{}}
	unlock, err := s.lock()
	if err != nil {
		f.Close()
		return nil, err
	}
	defer unlock()
	// Temporary files left by a crash between create and link/rename.
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".tmp-*"))
	for _, l := range leftovers {
		_ = os.Remove(l)
	}
	return s, nil
}

// Close releases the lock file handle.
func (s *Store) Close() error { return s.lockF.Close() }

// Range returns the allocatable range of the store.
func (s *Store) Range() Range { return s.rng }

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// lock takes the in-process mutex and the cross-process flock.
func (s *Store) lock() (func(), error) {
	s.mu.Lock()
	if err := unix.Flock(int(s.lockF.Fd()), unix.LOCK_EX); err != nil {
		s.mu.Unlock()
		return nil, fmt.Errorf("ipam: flock: %w", err)
	}
	return func() {
		_ = unix.Flock(int(s.lockF.Fd()), unix.LOCK_UN)
		s.mu.Unlock()
	}, nil
}

func validOwner(owner string) error {
	if owner == "" || strings.ContainsAny(owner, "\r\n") {
		return fmt.Errorf("%w: %q", ErrInvalidOwner, owner)
	}
	return nil
}

// Allocate returns an IP for owner. If owner already holds one, that IP is
// returned again, so a retried pod setup keeps its address.
func (s *Store) Allocate(owner string) (net.IP, error) {
	if err := validOwner(owner); err != nil {
		return nil, err
	}
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if ip, ok, err := s.find(owner); err != nil || ok {
		return ip, err
	}
	ip, err := s.allocateNew(owner)
	if err == nil {
		s.hints[owner] = ip
	}
	return ip, err
}

// find returns the IP held by owner (the caller holds the lock): from its
// hint, else from a scan.
func (s *Store) find(owner string) (net.IP, bool, error) {
	if ip, ok := s.owned(owner); ok {
		return ip, true, nil
	}
	held, err := s.scan()
	if err != nil {
		return nil, false, err
	}
	for _, a := range held {
		if a.Owner == owner {
			return a.IP, true, nil
		}
	}
	return nil, false, nil
}

// owned returns owner's IP from its hint when that IP's file still names
// owner (the caller holds the lock): every sync of a running pod asks for
// its IP, and one file read answers where a scan reads every allocation.
func (s *Store) owned(owner string) (net.IP, bool) {
	ip, ok := s.hints[owner]
	if !ok {
		return nil, false
	}
	b, err := os.ReadFile(filepath.Join(s.dir, ip.String()))
	if err != nil || strings.TrimSpace(string(b)) != owner {
		delete(s.hints, owner)
		return nil, false
	}
	return ip, true
}

func (s *Store) allocateNew(owner string) (net.IP, error) {
	start := s.rng.Next(s.lastReserved())
	ip := start
	for {
		ok, err := s.reserve(ip, owner)
		if err != nil {
			return nil, err
		}
		if ok {
			if err := writeFileAtomic(s.dir, lastReservedFile, []byte(ip.String()), true); err != nil {
				return nil, err
			}
			return ip, nil
		}
		ip = s.rng.Next(ip)
		if ip.Equal(start) {
			return nil, fmt.Errorf("%w %s", ErrExhausted, s.rng)
		}
	}
}

// lastReserved reads the marker; a missing or bad marker means "none".
func (s *Store) lastReserved() net.IP {
	b, err := os.ReadFile(filepath.Join(s.dir, lastReservedFile))
	if err != nil {
		return nil
	}
	ip := net.ParseIP(strings.TrimSpace(string(b))).To4()
	if ip == nil || !s.rng.Contains(ip) {
		return nil
	}
	return ip
}

// reserve creates the file for ip unless it exists. It reports whether it did.
func (s *Store) reserve(ip net.IP, owner string) (bool, error) {
	err := writeFileAtomic(s.dir, ip.String(), []byte(owner), false)
	if errors.Is(err, os.ErrExist) {
		return false, nil
	}
	return err == nil, err
}

// Release frees every IP held by owner. Releasing an owner without an IP is
// not an error.
func (s *Store) Release(owner string) error {
	if err := validOwner(owner); err != nil {
		return err
	}
	unlock, err := s.lock()
	if err != nil {
		return err
	}
	defer unlock()
	delete(s.hints, owner)
	held, err := s.scan()
	if err != nil {
		return err
	}
	removed := false
	for _, a := range held {
		if a.Owner != owner {
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, a.IP.String())); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("ipam: release %s of %s: %w", a.IP, owner, err)
		}
		removed = true
	}
	if removed {
		return syncDir(s.dir)
	}
	return nil
}

// Get returns the IP held by owner, if any.
func (s *Store) Get(owner string) (net.IP, bool, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	return s.find(owner)
}

// List returns all allocations ordered by IP.
func (s *Store) List() ([]Allocation, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.scan()
}

// scan reads the allocation files; the caller holds the lock.
func (s *Store) scan() ([]Allocation, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("ipam: read dir %s: %w", s.dir, err)
	}
	var out []Allocation
	for _, e := range entries {
		ip := net.ParseIP(e.Name()).To4()
		if ip == nil || !e.Type().IsRegular() || !s.rng.Contains(ip) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(s.dir, e.Name()))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("ipam: read %s: %w", e.Name(), err)
		}
		out = append(out, Allocation{IP: ip, Owner: strings.TrimSpace(string(b))})
	}
	sort.Slice(out, func(i, j int) bool { return ipToU32(out[i].IP) < ipToU32(out[j].IP) })
	clear(s.hints)
	for _, a := range out {
		if _, ok := s.hints[a.Owner]; !ok {
			s.hints[a.Owner] = a.IP
		}
	}
	return out, nil
}
