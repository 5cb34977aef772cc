package node

import (
	"bufio"
	"fmt"
	"net"
	"os"
	goruntime "runtime"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// MaxPods is the pods capacity of every node, kubelet's default.
const MaxPods = 110

// Reservation is what the node keeps for the system and orch itself; it is
// subtracted from capacity to give allocatable.
var Reservation = corev1.ResourceList{
	corev1.ResourceCPU:              resource.MustParse("100m"),
	corev1.ResourceMemory:           resource.MustParse("256Mi"),
	corev1.ResourceEphemeralStorage: resource.MustParse("1Gi"),
}

// HostCapacity reads cpu, memory and the ephemeral storage of the filesystem
// holding dataDir, and sets pods to MaxPods.
func HostCapacity(dataDir string) (corev1.ResourceList, error) {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return nil, fmt.Errorf("sysinfo: %w", err)
	}
	mem := int64(si.Totalram) * int64(si.Unit)
	var st unix.Statfs_t
	if err := unix.Statfs(dataDir, &st); err != nil {
		return nil, fmt.Errorf("statfs %s: %w", dataDir, err)
	}
	disk := int64(st.Blocks) * int64(st.Bsize) // Bsize is int32 on 32-bit ARM
	return corev1.ResourceList{
		corev1.ResourceCPU:              *resource.NewQuantity(int64(goruntime.NumCPU()), resource.DecimalSI),
		corev1.ResourceMemory:           *resource.NewQuantity(mem, resource.BinarySI),
		corev1.ResourceEphemeralStorage: *resource.NewQuantity(disk, resource.BinarySI),
		corev1.ResourcePods:             *resource.NewQuantity(MaxPods, resource.DecimalSI),
	}, nil
}

// Allocatable is capacity minus the reservation, never below zero.
func Allocatable(capacity, reserved corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range capacity {
		a := q.DeepCopy()
		if r, ok := reserved[name]; ok {
			a.Sub(r)
			if a.Sign() < 0 {
				a = *resource.NewQuantity(0, q.Format)
			}
		}
		out[name] = a
	}
	return out
}

// DefaultRouteIP returns the source address of the host's default IPv4
// route (the address other nodes reach this one at).
func DefaultRouteIP() (net.IP, error) {
	routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
	if err != nil {
		return nil, fmt.Errorf("listing routes: %w", err)
	}
	for _, r := range routes {
		if r.Dst != nil && !r.Dst.IP.IsUnspecified() {
			continue
		}
		if r.Src != nil {
			return r.Src, nil
		}
		link, err := netlink.LinkByIndex(r.LinkIndex)
		if err != nil {
			continue
		}
		addrs, err := netlink.AddrList(link, netlink.FAMILY_V4)
		if err == nil && len(addrs) > 0 {
			return addrs[0].IP, nil
		}
	}
	return nil, fmt.Errorf("no default IPv4 route: give --node-ip")
}

// OSImage is PRETTY_NAME of /etc/os-release, or "Linux".
func OSImage(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return "Linux"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return "Linux"
}

// KernelVersion is uname -r.
func KernelVersion() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}
