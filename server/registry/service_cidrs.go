package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/orch/orch/datastore"
)

// serviceCIDRsPrefix is where networking.k8s.io ServiceCIDR objects are
// stored.
const serviceCIDRsPrefix = "/registry/networking.k8s.io/servicecidrs/"

// extraRanges are the ranges of the ServiceCIDRs (not being deleted) of the
// allocator's family other than the configured range: ClusterIPs may come
// from them too, as from upstream's ServiceCIDRs. Sorted by ServiceCIDR name.
func (a *serviceAllocator) extraRanges(ctx context.Context, store datastore.Store) ([]ipRange, error) {
	res, err := store.List(ctx, serviceCIDRsPrefix, "", 0)
	if err != nil {
		return nil, fmt.Errorf("listing ServiceCIDRs: %w", err)
	}
	sort.Slice(res.KVs, func(i, j int) bool { return res.KVs[i].Key < res.KVs[j].Key })
	var out []ipRange
	for _, kv := range res.KVs {
		var sc struct {
			Metadata struct {
				DeletionTimestamp *string `json:"deletionTimestamp"`
			} `json:"metadata"`
			Spec struct {
				CIDRs []string `json:"cidrs"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(kv.Value, &sc); err != nil {
			return nil, fmt.Errorf("decoding ServiceCIDR %s: %w", kv.Key, err)
		}
		if sc.Metadata.DeletionTimestamp != nil {
			continue // no new addresses from a ServiceCIDR on its way out
		}
		for _, c := range sc.Spec.CIDRs {
			_, n, err := net.ParseCIDR(c)
			if err != nil || n.String() == a.ips.cidr.String() {
				continue
			}
			if r := newIPRange(n); r.family == a.ips.family && r.size > 0 {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// rangeOf returns the range an address may be allocated from: the
// configured one or a ServiceCIDR's; false when none holds it.
func (a *serviceAllocator) rangeOf(ctx context.Context, store datastore.Store, ip net.IP) (bool, []ipRange, error) {
	if _, ok := a.ips.offset(ip); ok {
		return true, nil, nil
	}
	extra, err := a.extraRanges(ctx, store)
	if err != nil {
		return false, nil, err
	}
	for _, r := range extra {
		if _, ok := r.offset(ip); ok {
			return true, extra, nil
		}
	}
	return false, extra, nil
}

// notInRange is the error of an address no range holds.
func (a *serviceAllocator) notInRange(svc *corev1.Service, extra []ipRange) error {
	cidrs := []string{a.ips.cidr.String()}
	for _, r := range extra {
		cidrs = append(cidrs, r.cidr.String())
	}
	req := svc.Spec.ClusterIP
	return invalidService(svc, field.NewPath("spec", "clusterIPs").Index(0), req, fmt.Sprintf(
		"failed to allocate IP %s: the provided IP (%s) is not in the valid range. The range of valid IPs is %s", req, req, strings.Join(cidrs, ",")))
}

// randomFromExtra picks a free address of the ServiceCIDRs' ranges, once
// the configured range is full.
func (a *serviceAllocator) randomFromExtra(ctx context.Context, store datastore.Store) (string, bool, error) {
	extra, err := a.extraRanges(ctx, store)
	if err != nil {
		return "", false, err
	}
	for _, r := range extra {
		off, ok, err := probe(ctx, r.size, func(int64) bool { return false }, func(off int64) (bool, error) {
			return ipFree(ctx, store, r.at(off).String())
		})
		if err != nil {
			return "", false, err
		}
		if ok {
			return r.at(off).String(), true, nil
		}
	}
	return "", false, nil
}
