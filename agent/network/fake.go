package network

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"sync"

	"github.com/orch/orch/agent/ipam"
)

// Interface is what the pod runtime needs from the node network: the seam
// between the agent's pod lifecycle and the host. Fake is its in-memory twin.
type Interface interface {
	SetupPod(ctx context.Context, pod PodNet) (*PodNetStatus, error)
	TeardownPod(ctx context.Context, podID string) error
	NetnsPath(podID string) string
	PodIDs() ([]string, error)
}

var (
	_ Interface = (*Manager)(nil)
	_ Interface = (*Fake)(nil)
)

// Fake is an in-memory Interface for unit tests of code above this package:
// it hands out addresses from the range and touches nothing on the host.
type Fake struct {
	mu   sync.Mutex
	rng  ipam.Range
	pods map[string]*PodNetStatus
	next net.IP
	// SetupErr, when set, is returned by SetupPod.
	SetupErr error
}

// NewFake returns a Fake for podCIDR (e.g. "10.42.0.0/24").
func NewFake(podCIDR string) (*Fake, error) {
	_, n, err := net.ParseCIDR(podCIDR)
	if err != nil {
		return nil, fmt.Errorf("fake network: %w", err)
	}
	rng, err := ipam.NewRange(n)
	if err != nil {
		return nil, err
	}
	return &Fake{rng: rng, pods: map[string]*PodNetStatus{}}, nil
}

// SetupPod records the pod and returns a status with the next free address.
func (f *Fake) SetupPod(_ context.Context, pod PodNet) (*PodNetStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.SetupErr != nil {
		return nil, f.SetupErr
	}
	if st, ok := f.pods[pod.ID]; ok {
		return st, nil
	}
	if len(f.pods) >= f.rng.Size() {
		return nil, ipam.ErrExhausted
	}
	for {
		f.next = f.rng.Next(f.next)
		if !f.inUse(f.next) {
			break
		}
	}
	st := &PodNetStatus{ID: pod.ID, NetnsPath: f.NetnsPath(pod.ID), Interface: PodInterface,
		IP: &net.IPNet{IP: f.next, Mask: f.rng.Subnet.Mask}, Gateway: f.rng.Gateway,
		HostVeth: HostVethName(pod.ID), Hostname: pod.Hostname}
	f.pods[pod.ID] = st
	return st, nil
}

func (f *Fake) inUse(ip net.IP) bool {
	for _, st := range f.pods {
		if st.IP.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// TeardownPod forgets the pod; unknown pods are success.
func (f *Fake) TeardownPod(_ context.Context, podID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.pods, podID)
	return nil
}

// NetnsPath returns a path under the default netns dir; nothing exists there.
func (f *Fake) NetnsPath(podID string) string {
	return filepath.Join(DefaultNetnsDir, DefaultNetnsPrefix+idHash(podID)[:12])
}

// PodIDs lists the recorded pods.
func (f *Fake) PodIDs() ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ids := make([]string, 0, len(f.pods))
	for id := range f.pods {
		ids = append(ids, id)
	}
	return ids, nil
}
