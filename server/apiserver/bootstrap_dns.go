package apiserver

import (
	"context"
	"errors"
	"net"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/orch/orch/datastore"
)

const (
	dnsServiceName = "kube-dns"
	// dnsProxyName is the service-proxy-name label value that makes Service
	// proxies (orch's and kube-proxy) leave kube-dns alone: every agent
	// answers its ClusterIP itself (package agent/dns).
	dnsProxyName = "orch-dns"
)

// ensureDNSService creates the kube-dns Service in kube-system with the
// cluster DNS IP, as k3s's CoreDNS manifest does, without a selector: no
// pod backs it. An existing one keeps its ClusterIP (immutable) and gets
// its ports and labels back. A ClusterIP already taken by another Service
// is logged and skipped, so bootstrap is not blocked by it.
func (s *Server) ensureDNSService(ctx context.Context) error {
	res := findResource(s.cfg.Resources, "", "services")
	if res == nil || s.cfg.ServiceCIDR == nil {
		return nil
	}
	want := s.dnsService()
	created, err := s.createIfAbsent(ctx, res, want.DeepCopy(), nil)
	if errors.Is(err, datastore.ErrKeyExists) || apierrors.IsInvalid(err) {
		s.log.Error("bootstrap: kube-dns cannot have the cluster DNS IP (taken by another Service?); not created",
			zap.String("clusterIP", want.Spec.ClusterIP), zap.Error(err))
		return nil
	}
	if err != nil || created {
		if created {
			s.log.Info("bootstrap: created the kube-dns Service", zap.String("clusterIP", want.Spec.ClusterIP))
		}
		return err
	}
	return s.updateIfChanged(ctx, res, metav1.NamespaceSystem, dnsServiceName, func(o runtime.Object) bool {
		cur := o.(*corev1.Service)
		if cur.Spec.ClusterIP != want.Spec.ClusterIP {
			s.log.Warn("bootstrap: kube-dns has another ClusterIP than --cluster-dns; delete it to recreate it",
				zap.String("clusterIP", cur.Spec.ClusterIP), zap.String("clusterDNS", want.Spec.ClusterIP))
		}
		changed := false
		for k, v := range want.Labels {
			if cur.Labels[k] != v {
				if cur.Labels == nil {
					cur.Labels = map[string]string{}
				}
				cur.Labels[k], changed = v, true
			}
		}
		if !apiequality.Semantic.DeepEqual(cur.Spec.Ports, want.Spec.Ports) {
			cur.Spec.Ports, changed = want.Spec.Ports, true
		}
		return changed
	})
}

func (s *Server) dnsService() *corev1.Service {
	ip := s.clusterDNSIP()
	family := corev1.IPv4Protocol
	if ip.To4() == nil {
		family = corev1.IPv6Protocol
	}
	single := corev1.IPFamilyPolicySingleStack
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: dnsServiceName, Namespace: metav1.NamespaceSystem,
			Labels: map[string]string{"k8s-app": "kube-dns", "kubernetes.io/cluster-service": "true",
				"kubernetes.io/name": "orch-dns", "service.kubernetes.io/service-proxy-name": dnsProxyName}},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP, ClusterIP: ip.String(), ClusterIPs: []string{ip.String()},
			Ports: []corev1.ServicePort{
				{Name: "dns", Protocol: corev1.ProtocolUDP, Port: 53, TargetPort: intstr.FromInt32(53)},
				{Name: "dns-tcp", Protocol: corev1.ProtocolTCP, Port: 53, TargetPort: intstr.FromInt32(53)},
			},
			SessionAffinity: corev1.ServiceAffinityNone,
			IPFamilies:      []corev1.IPFamily{family}, IPFamilyPolicy: &single,
		},
	}
}

// clusterDNSIP is Config.ClusterDNS, else the 10th address of the service
// CIDR (10.43.0.0/16 -> 10.43.0.10), k3s's default.
func (s *Server) clusterDNSIP() net.IP {
	if s.cfg.ClusterDNS != nil {
		if v4 := s.cfg.ClusterDNS.To4(); v4 != nil {
			return v4
		}
		return s.cfg.ClusterDNS
	}
	ip := firstIP(s.cfg.ServiceCIDR)
	ip[len(ip)-1] += 9
	return ip
}
