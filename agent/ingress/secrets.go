package ingress

import (
	"context"
	"crypto/tls"
	"strings"
	"sync"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// secretWatch is the informer of one Secret.
type secretWatch struct {
	store  cache.Store
	cancel context.CancelFunc
}

// parsed is the certificate of one version of a Secret (the informer
// stores a new object for every change).
type parsed struct {
	from *corev1.Secret
	cert *tls.Certificate
}

// secrets watches the TLS Secrets the served Ingresses name, each on its
// own by a metadata.name field selector: the node authorizer lets a node
// read those Secrets and no other. Certificates are parsed once per
// version and kept in memory only.
type secrets struct {
	client   kubernetes.Interface
	log      *zap.Logger
	onChange func()

	mu      sync.Mutex
	watches map[string]*secretWatch // namespace/name
	parsed  map[string]parsed
}

func newSecrets(client kubernetes.Interface, log *zap.Logger, onChange func()) *secrets {
	return &secrets{client: client, log: log, onChange: onChange, watches: map[string]*secretWatch{}, parsed: map[string]parsed{}}
}

// want starts watching the keys not yet watched and stops the others.
func (s *secrets) want(ctx context.Context, keys map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for key, w := range s.watches {
		if !keys[key] {
			w.cancel()
			delete(s.watches, key)
			delete(s.parsed, key)
		}
	}
	for key := range keys {
		if _, ok := s.watches[key]; !ok && ctx.Err() == nil {
			s.watches[key] = s.watch(ctx, key)
		}
	}
}

func (s *secrets) watch(ctx context.Context, key string) *secretWatch {
	ns, name, _ := strings.Cut(key, "/")
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.FieldSelector = sel
			return s.client.CoreV1().Secrets(ns).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return s.client.CoreV1().Secrets(ns).Watch(ctx, o)
		},
	}
	changed := func(any) { s.onChange() }
	// The fake clientset of tests cannot do watch-list: say so when it is one.
	store, ctl := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: cache.ToListWatcherWithWatchListSemantics(lw, s.client), ObjectType: &corev1.Secret{},
		Handler: cache.ResourceEventHandlerFuncs{AddFunc: changed, UpdateFunc: func(_, o any) { changed(o) }, DeleteFunc: changed}})
	ctx, cancel := context.WithCancel(ctx)
	go ctl.RunWithContext(ctx)
	return &secretWatch{store: store, cancel: cancel}
}

// certs returns the parsed certificates of the watched Secrets that hold a
// valid key pair; a bad one is logged (by name only) once per version.
func (s *secrets) certs() map[string]*tls.Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]*tls.Certificate{}
	for key, w := range s.watches {
		obj, ok, _ := w.store.GetByKey(key)
		sec, _ := obj.(*corev1.Secret)
		if !ok || sec == nil {
			delete(s.parsed, key)
			continue
		}
		p, ok := s.parsed[key]
		if !ok || p.from != sec {
			cert, err := ParseTLSSecret(sec)
			if err != nil {
				s.log.Warn("ingress TLS Secret unusable; its hosts get the default certificate", zap.String("secret", key), zap.Error(err))
			}
			p = parsed{from: sec, cert: cert}
			s.parsed[key] = p
		}
		if p.cert != nil {
			out[key] = p.cert
		}
	}
	return out
}

// stop ends every watch.
func (s *secrets) stop() {
	s.want(context.Background(), nil)
}
