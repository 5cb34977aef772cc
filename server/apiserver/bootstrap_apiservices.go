package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orch/orch/datastore"
	"github.com/orch/orch/server/registry"
	"github.com/orch/orch/server/registry/apiregistration"
)

// automanagedLabel marks the Local APIServices kube-aggregator registers
// on start ("onstart") and removes again when the group is not served.
const automanagedLabel = "kube-aggregator.kubernetes.io/automanaged"

// ensureLocalAPIServices creates the Local APIService of every served
// group/version (stored and virtual resources), as kube-aggregator does at
// start, and deletes the Local ones it made before for a group/version no
// longer served (metrics.k8s.io under --disable metrics-server); nothing
// when apiregistration.k8s.io is not served.
func (s *Server) ensureLocalAPIServices(ctx context.Context) error {
	res := findResource(s.cfg.Resources, apiregistration.GroupName, "apiservices")
	if res == nil {
		return nil
	}
	seen := map[schema.GroupVersion]bool{}
	var errs []error
	for _, r := range s.resources {
		if seen[r.GroupVersion] {
			continue
		}
		seen[r.GroupVersion] = true
		a := apiregistration.LocalAPIService(r.GroupVersion, metav1.Now())
		status := a.Status
		_, err := s.createIfAbsent(ctx, res, a, func(o runtime.Object) { o.(*apiregistration.APIService).Status = status })
		errs = append(errs, err)
	}
	errs = append(errs, s.removeStaleLocalAPIServices(ctx, res, seen))
	return errors.Join(errs...)
}

// removeStaleLocalAPIServices deletes the onstart Local APIServices whose
// group/version is not served; APIServices with a service are left alone.
func (s *Server) removeStaleLocalAPIServices(ctx context.Context, res *registry.Resource, served map[schema.GroupVersion]bool) error {
	page, err := s.cfg.Store.List(ctx, res.Prefix(""), "", 0)
	if err != nil {
		return fmt.Errorf("bootstrap: list APIServices: %w", err)
	}
	var errs []error
	for _, kv := range page.KVs {
		var a apiregistration.APIService
		if json.Unmarshal(kv.Value, &a) != nil || a.Spec.Service != nil || a.Labels[automanagedLabel] != "onstart" ||
			served[schema.GroupVersion{Group: a.Spec.Group, Version: a.Spec.Version}] {
			continue
		}
		_, _, err := s.cfg.Store.Delete(ctx, kv.Key, kv.ModRevision)
		if err != nil && !errors.Is(err, datastore.ErrNotFound) && !errors.Is(err, datastore.ErrConflict) {
			errs = append(errs, fmt.Errorf("bootstrap: delete APIService %s: %w", a.Name, err))
			continue
		}
		s.log.Info("bootstrap: removed the Local APIService of a group no longer served", zap.String("apiservice", a.Name))
	}
	return errors.Join(errs...)
}
