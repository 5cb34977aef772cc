package agent

import (
	"context"
	"fmt"
	"net"

	"go.uber.org/zap"
	"k8s.io/client-go/kubernetes"

	"github.com/orch/orch/agent/overlay"
)

// startOverlay programs the routes to the other nodes' pod subnets
// (--network-backend vxlan or host-gw) and keeps them in step with the
// Nodes; the returned func stops watching and leaves the routes in place.
func startOverlay(ctx context.Context, cfg Config, log *zap.Logger, client kubernetes.Interface, ip net.IP, podCIDR string) (func(), error) {
	o, err := overlay.New(overlay.Config{Backend: cfg.NetworkBackend, NodeName: cfg.NodeName, NodeIP: ip,
		PodCIDR: podCIDR, Device: cfg.VXLANDevice, Client: client, Log: log})
	if err != nil {
		return nil, fmt.Errorf("pod network overlay: %w", err)
	}
	if err := o.Start(ctx); err != nil {
		return nil, fmt.Errorf("pod network overlay: %w", err)
	}
	return o.Stop, nil
}

// podMTU is the MTU of pod interfaces: the underlay's minus the VXLAN
// header with the vxlan backend (as flannel), the underlay's with host-gw.
// 0 (the default route's link MTU) when the node has no overlay (a
// loopback node IP) or the underlay cannot be found.
func podMTU(cfg Config, ip net.IP, log *zap.Logger) int {
	if ip.IsLoopback() {
		return 0
	}
	mtu, err := overlay.PodMTU(cfg.NetworkBackend, ip)
	if err != nil {
		log.Warn("pod MTU: using the default route's", zap.Error(err))
		return 0
	}
	return mtu
}
