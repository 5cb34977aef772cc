package netpol

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/coreos/go-iptables/iptables"
)

// backend is the filter table as this package uses it.
type backend interface {
	// Restore applies an iptables-restore --noflush input atomically.
	Restore(input []byte) error
	// Chains lists the filter table's chains.
	Chains() ([]string, error)
	// Rules lists a filter chain's rules as `iptables -S` prints them.
	Rules(chain string) ([]string, error)
	// Insert puts rule at position pos (1 = first) of a filter chain.
	Insert(chain string, pos int, rule []string) error
	// DeleteIfExists deletes one copy of rule from a filter chain.
	DeleteIfExists(chain string, rule []string) error
}

// host is the real backend: <cmd>-restore and go-iptables.
type host struct {
	cmd string
	ipt *iptables.IPTables
}

var _ backend = (*host)(nil)

func newHost(cmd string) (*host, error) {
	path := cmd
	if p, err := exec.LookPath(cmd); err == nil {
		path = p
	}
	ipt, err := iptables.New(iptables.Path(path))
	if err != nil {
		return nil, fmt.Errorf("iptables (%s): %w", cmd, err)
	}
	return &host{cmd: cmd, ipt: ipt}, nil
}

// ErrRestore is returned when iptables-restore rejects the rules.
var ErrRestore = errors.New("iptables-restore failed")

func (h *host) Restore(input []byte) error {
	c := exec.Command(h.cmd+"-restore", "-w", "5", "--noflush")
	c.Stdin = bytes.NewReader(input)
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s: %v: %s", ErrRestore, c.Path, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (h *host) Chains() ([]string, error) {
	out, err := h.ipt.ListChains("filter")
	if err != nil {
		return nil, fmt.Errorf("listing filter chains: %w", err)
	}
	return out, nil
}

func (h *host) Rules(chain string) ([]string, error) {
	out, err := h.ipt.List("filter", chain)
	if err != nil {
		return nil, fmt.Errorf("listing filter/%s: %w", chain, err)
	}
	return out, nil
}

func (h *host) Insert(chain string, pos int, rule []string) error {
	if err := h.ipt.Insert("filter", chain, pos, rule...); err != nil {
		return fmt.Errorf("inserting into filter/%s: %w", chain, err)
	}
	return nil
}

func (h *host) DeleteIfExists(chain string, rule []string) error {
	if err := h.ipt.DeleteIfExists("filter", chain, rule...); err != nil {
		return fmt.Errorf("deleting from filter/%s: %w", chain, err)
	}
	return nil
}
