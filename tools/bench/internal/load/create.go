package load

import (
	"context"
	"fmt"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// CreateSpec configures one create-throughput level.
type CreateSpec struct {
	Namespace string
	Clients   int
	Duration  time.Duration
	Payload   int    // bytes in data.payload
	Prefix    string // object name prefix, unique per level
}

// CreateResult is the outcome of one level.
type CreateResult struct {
	Clients   int           `json:"clients"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	OK        int           `json:"ok"`
	Errors    int           `json:"errors"`
	FirstErr  string        `json:"first_error,omitempty"`
	PerSecond float64       `json:"creates_per_second"`
	Latency   Summary       `json:"latency"`
	// CPU use during the level, in cores (CPU seconds / elapsed seconds),
	// filled in by the caller: the server's processes and this load generator.
	ServerCores float64 `json:"server_cores,omitempty"`
	ClientCores float64 `json:"client_cores,omitempty"`
}

type clientOutcome struct {
	lat    []time.Duration
	errors int
	first  error
}

// RunCreate runs spec.Clients goroutines, each with its own connection,
// creating ConfigMaps back to back until spec.Duration has passed. Client i
// talks to endpoint i mod len(endpoints) (round-robin over the servers).
func RunCreate(ctx context.Context, endpoints []*rest.Config, spec CreateSpec) (CreateResult, error) {
	clients, err := warmClients(ctx, endpoints, spec.Namespace, spec.Clients)
	if err != nil {
		return CreateResult{Clients: spec.Clients}, err
	}
	data := payload(spec.Payload)
	outs := make([]clientOutcome, spec.Clients)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(spec.Duration)
	for i, cs := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = createLoop(ctx, cs, spec, data, i, deadline)
		}()
	}
	wg.Wait()
	return collect(spec.Clients, time.Since(start), outs), nil
}

// warmClients builds one clientset per client, spread round-robin over the
// endpoints, and completes a request on each so TLS handshakes are not part
// of the measurement.
func warmClients(ctx context.Context, endpoints []*rest.Config, ns string, n int) ([]kubernetes.Interface, error) {
	clients := make([]kubernetes.Interface, n)
	for i := range clients {
		cfg, err := Endpoint(endpoints, i)
		if err != nil {
			return nil, err
		}
		cs, err := NewClient(cfg)
		if err != nil {
			return nil, err
		}
		if _, err := cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			return nil, fmt.Errorf("warm-up GET namespace %s (client %d): %w", ns, i, err)
		}
		clients[i] = cs
	}
	return clients, nil
}

func createLoop(ctx context.Context, cs kubernetes.Interface, spec CreateSpec, data string, id int, deadline time.Time) clientOutcome {
	var out clientOutcome
	cms := cs.CoreV1().ConfigMaps(spec.Namespace)
	for seq := 0; time.Now().Before(deadline) && ctx.Err() == nil; seq++ {
		obj := configMap(spec.Namespace, fmt.Sprintf("%s-%d-%d", spec.Prefix, id, seq), data)
		t0 := time.Now()
		_, err := cms.Create(ctx, obj, metav1.CreateOptions{})
		lat := time.Since(t0)
		if err != nil {
			out.errors++
			if out.first == nil {
				out.first = err
			}
			continue
		}
		out.lat = append(out.lat, lat)
	}
	return out
}

func collect(clients int, elapsed time.Duration, outs []clientOutcome) CreateResult {
	res := CreateResult{Clients: clients, Elapsed: elapsed}
	var all []time.Duration
	for _, o := range outs {
		all = append(all, o.lat...)
		res.Errors += o.errors
		if o.first != nil && res.FirstErr == "" {
			res.FirstErr = o.first.Error()
		}
	}
	res.OK = len(all)
	res.Latency = Summarize(all)
	if elapsed > 0 {
		res.PerSecond = float64(res.OK) / elapsed.Seconds()
	}
	return res
}
