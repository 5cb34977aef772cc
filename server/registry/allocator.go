package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"net"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/datastore"
)

// Key prefixes of the allocation records. A record exists for every ClusterIP
// and NodePort in use; creating it in the same transaction as the Service is
// what makes a value unique cluster-wide.
const (
	ServiceIPsPrefix       = "/registry/ranges/serviceips/"
	ServiceNodePortsPrefix = "/registry/ranges/servicenodeports/"
)

// ErrRangeFull is wrapped by allocation errors when no free value is left.
var ErrRangeFull = errors.New("range is full")

// allocError is a Kubernetes status error that also unwraps to its cause,
// so the API layer can answer with its Status and callers can errors.Is it.
type allocError struct {
	*apierrors.StatusError
	cause error
}

func (e *allocError) Unwrap() error { return e.cause }

func rangeFull(what string) error {
	err := fmt.Errorf("failed to allocate a %s: %w", what, ErrRangeFull)
	return &allocError{StatusError: apierrors.NewInternalError(err), cause: err}
}

func invalidService(svc *corev1.Service, p *field.Path, v interface{}, msg string) error {
	return apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, svc.Name, field.ErrorList{field.Invalid(p, v, msg)})
}

// allocRecord is the value stored under an allocation key.
type allocRecord struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
}

func recordValue(svc *corev1.Service) []byte {
	b, _ := json.Marshal(allocRecord{Namespace: svc.Namespace, Name: svc.Name, UID: string(svc.UID)})
	return b
}

// ipRange is the set of allocatable addresses of a CIDR: offset 0 is the
// first address after the network address; the IPv4 broadcast address is excluded.
type ipRange struct {
	cidr   *net.IPNet
	base   *big.Int // network address + 1
	size   int64
	family corev1.IPFamily
}

func newIPRange(cidr *net.IPNet) ipRange {
	ones, bits := cidr.Mask.Size()
	r := ipRange{cidr: cidr, family: corev1.IPv4Protocol}
	ip := cidr.IP.To4()
	hostBits := bits - ones
	if ip == nil {
		ip, r.family = cidr.IP.To16(), corev1.IPv6Protocol
	}
	if hostBits > 20 && r.family == corev1.IPv6Protocol {
		hostBits = 20 // upstream caps IPv6 service ranges at /108
	}
	r.base = new(big.Int).Add(new(big.Int).SetBytes(ip), big.NewInt(1))
	r.size = (int64(1) << hostBits) - 1 // minus the network address
	if r.family == corev1.IPv4Protocol {
		r.size-- // and the broadcast address
	}
	return r
}

func (r ipRange) at(offset int64) net.IP {
	v := new(big.Int).Add(r.base, big.NewInt(offset)).Bytes()
	n := 4
	if r.family == corev1.IPv6Protocol {
		n = 16
	}
	out := make(net.IP, n)
	copy(out[n-len(v):], v)
	return out
}

// offset returns ip's offset, false when ip is outside the allocatable range.
func (r ipRange) offset(ip net.IP) (int64, bool) {
	if r.family == corev1.IPv4Protocol {
		ip = ip.To4()
	}
	if ip == nil || !r.cidr.Contains(ip) {
		return 0, false
	}
	off := new(big.Int).Sub(new(big.Int).SetBytes(ip), r.base)
	if off.Sign() < 0 || !off.IsInt64() || off.Int64() >= r.size {
		return 0, false
	}
	return off.Int64(), true
}

type portRange struct{ base, size int }

// staticBand is how many values at the start of a range random allocation
// avoids while it can, leaving them to explicit requests (upstream's
// static/dynamic split: size/16 clamped to [16, 256]).
func staticBand(size int64) int64 {
	b := min(max(size/16, 16), 256)
	return min(b, size)
}

// probe looks for a free value: first in the dynamic band from a random
// start, then in the static band. skip(off) excludes offsets; free checks the store.
func probe(ctx context.Context, size int64, skip func(int64) bool, free func(int64) (bool, error)) (int64, bool, error) {
	band := staticBand(size)
	try := func(lo, hi int64) (int64, bool, error) {
		if hi <= lo {
			return 0, false, nil
		}
		start := lo + rand.Int64N(hi-lo)
		for i := int64(0); i < hi-lo; i++ {
			off := lo + (start-lo+i)%(hi-lo)
			if skip(off) {
				continue
			}
			ok, err := free(off)
			if err != nil || ok {
				return off, ok, err
			}
			if err := ctx.Err(); err != nil {
				return 0, false, err
			}
		}
		return 0, false, nil
	}
	if off, ok, err := try(band, size); ok || err != nil {
		return off, ok, err
	}
	return try(0, band)
}

func keyFree(ctx context.Context, store datastore.Store, key string) (bool, error) {
	_, err := store.Get(ctx, key)
	switch {
	case errors.Is(err, datastore.ErrNotFound):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("checking allocation %s: %w", key, err)
	}
	return false, nil
}

// ipAddressesPrefix is where networking.k8s.io IPAddress objects are
// stored (their name is the address).
const ipAddressesPrefix = "/registry/networking.k8s.io/ipaddresses/"

// ipManagedBy is the ipaddress.kubernetes.io/managed-by label of the
// IPAddresses that mirror ClusterIPs (server/controllers/servicecidr).
const ipManagedBy = "ipallocator.k8s.io"

// ipFree reports whether a ClusterIP may be handed out: no Service holds a
// record for it and no IPAddress object that is not a ClusterIP mirror
// claims it (upstream's allocator treats every IPAddress as taken).
func ipFree(ctx context.Context, store datastore.Store, ip string) (bool, error) {
	if ok, err := keyFree(ctx, store, ipKey(ip)); err != nil || !ok {
		return ok, err
	}
	kv, err := store.Get(ctx, ipAddressesPrefix+ip)
	switch {
	case errors.Is(err, datastore.ErrNotFound):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("checking IPAddress %s: %w", ip, err)
	}
	var obj struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(kv.Value, &obj); err != nil {
		return false, fmt.Errorf("decoding IPAddress %s: %w", ip, err)
	}
	return obj.Metadata.Labels["ipaddress.kubernetes.io/managed-by"] == ipManagedBy, nil
}

func ipKey(ip string) string    { return ServiceIPsPrefix + ip }
func portKey(port int32) string { return ServiceNodePortsPrefix + strconv.Itoa(int(port)) }
