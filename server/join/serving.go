package join

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orch/orch/internal/pki"
)

// MaxNodeIPs bounds the addresses one node may put into its serving
// certificate.
const MaxNodeIPs = 16

// parseNodeIPs validates req.NodeIPs: each must be a plain IP address (no
// zone) that is neither unspecified nor multicast, without duplicates, and
// they are only accepted together with a serving CSR. IPv4-mapped IPv6
// addresses are turned into IPv4 ones, as TLS clients compare them so.
func parseNodeIPs(req NodeCertificateRequest) ([]net.IP, error) {
	if req.ServingCSRPEM == "" {
		if len(req.NodeIPs) > 0 {
			return nil, apierrors.NewBadRequest("nodeIPs: only allowed together with servingCSRPEM")
		}
		return nil, nil
	}
	if len(req.NodeIPs) > MaxNodeIPs {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("nodeIPs: %d addresses, at most %d are allowed", len(req.NodeIPs), MaxNodeIPs))
	}
	seen := make(map[netip.Addr]bool, len(req.NodeIPs))
	ips := make([]net.IP, 0, len(req.NodeIPs))
	for i, s := range req.NodeIPs {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		switch {
		case err != nil:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("nodeIPs[%d]: %q is not an IP address", i, s))
		case a.Zone() != "":
			return nil, apierrors.NewBadRequest(fmt.Sprintf("nodeIPs[%d]: %q has a zone, which a certificate cannot hold", i, s))
		case a.IsUnspecified() || a.IsMulticast():
			return nil, apierrors.NewBadRequest(fmt.Sprintf("nodeIPs[%d]: %q is an unspecified or multicast address, not a node address", i, s))
		}
		a = a.Unmap()
		if seen[a] {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("nodeIPs[%d]: %q is given twice", i, s))
		}
		seen[a] = true
		ips = append(ips, net.IP(a.AsSlice()))
	}
	return ips, nil
}

// signServing signs the node's serving CSR, if it sent one. The node only
// gets names of its own: DNS SAN <nodeName> (the name its client
// certificate is issued for) and the IPs it claims. The IPs are taken as
// claimed, not checked against anything: upstream has the same trust model
// for kubernetes.io/kubelet-serving CSRs, whose validation
// (IsKubeletServingCSR) only requires CN system:node:<name>, O system:nodes
// and DNS/IP SANs, and whose approvers accept the addresses the kubelet
// claims. Whoever holds the join secret can already become any node.
func (h *Handler) signServing(req NodeCertificateRequest, ips []net.IP) ([]byte, error) {
	if req.ServingCSRPEM == "" {
		return nil, nil
	}
	certPEM, err := h.ca.SignServingCSR([]byte(req.ServingCSRPEM), NodeUserPrefix+req.NodeName, []string{NodesGroup},
		[]string{req.NodeName}, ips)
	if err != nil {
		if errors.Is(err, pki.ErrInvalidPEM) || errors.Is(err, pki.ErrInvalidSubject) {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("servingCSRPEM: %v", err))
		}
		return nil, apierrors.NewInternalError(fmt.Errorf("signing node serving certificate: %w", err))
	}
	return certPEM, nil
}
