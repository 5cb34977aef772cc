package netpol

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// fakeBackend is an in-memory filter table: it understands the
// iptables-restore input this package writes and the FORWARD jump calls.
type fakeBackend struct {
	mu       sync.Mutex
	chains   map[string][]string // user chains → "-A ..." lines
	forward  []string            // FORWARD rules as `iptables -S` lines
	restores int
}

var _ backend = (*fakeBackend)(nil)

func newFakeBackend() *fakeBackend { return &fakeBackend{chains: map[string][]string{}} }

func (f *fakeBackend) Restore(input []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.restores++
	for _, l := range strings.Split(string(input), "\n") {
		switch {
		case strings.HasPrefix(l, ":"):
			f.chains[strings.Fields(l[1:])[0]] = nil
		case strings.HasPrefix(l, "-A "):
			c := strings.Fields(l)[1]
			if _, ok := f.chains[c]; !ok {
				return fmt.Errorf("fake restore: chain %s not declared", c)
			}
			f.chains[c] = append(f.chains[c], l)
		case strings.HasPrefix(l, "-X "):
			delete(f.chains, strings.TrimPrefix(l, "-X "))
		}
	}
	return nil
}

func (f *fakeBackend) Chains() ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []string{"INPUT", "FORWARD", "OUTPUT"}
	for c := range f.chains {
		out = append(out, c)
	}
	slices.Sort(out)
	return out, nil
}

func (f *fakeBackend) Rules(chain string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if chain != "FORWARD" {
		return append([]string{"-N " + chain}, f.chains[chain]...), nil
	}
	return append([]string{"-P FORWARD ACCEPT"}, f.forward...), nil
}

func ruleLine(chain string, rule []string) string {
	parts := slices.Clone(rule)
	for i, p := range parts {
		if strings.Contains(p, " ") {
			parts[i] = `"` + p + `"`
		}
	}
	return "-A " + chain + " " + strings.Join(parts, " ")
}

func (f *fakeBackend) Insert(chain string, pos int, rule []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if chain != "FORWARD" {
		return fmt.Errorf("fake: only FORWARD")
	}
	f.forward = slices.Insert(f.forward, pos-1, ruleLine(chain, rule))
	return nil
}

func (f *fakeBackend) DeleteIfExists(chain string, rule []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.Index(f.forward, ruleLine(chain, rule)); i >= 0 {
		f.forward = slices.Delete(f.forward, i, i+1)
	}
	return nil
}

// chain returns a copy of a chain's rules and whether it exists.
func (f *fakeBackend) chain(name string) ([]string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.chains[name]
	return slices.Clone(r), ok
}
