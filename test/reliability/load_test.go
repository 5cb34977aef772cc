package reliability

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

const (
	namespace = "reliability"
	opTimeout = 5 * time.Second
)

// recorder collects the history of a round.
type recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   []Op
	other int // errors that were neither 409 nor 404 (recorded as unknown)
}

func (r *recorder) now() time.Duration { return time.Since(r.start) }

func (r *recorder) add(op Op) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

func (r *recorder) history() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}

// kv is a client bound to one server, talking through client-go's REST
// client without retries: every request is sent once.
type kv struct {
	rc rest.Interface
}

func newKV(cfg *rest.Config) (*kv, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.APIPath = "/api"
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("rest client: %w", err)
	}
	return &kv{rc: rc}, nil
}

func cm(key, value string, rv int64) *corev1.ConfigMap {
	o := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: key, Namespace: namespace}, Data: map[string]string{"v": value}}
	if rv != 0 {
		o.ResourceVersion = strconv.FormatInt(rv, 10)
	}
	return o
}

func rvOf(o metav1.Object) int64 {
	n, _ := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
	return n
}

// do runs one operation and returns its output; other reports an error
// that is neither 409 nor 404.
func (c *kv) do(ctx context.Context, in Input) (out Output, other error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var got corev1.ConfigMap
	var err error
	switch in.Kind {
	case Get:
		err = c.rc.Get().Namespace(namespace).Resource("configmaps").Name(in.Key).MaxRetries(0).Do(ctx).Into(&got)
	case Create:
		err = c.rc.Post().Namespace(namespace).Resource("configmaps").Body(cm(in.Key, in.Value, 0)).
			MaxRetries(0).Do(ctx).Into(&got)
	case Update:
		err = c.rc.Put().Namespace(namespace).Resource("configmaps").Name(in.Key).Body(cm(in.Key, in.Value, in.RV)).
			MaxRetries(0).Do(ctx).Into(&got)
	case Delete:
		err = c.delete(ctx, in, &got)
	}
	switch {
	case err == nil:
		return Output{Result: OK, Value: got.Data["v"], RV: rvOf(&got)}, nil
	case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
		return Output{Result: Conflict}, nil
	case apierrors.IsNotFound(err):
		return Output{Result: NotFound}, nil
	}
	return Output{Result: Unknown}, err
}

// delete decodes the deleted object when the server returns it (its
// resourceVersion is the deletion's revision); a Status leaves RV 0.
func (c *kv) delete(ctx context.Context, in Input, got *corev1.ConfigMap) error {
	opts := &metav1.DeleteOptions{}
	if in.RV != 0 {
		rv := strconv.FormatInt(in.RV, 10)
		opts.Preconditions = &metav1.Preconditions{ResourceVersion: &rv}
	}
	res := c.rc.Delete().Namespace(namespace).Resource("configmaps").Name(in.Key).Body(opts).MaxRetries(0).Do(ctx)
	if err := res.Error(); err != nil {
		return err
	}
	obj, err := res.Get()
	if err != nil {
		return err
	}
	if o, ok := obj.(*corev1.ConfigMap); ok {
		*got = *o
	}
	return nil
}

// client is one load generator: a kv bound to a server, and what it
// last saw of each key (to make CAS updates that may succeed).
type client struct {
	id      int
	server  int
	kv      *kv
	rec     *recorder
	keys    []string
	seen    map[string]int64
	seq     int
	rng     *rand.Rand
	lastErr error
}

func (c *client) next() Input {
	key := c.keys[c.rng.IntN(len(c.keys))]
	c.seq++
	val := fmt.Sprintf("c%d-%d", c.id, c.seq)
	p := c.rng.IntN(100)
	rv, known := c.seen[key]
	if !known {
		switch {
		case p < 40:
			return Input{Kind: Get, Key: key}
		case p < 85:
			return Input{Kind: Create, Key: key, Value: val}
		}
		return Input{Kind: Delete, Key: key}
	}
	switch {
	case p < 20:
		return Input{Kind: Get, Key: key}
	case p < 28:
		return Input{Kind: Create, Key: key, Value: val}
	case p < 80:
		return Input{Kind: Update, Key: key, Value: val, RV: rv}
	case p < 92:
		return Input{Kind: Delete, Key: key, RV: rv}
	}
	return Input{Kind: Delete, Key: key}
}

// run issues operations until ctx ends, recording each (failed reads have
// no effect and are left out).
func (c *client) run(ctx context.Context) {
	for ctx.Err() == nil {
		in := c.next()
		call := c.rec.now()
		out, err := c.kv.do(ctx, in)
		ret := c.rec.now()
		c.learn(in, out)
		if out.Result == Unknown && notSent(err) {
			// Refused before the request went out (the server is down): no
			// effect, like a failed read.
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if out.Result == Unknown && ctx.Err() == nil {
			c.rec.mu.Lock()
			c.rec.other++
			c.rec.mu.Unlock()
			c.lastErr = err
			time.Sleep(50 * time.Millisecond)
		}
		if in.Kind == Get && out.Result == Unknown {
			continue
		}
		c.rec.add(Op{Client: c.id, Input: in, Output: out, Call: call, Return: ret})
	}
}

// notSent reports whether err happened while dialing: the request never
// reached a server.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// learn keeps the revision of a key this client just wrote or read; after
// anything else the client reads the key again before a CAS.
func (c *client) learn(in Input, out Output) {
	if out.Result == OK && in.Kind != Delete {
		c.seen[in.Key] = out.RV
		return
	}
	delete(c.seen, in.Key)
}
