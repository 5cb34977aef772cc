package apiserver

import (
	"fmt"
	"time"
	"unicode"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/orch/orch/server/fieldmanager"
)

// managerName is the request's field manager: the fieldManager parameter
// (at most 128 printable characters) or the user agent's product.
func managerName(rc *reqCtx) (string, error) {
	m := rc.query.Get("fieldManager")
	if m == "" {
		return fieldmanager.ManagerFromUserAgent(rc.userAgent), nil
	}
	if len(m) > 128 {
		return "", badRequestf("fieldManager: Too long: may not be more than 128 bytes")
	}
	for _, r := range m {
		if !unicode.IsPrint(r) {
			return "", badRequestf("fieldManager: Invalid value: %q: must only contain printable characters", m)
		}
	}
	return m, nil
}

// fieldManager is the FieldManager of rc's resource and subresource.
func (s *Server) fieldManager(rc *reqCtx, sub string) (*managedfields.FieldManager, error) {
	return s.fields.For(rc.res.GroupVersion.WithKind(rc.res.Kind), sub, isUnstructured(rc), rc.res.Strategy.Default, rc.res.ApplyTypes)
}

// trackCreate records the creating manager's fields in managedFields.
func (s *Server) trackCreate(rc *reqCtx, obj runtime.Object) (runtime.Object, error) {
	manager, err := managerName(rc)
	if err != nil {
		return nil, err
	}
	setTypeMeta(rc.res, obj)
	if !isUnstructured(rc) && s.fields.TrackCreate(obj, manager, time.Now()) {
		return obj, nil
	}
	fm, err := s.fieldManager(rc, "")
	if err != nil {
		return obj, nil // no schema for it: leave managedFields alone
	}
	live := rc.res.New()
	setTypeMeta(rc.res, live)
	return fm.UpdateNoErrors(live, obj, manager), nil
}

// trackUpdate records an update's (or status update's) changed fields.
func (s *Server) trackUpdate(rc *reqCtx, mode updateMode, cur, obj runtime.Object) (runtime.Object, error) {
	if mode == modeRaw {
		return obj, nil
	}
	manager, err := managerName(rc)
	if err != nil {
		return nil, err
	}
	sub := ""
	if mode == modeStatus || mode == modeSub {
		sub = rc.info.Subresource
	}
	fm, err := s.fieldManager(rc, sub)
	if err != nil {
		return obj, nil
	}
	setTypeMeta(rc.res, obj)
	setTypeMeta(rc.res, cur)
	return fm.UpdateNoErrors(cur, obj, manager), nil
}

func errFieldManager(err error) error { return fmt.Errorf("managed fields: %w", err) }
