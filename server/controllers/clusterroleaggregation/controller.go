package clusterroleaggregation

import (
	"context"
	"fmt"
	"sort"

	"go.uber.org/zap"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	rbaclisters "k8s.io/client-go/listers/rbac/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// Controller aggregates ClusterRoles.
type Controller struct {
	kc     *kit.Context
	log    *zap.Logger
	q      kit.Queue
	roles  rbaclisters.ClusterRoleLister
	synced cache.InformerSynced
}

// New registers the controller's informer.
func New(kc *kit.Context) (*Controller, error) {
	inf := kc.Informers.Rbac().V1().ClusterRoles()
	c := &Controller{kc: kc, log: kc.Logger.Named("clusterrole-aggregation"), q: kc.NewQueue("clusterrole-aggregation"),
		roles: inf.Lister(), synced: inf.Informer().HasSynced}
	enqueueAll := func(any) { c.enqueueAggregated() }
	_, err := inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: enqueueAll, UpdateFunc: func(_, o any) { enqueueAll(o) }, DeleteFunc: enqueueAll,
	})
	if err != nil {
		return nil, fmt.Errorf("clusterrole handler: %w", err)
	}
	return c, nil
}

// enqueueAggregated queues every ClusterRole that has an aggregationRule.
func (c *Controller) enqueueAggregated() {
	all, err := c.roles.List(labels.Everything())
	if err != nil {
		return
	}
	for _, r := range all {
		if r.AggregationRule != nil {
			c.q.Add(r.Name)
		}
	}
}

// Run works the queue until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced) {
		return nil
	}
	kit.RunWorkers(ctx, c.q, 1, c.sync, c.log)
	return nil
}

func (c *Controller) sync(ctx context.Context, name string) error {
	role, err := c.roles.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if role.AggregationRule == nil {
		return nil
	}
	all, err := c.roles.List(labels.Everything())
	if err != nil {
		return err
	}
	rules, err := Aggregate(role, all)
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(rules, role.Rules) {
		return nil
	}
	upd := role.DeepCopy()
	upd.Rules = rules
	_, err = c.kc.Client.RbacV1().ClusterRoles().Update(ctx, upd, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Aggregate returns the rules of role's aggregationRule over all: the
// rules of every other ClusterRole a selector matches, in name order,
// without duplicates.
func Aggregate(role *rbacv1.ClusterRole, all []*rbacv1.ClusterRole) ([]rbacv1.PolicyRule, error) {
	var sels []labels.Selector
	for i := range role.AggregationRule.ClusterRoleSelectors {
		s, err := metav1.LabelSelectorAsSelector(&role.AggregationRule.ClusterRoleSelectors[i])
		if err != nil {
			return nil, fmt.Errorf("clusterrole %q: aggregation selector %d: %w", role.Name, i, err)
		}
		sels = append(sels, s)
	}
	sorted := append([]*rbacv1.ClusterRole(nil), all...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	var rules []rbacv1.PolicyRule
	for _, other := range sorted {
		if other.Name == role.Name || !matchesAny(sels, other.Labels) {
			continue
		}
		for _, r := range other.Rules {
			if !hasRule(rules, r) {
				rules = append(rules, r)
			}
		}
	}
	return rules, nil
}

func matchesAny(sels []labels.Selector, l map[string]string) bool {
	for _, s := range sels {
		if s.Matches(labels.Set(l)) {
			return true
		}
	}
	return false
}

func hasRule(rules []rbacv1.PolicyRule, r rbacv1.PolicyRule) bool {
	for i := range rules {
		if equality.Semantic.DeepEqual(rules[i], r) {
			return true
		}
	}
	return false
}
