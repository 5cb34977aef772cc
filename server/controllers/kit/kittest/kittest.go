package kittest

import (
	"context"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/orch/orch/server/apiserver/apiservertest"
	"github.com/orch/orch/server/controllers/kit"
)

// Runner is what a controller is once built.
type Runner interface{ Run(context.Context) error }

// Option changes how Run sets up the test.
type Option func(*config)

type config struct {
	kit    kit.Options
	meta   bool
	log    *zap.Logger
	rest   []func(*rest.Config)
	setup  []func(context.Context, kubernetes.Interface)
	before []func(any)
	also   []func(*kit.Context) (Runner, error)
}

// KitOptions sets the kit.Options the controllers read (default: zero).
func KitOptions(o kit.Options) Option { return func(c *config) { c.kit = o } }

// MetadataClient gives the Context a metadata client of the API server
// (kit.Context.Metadata, for MetadataInformer), as the server's has.
func MetadataClient() Option { return func(c *config) { c.meta = true } }

// Logger sets the Context's logger (default: zaptest.NewLogger(t)).
func Logger(l *zap.Logger) Option { return func(c *config) { c.log = l } }

// QPS lifts the client's rate limit to qps (and the same burst), for tests
// that write a lot.
func QPS(qps int) Option {
	return func(c *config) {
		c.rest = append(c.rest, func(rc *rest.Config) { rc.QPS, rc.Burst = float32(qps), qps })
	}
}

// Rest lets f see (and change) the API server's client configuration
// before the client is made.
func Rest(f func(*rest.Config)) Option {
	return func(c *config) { c.rest = append(c.rest, f) }
}

// Setup runs f once the API server is bootstrapped and before any
// controller is built, so the caches start with what f made.
func Setup(f func(context.Context, kubernetes.Interface)) Option {
	return func(c *config) { c.setup = append(c.setup, f) }
}

// Before runs f on the built controller before its informers start and it
// runs (to shorten a back-off or fake a clock). C must be the type Run's
// build returns.
func Before[C any](f func(C)) Option {
	return func(c *config) { c.before = append(c.before, func(v any) { f(v.(C)) }) }
}

// Also builds another controller on the same Context, before the one Run
// returns, and runs it alongside.
func Also[C Runner](build func(*kit.Context) (C, error)) Option {
	return func(c *config) {
		c.also = append(c.also, func(kc *kit.Context) (Runner, error) { return build(kc) })
	}
}

// Run starts an API server, builds the controller with build (and those
// given with Also) on one kit.Context, starts the informers and runs the
// controllers until the test ends. It returns a client of the API server
// and the controller build made.
func Run[C Runner](t testing.TB, build func(*kit.Context) (C, error), opts ...Option) (kubernetes.Interface, C) {
	t.Helper()
	cfg := config{}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.log == nil {
		cfg.log = zaptest.NewLogger(t)
	}
	client, kc, ctx, cancel := start(t, &cfg)
	runners := make([]Runner, 0, len(cfg.also)+1)
	for _, b := range cfg.also {
		r, err := b(kc)
		if err != nil {
			t.Fatal(err)
		}
		runners = append(runners, r)
	}
	c, err := build(kc)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range cfg.before {
		f(c)
	}
	runners = append(runners, c)
	if err := kc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for _, r := range runners {
		wg.Go(func() { _ = r.Run(ctx) })
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return client, c
}

// start brings up the API server, its client and the kit.Context; the
// returned ctx ends (cancel) and the Context shuts down when the test ends,
// even if it fails half-way.
func start(t testing.TB, cfg *config) (kubernetes.Interface, *kit.Context, context.Context, context.CancelFunc) {
	t.Helper()
	api, rc := apiservertest.Start(t)
	for _, f := range cfg.rest {
		f(rc)
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := api.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range cfg.setup {
		f(ctx, client)
	}
	kc := kit.New(client, cfg.log, cfg.kit)
	if cfg.meta {
		if kc.Metadata, err = metadata.NewForConfig(rc); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(kc.Shutdown) // runs after the controllers have stopped
	return client, kc, ctx, cancel
}
