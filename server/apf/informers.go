package apf

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// Watcher keeps a Classifier on the configuration the API holds.
type Watcher struct {
	c *Classifier
	f informers.SharedInformerFactory
}

// Watch fills c from the FlowSchema and PriorityLevelConfiguration
// informers of f (the server's shared cache; the caller starts it),
// rebuilding the snapshot on every change.
func Watch(c *Classifier, f informers.SharedInformerFactory) *Watcher {
	w := &Watcher{c: c, f: f}
	fc := w.f.Flowcontrol().V1()
	rebuild := cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { w.rebuild() }, UpdateFunc: func(any, any) { w.rebuild() }, DeleteFunc: func(any) { w.rebuild() },
	}
	// Errors only come from a stopped informer.
	_, _ = fc.FlowSchemas().Informer().AddEventHandler(rebuild)
	_, _ = fc.PriorityLevelConfigurations().Informer().AddEventHandler(rebuild)
	return w
}

// Synced reports whether both caches have been listed once.
func (w *Watcher) Synced() bool {
	fc := w.f.Flowcontrol().V1()
	return fc.FlowSchemas().Informer().HasSynced() && fc.PriorityLevelConfigurations().Informer().HasSynced()
}

func (w *Watcher) rebuild() {
	fc := w.f.Flowcontrol().V1()
	fss, err1 := fc.FlowSchemas().Lister().List(labels.Everything())
	pls, err2 := fc.PriorityLevelConfigurations().Lister().List(labels.Everything())
	if err1 != nil || err2 != nil {
		return // listers of a running informer do not fail
	}
	w.c.Set(fss, pls)
}
