package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/coreos/go-iptables/iptables"
)

// backend is the kernel's iptables as the proxy uses it.
type backend interface {
	// Restore applies an iptables-restore --noflush input atomically per table.
	Restore(input []byte) error
	// Save returns iptables-save's output for a table.
	Save(table string) ([]byte, error)
	// EnsureJump puts r first in table/chain unless it is there already.
	EnsureJump(j jump) error
	// DeleteJump removes every copy of r from table/chain.
	DeleteJump(j jump) error
	HasRandomFully() bool
	// NFT reports whether iptables is the nf_tables variant, whose
	// restore takes the chain-cache hint (see cacheHint).
	NFT() bool
}

// jump is a rule in a built-in chain leading to one of the proxy's chains.
type jump struct {
	table, from string
	rule        []string
}

// host is the real backend: <cmd>-restore/-save and go-iptables.
type host struct {
	cmd string // iptables, iptables-nft or iptables-legacy (or a path)
	ipt *iptables.IPTables
	nft bool
}

var _ backend = (*host)(nil)

func newHost(cmd string) (*host, error) {
	ipt, err := iptables.New(iptables.Path(mustLook(cmd)))
	if err != nil {
		return nil, fmt.Errorf("iptables (%s): %w", cmd, err)
	}
	out, err := exec.Command(mustLook(cmd), "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", cmd, err)
	}
	return &host{cmd: cmd, ipt: ipt, nft: bytes.Contains(out, []byte("nf_tables"))}, nil
}

func mustLook(cmd string) string {
	if p, err := exec.LookPath(cmd); err == nil {
		return p
	}
	return cmd
}

// ErrRestore is returned when iptables-restore rejects the rules.
var ErrRestore = errors.New("iptables-restore failed")

func (h *host) Restore(input []byte) error {
	c := exec.Command(h.cmd+"-restore", "-w", "5", "--noflush")
	c.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	c.Stderr = &stderr // stdout (a cache hint's listing) is dropped
	if err := c.Run(); err != nil {
		return fmt.Errorf("%w: %s: %v: %s", ErrRestore, c.Path, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

func (h *host) Save(table string) ([]byte, error) {
	out, err := exec.Command(h.cmd+"-save", "-t", table).Output()
	if err != nil {
		return nil, fmt.Errorf("%s-save -t %s: %w", h.cmd, table, err)
	}
	return out, nil
}

// saved is what the proxy reads from save output: the chains, the rules
// of the built-in chains (where its jumps are) and each chain's number of
// rules.
type saved struct {
	chains  []string
	builtin map[string]bool // "-A PREROUTING ..." lines
	rules   map[string]int
}

var builtinChains = []string{"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"}

func parseSave(out []byte) saved {
	s := saved{builtin: map[string]bool{}, rules: map[string]int{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, ":"); ok {
			if i := strings.IndexByte(name, ' '); i > 0 {
				s.chains = append(s.chains, name[:i])
			}
			continue
		}
		if rest, ok := strings.CutPrefix(line, "-A "); ok {
			if i := strings.IndexByte(rest, ' '); i > 0 {
				s.rules[rest[:i]]++
			}
		}
		for _, b := range builtinChains {
			if strings.HasPrefix(line, "-A "+b+" ") {
				s.builtin[line] = true
			}
		}
	}
	return s
}

func (h *host) EnsureJump(j jump) error {
	ok, err := h.ipt.Exists(j.table, j.from, j.rule...)
	if err != nil {
		return fmt.Errorf("iptables check %s/%s: %w", j.table, j.from, err)
	}
	if ok {
		return nil
	}
	if err := h.ipt.Insert(j.table, j.from, 1, j.rule...); err != nil {
		return fmt.Errorf("iptables insert into %s/%s: %w", j.table, j.from, err)
	}
	return nil
}

func (h *host) DeleteJump(j jump) error {
	for {
		ok, err := h.ipt.Exists(j.table, j.from, j.rule...)
		if err != nil {
			var ie *iptables.Error
			if errors.As(err, &ie) && ie.IsNotExist() { // target chain gone: no such rule
				return nil
			}
			return fmt.Errorf("iptables check %s/%s: %w", j.table, j.from, err)
		}
		if !ok {
			return nil
		}
		if err := h.ipt.Delete(j.table, j.from, j.rule...); err != nil {
			return fmt.Errorf("iptables delete from %s/%s: %w", j.table, j.from, err)
		}
	}
}

func (h *host) HasRandomFully() bool { return h.ipt.HasRandomFully() }

func (h *host) NFT() bool { return h.nft }
