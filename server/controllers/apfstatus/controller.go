package apfstatus

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	fcapply "k8s.io/client-go/applyconfigurations/flowcontrol/v1"
	fclisters "k8s.io/client-go/listers/flowcontrol/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/orch/orch/server/controllers/kit"
)

// FieldManager is upstream's manager of the condition
// (ConfigConsumerAsFieldManager).
const FieldManager = "api-priority-and-fairness-config-consumer-v1"

// Controller keeps the Dangling conditions.
type Controller struct {
	kc      *kit.Context
	log     *zap.Logger
	q       kit.Queue
	schemas fclisters.FlowSchemaLister
	levels  fclisters.PriorityLevelConfigurationLister
	synced  []cache.InformerSynced
}

// New registers the controller's informers.
func New(kc *kit.Context) (*Controller, error) {
	fs, pl := kc.Informers.Flowcontrol().V1().FlowSchemas(), kc.Informers.Flowcontrol().V1().PriorityLevelConfigurations()
	c := &Controller{kc: kc, log: kc.Logger.Named("apf-status"), q: kc.NewQueue("apf-status"),
		schemas: fs.Lister(), levels: pl.Lister(), synced: []cache.InformerSynced{fs.Informer().HasSynced, pl.Informer().HasSynced}}
	if _, err := fs.Informer().AddEventHandler(kit.EnqueueHandler(c.q)); err != nil {
		return nil, fmt.Errorf("flowschema handler: %w", err)
	}
	all := func(any) { c.enqueueAll() }
	if _, err := pl.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: all, UpdateFunc: func(_, o any) { all(o) }, DeleteFunc: all,
	}); err != nil {
		return nil, fmt.Errorf("prioritylevelconfiguration handler: %w", err)
	}
	return c, nil
}

// enqueueAll queues every FlowSchema (a level came or went).
func (c *Controller) enqueueAll() {
	all, err := c.schemas.List(labels.Everything())
	if err != nil {
		return
	}
	for _, fs := range all {
		c.q.Add(fs.Name)
	}
}

// Run works the queue until ctx ends.
func (c *Controller) Run(ctx context.Context) error {
	if !kit.WaitForSync(ctx, c.synced...) {
		return nil
	}
	kit.RunWorkers(ctx, c.q, 1, c.sync, c.log)
	return nil
}

func (c *Controller) sync(ctx context.Context, name string) error {
	fs, err := c.schemas.Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	plName := fs.Spec.PriorityLevelConfiguration.Name
	_, err = c.levels.Get(plName)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	want := Dangling(plName, err != nil)
	if have := find(fs.Status.Conditions); have != nil && have.Status == want.Status && have.Reason == want.Reason && have.Message == want.Message {
		return nil
	}
	cond := fcapply.FlowSchemaCondition().WithType(want.Type).WithStatus(want.Status).WithReason(want.Reason).
		WithMessage(want.Message).WithLastTransitionTime(metav1.Now())
	apply := fcapply.FlowSchema(name).WithStatus(fcapply.FlowSchemaStatus().WithConditions(cond))
	_, err = c.kc.Client.FlowcontrolV1().FlowSchemas().ApplyStatus(ctx, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Dangling is the condition of a FlowSchema naming level plName.
func Dangling(plName string, missing bool) flowcontrolv1.FlowSchemaCondition {
	if missing {
		return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionTrue,
			Reason: "NotFound", Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q but there is no such object", plName)}
	}
	return flowcontrolv1.FlowSchemaCondition{Type: flowcontrolv1.FlowSchemaConditionDangling, Status: flowcontrolv1.ConditionFalse,
		Reason: "Found", Message: fmt.Sprintf("This FlowSchema references the PriorityLevelConfiguration object named %q and it exists", plName)}
}

func find(conds []flowcontrolv1.FlowSchemaCondition) *flowcontrolv1.FlowSchemaCondition {
	for i := range conds {
		if conds[i].Type == flowcontrolv1.FlowSchemaConditionDangling {
			return &conds[i]
		}
	}
	return nil
}
