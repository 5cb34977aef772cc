package apiserver

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/server/registry/apiregistration"
)

// ensureLocalAPIServices creates the Local APIService of every served
// group/version, as kube-aggregator does at start; nothing when
// apiregistration.k8s.io is not served.
func (s *Server) ensureLocalAPIServices(ctx context.Context) error {
	res := findResource(s.cfg.Resources, apiregistration.GroupName, "apiservices")
	if res == nil {
		return nil
	}
	seen := map[schema.GroupVersion]bool{}
	var errs []error
	for _, r := range s.cfg.Resources {
		if seen[r.GroupVersion] {
			continue
		}
		seen[r.GroupVersion] = true
		a := apiregistration.LocalAPIService(r.GroupVersion, metav1.Now())
		status := a.Status
		_, err := s.createIfAbsent(ctx, res, a, func(o runtime.Object) { o.(*apiregistration.APIService).Status = status })
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
