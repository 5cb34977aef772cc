package rbac

import (
	"errors"
	"sync/atomic"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
)

// Lister reads roles and bindings.
type Lister interface {
	GetRole(namespace, name string) (*rbacv1.Role, error)
	GetClusterRole(name string) (*rbacv1.ClusterRole, error)
	ListRoleBindings(namespace string) ([]*rbacv1.RoleBinding, error)
	ListClusterRoleBindings() ([]*rbacv1.ClusterRoleBinding, error)
	// Synced reports whether the lister has seen every object once.
	Synced() bool
}

// ErrNotReady is returned while the roles and bindings are not loaded yet.
var ErrNotReady = errors.New("the RBAC cache is not ready yet")

// informerLister is a Lister over client-go's shared informers.
type informerLister struct {
	f informers.SharedInformerFactory
}

// NewLister registers informers of the four RBAC types with f (the
// server's shared cache; the caller starts it) and returns a Lister over
// them.
func NewLister(f informers.SharedInformerFactory) Lister {
	r := f.Rbac().V1()
	r.Roles().Informer()
	r.ClusterRoles().Informer()
	r.RoleBindings().Informer()
	r.ClusterRoleBindings().Informer()
	return &informerLister{f: f}
}

func (l *informerLister) GetRole(ns, name string) (*rbacv1.Role, error) {
	return l.f.Rbac().V1().Roles().Lister().Roles(ns).Get(name)
}

func (l *informerLister) GetClusterRole(name string) (*rbacv1.ClusterRole, error) {
	return l.f.Rbac().V1().ClusterRoles().Lister().Get(name)
}

func (l *informerLister) ListRoleBindings(ns string) ([]*rbacv1.RoleBinding, error) {
	return l.f.Rbac().V1().RoleBindings().Lister().RoleBindings(ns).List(labels.Everything())
}

func (l *informerLister) ListClusterRoleBindings() ([]*rbacv1.ClusterRoleBinding, error) {
	return l.f.Rbac().V1().ClusterRoleBindings().Lister().List(labels.Everything())
}

func (l *informerLister) Synced() bool {
	r := l.f.Rbac().V1()
	return r.Roles().Informer().HasSynced() && r.ClusterRoles().Informer().HasSynced() &&
		r.RoleBindings().Informer().HasSynced() && r.ClusterRoleBindings().Informer().HasSynced()
}

// Late is a Lister set after construction: the authorizer is built before
// the API server whose loopback client feeds the informers. Until Set (and
// synced) it is not ready.
type Late struct {
	l atomic.Pointer[Lister]
}

var _ Lister = (*Late)(nil)

// Set installs the backing lister.
func (l *Late) Set(x Lister) { l.l.Store(&x) }

func (l *Late) get() (Lister, error) {
	p := l.l.Load()
	if p == nil || *p == nil || !(*p).Synced() {
		return nil, ErrNotReady
	}
	return *p, nil
}

// Synced implements Lister.
func (l *Late) Synced() bool { _, err := l.get(); return err == nil }

// GetRole implements Lister.
func (l *Late) GetRole(ns, name string) (*rbacv1.Role, error) {
	x, err := l.get()
	if err != nil {
		return nil, err
	}
	return x.GetRole(ns, name)
}

// GetClusterRole implements Lister.
func (l *Late) GetClusterRole(name string) (*rbacv1.ClusterRole, error) {
	x, err := l.get()
	if err != nil {
		return nil, err
	}
	return x.GetClusterRole(name)
}

// ListRoleBindings implements Lister.
func (l *Late) ListRoleBindings(ns string) ([]*rbacv1.RoleBinding, error) {
	x, err := l.get()
	if err != nil {
		return nil, err
	}
	return x.ListRoleBindings(ns)
}

// ListClusterRoleBindings implements Lister.
func (l *Late) ListClusterRoleBindings() ([]*rbacv1.ClusterRoleBinding, error) {
	x, err := l.get()
	if err != nil {
		return nil, err
	}
	return x.ListClusterRoleBindings()
}

// Static is an in-memory Lister (tests, and anything that has the objects
// at hand).
type Static struct {
	Roles               []*rbacv1.Role
	ClusterRoles        []*rbacv1.ClusterRole
	RoleBindings        []*rbacv1.RoleBinding
	ClusterRoleBindings []*rbacv1.ClusterRoleBinding
}

var _ Lister = (*Static)(nil)

// Synced implements Lister.
func (s *Static) Synced() bool { return true }

// GetRole implements Lister.
func (s *Static) GetRole(ns, name string) (*rbacv1.Role, error) {
	for _, r := range s.Roles {
		if r.Namespace == ns && r.Name == name {
			return r, nil
		}
	}
	return nil, apierrors.NewNotFound(rbacv1.Resource("roles"), name)
}

// GetClusterRole implements Lister.
func (s *Static) GetClusterRole(name string) (*rbacv1.ClusterRole, error) {
	for _, r := range s.ClusterRoles {
		if r.Name == name {
			return r, nil
		}
	}
	return nil, apierrors.NewNotFound(rbacv1.Resource("clusterroles"), name)
}

// ListRoleBindings implements Lister.
func (s *Static) ListRoleBindings(ns string) ([]*rbacv1.RoleBinding, error) {
	var out []*rbacv1.RoleBinding
	for _, b := range s.RoleBindings {
		if b.Namespace == ns {
			out = append(out, b)
		}
	}
	return out, nil
}

// ListClusterRoleBindings implements Lister.
func (s *Static) ListClusterRoleBindings() ([]*rbacv1.ClusterRoleBinding, error) {
	return s.ClusterRoleBindings, nil
}
