package apiserver

import (
	"context"
	"slices"

	"go.uber.org/zap"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DefaultServiceCIDRName is the ServiceCIDR kube-apiserver keeps for its
// --service-cluster-ip-range (orch's --service-cidr).
const DefaultServiceCIDRName = "kubernetes"

// ensureDefaultServiceCIDR creates the default ServiceCIDR, Ready, when it
// is missing. An existing one that disagrees with --service-cidr is left
// alone with a warning, as kube-apiserver does: ServiceCIDRs are immutable.
func (s *Server) ensureDefaultServiceCIDR(ctx context.Context) error {
	res := findResource(s.cfg.Resources, networkingv1.GroupName, "servicecidrs")
	if res == nil {
		return nil
	}
	cidrs := []string{s.cfg.ServiceCIDR.String()}
	obj := &networkingv1.ServiceCIDR{ObjectMeta: metav1.ObjectMeta{Name: DefaultServiceCIDRName},
		Spec: networkingv1.ServiceCIDRSpec{CIDRs: cidrs}}
	created, err := s.createIfAbsent(ctx, res, obj, func(o runtime.Object) {
		meta.SetStatusCondition(&o.(*networkingv1.ServiceCIDR).Status.Conditions, metav1.Condition{
			Type: networkingv1.ServiceCIDRConditionReady, Status: metav1.ConditionTrue,
			Message: "Kubernetes Service CIDR is ready"})
	})
	if err != nil || created {
		if created {
			s.log.Info("bootstrap: created the default ServiceCIDR", zap.Strings("cidrs", cidrs))
		}
		return err
	}
	kv, err := s.cfg.Store.Get(ctx, res.Key("", DefaultServiceCIDRName))
	if err != nil {
		return nil // deleted meanwhile: the next start creates it again
	}
	cur, err := decodeStored(res, kv)
	if err != nil {
		return err
	}
	if have := cur.(*networkingv1.ServiceCIDR).Spec.CIDRs; !slices.Equal(have, cidrs) {
		s.log.Warn("bootstrap: the default ServiceCIDR does not match --service-cidr and is kept as it is (ServiceCIDRs are immutable)",
			zap.Strings("serviceCIDR", have), zap.Strings("flag", cidrs))
	}
	return nil
}
