package ipam

import (
	"encoding/binary"
	"fmt"
	"net"
)

// Range is the allocatable part of an IPv4 subnet: from the address after the
// gateway (network+1) up to the address before broadcast.
type Range struct {
	Subnet  net.IPNet
	Gateway net.IP
	first   uint32
	last    uint32
}

// NewRange computes the range of subnet; it must be IPv4 and /29 or larger
// (smaller subnets leave no more than a handful of pod addresses).
func NewRange(subnet *net.IPNet) (Range, error) {
	if subnet == nil || subnet.IP.To4() == nil {
		return Range{}, fmt.Errorf("%w: %v is not an IPv4 subnet", ErrInvalidRange, subnet)
	}
	ones, bits := subnet.Mask.Size()
	if bits != 32 || ones > 29 {
		return Range{}, fmt.Errorf("%w: %v must be an IPv4 /29 or larger", ErrInvalidRange, subnet)
	}
	network := ipToU32(subnet.IP.To4()) & binary.BigEndian.Uint32(subnet.Mask)
	size := uint32(1) << uint(32-ones)
	r := Range{
		Subnet:  net.IPNet{IP: u32ToIP(network), Mask: subnet.Mask},
		Gateway: u32ToIP(network + 1),
		first:   network + 2,
		last:    network + size - 2,
	}
	return r, nil
}

// Size is the number of allocatable addresses.
func (r Range) Size() int { return int(r.last - r.first + 1) }

// Contains reports whether ip is allocatable.
func (r Range) Contains(ip net.IP) bool {
	v4 := ip.To4()
	if v4 == nil {
		return false
	}
	u := ipToU32(v4)
	return u >= r.first && u <= r.last
}

// Next returns the allocatable address after ip, wrapping around; for nil or
// an address outside the range it returns the first one.
func (r Range) Next(ip net.IP) net.IP {
	if ip == nil || !r.Contains(ip) {
		return u32ToIP(r.first)
	}
	u := ipToU32(ip.To4())
	if u >= r.last {
		return u32ToIP(r.first)
	}
	return u32ToIP(u + 1)
}

func (r Range) String() string {
	return fmt.Sprintf("%s (%s-%s)", r.Subnet.String(), u32ToIP(r.first), u32ToIP(r.last))
}

func ipToU32(ip net.IP) uint32 { return binary.BigEndian.Uint32(ip.To4()) }

func u32ToIP(u uint32) net.IP {
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, u)
	return ip
}
