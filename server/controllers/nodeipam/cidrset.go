package nodeipam

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"
)

// maxSubnetBits bounds the bitmap: at most 2^16 subnets, as upstream does.
const maxSubnetBits = 16

var (
	// ErrExhausted means every subnet of the cluster CIDR is taken.
	ErrExhausted = errors.New("no pod CIDRs left in the cluster CIDR")
	// ErrOutOfRange means a subnet is not one of the set's subnets.
	ErrOutOfRange = errors.New("pod CIDR is not a subnet of the cluster CIDR")
)

// CIDRSet is a bitmap of the subnets of one cluster CIDR. It is not safe
// for concurrent use (the controller's single worker owns it).
type CIDRSet struct {
	cluster  netip.Prefix
	maskBits int
	total    int
	used     []bool
	count    int
}

// NewCIDRSet splits cluster into subnets of maskBits bits.
func NewCIDRSet(cluster netip.Prefix, maskBits int) (*CIDRSet, error) {
	cluster = cluster.Masked()
	if !cluster.IsValid() {
		return nil, fmt.Errorf("invalid cluster CIDR %v", cluster)
	}
	diff := maskBits - cluster.Bits()
	if maskBits > cluster.Addr().BitLen() || diff < 0 {
		return nil, fmt.Errorf("node CIDR mask /%d must be between /%d and /%d", maskBits, cluster.Bits(), cluster.Addr().BitLen())
	}
	if diff > maxSubnetBits {
		return nil, fmt.Errorf("node CIDR mask /%d splits %v into more than 2^%d subnets", maskBits, cluster, maxSubnetBits)
	}
	n := 1 << diff
	return &CIDRSet{cluster: cluster, maskBits: maskBits, total: n, used: make([]bool, n)}, nil
}

// Free returns the number of unallocated subnets.
func (s *CIDRSet) Free() int { return s.total - s.count }

// AllocateNext takes the lowest free subnet, so a released subnet is
// reused first and allocations stay compact and predictable. (Upstream
// searches round robin; here the deleted Node's routes are withdrawn by the
// agents' watch before the new Node's appear, in watch order.)
func (s *CIDRSet) AllocateNext() (netip.Prefix, error) {
	for idx, used := range s.used {
		if !used {
			s.used[idx], s.count = true, s.count+1
			return s.subnet(idx), nil
		}
	}
	return netip.Prefix{}, fmt.Errorf("%w: all %d subnets /%d of %v are in use", ErrExhausted, s.total, s.maskBits, s.cluster)
}

// Occupy marks p as used; it reports whether p was free before.
func (s *CIDRSet) Occupy(p netip.Prefix) (bool, error) {
	idx, err := s.index(p)
	if err != nil {
		return false, err
	}
	if s.used[idx] {
		return false, nil
	}
	s.used[idx], s.count = true, s.count+1
	return true, nil
}

// Release marks p as free.
func (s *CIDRSet) Release(p netip.Prefix) error {
	idx, err := s.index(p)
	if err != nil {
		return err
	}
	if s.used[idx] {
		s.used[idx], s.count = false, s.count-1
	}
	return nil
}

func (s *CIDRSet) index(p netip.Prefix) (int, error) {
	if p.Bits() != s.maskBits || p.Masked() != p || !s.cluster.Contains(p.Addr()) {
		return 0, fmt.Errorf("%w: %v is not a /%d inside %v", ErrOutOfRange, p, s.maskBits, s.cluster)
	}
	off := new(big.Int).Sub(addrInt(p.Addr()), addrInt(s.cluster.Addr()))
	return int(off.Rsh(off, uint(p.Addr().BitLen()-s.maskBits)).Int64()), nil
}

func (s *CIDRSet) subnet(idx int) netip.Prefix {
	bits := s.cluster.Addr().BitLen()
	off := new(big.Int).Lsh(big.NewInt(int64(idx)), uint(bits-s.maskBits))
	v := off.Add(off, addrInt(s.cluster.Addr()))
	buf := make([]byte, bits/8)
	v.FillBytes(buf)
	a, _ := netip.AddrFromSlice(buf)
	return netip.PrefixFrom(a, s.maskBits)
}

func addrInt(a netip.Addr) *big.Int { return new(big.Int).SetBytes(a.AsSlice()) }
