package metricsapi

import (
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// freshContainerMin is metrics-server's minimum age of a container whose
// start serves as its previous reading (younger ones are too imprecise).
const freshContainerMin = 10 * time.Second

// Store keeps the last two readings of every node and container, per node.
// It is safe for concurrent use; its zero value is not: use NewStore.
type Store struct {
	resolution time.Duration
	mu         sync.RWMutex
	nodes      map[string]*nodeSeries
}

// NewStore returns an empty Store for scrapes every resolution.
func NewStore(resolution time.Duration) *Store {
	return &Store{resolution: resolution, nodes: map[string]*nodeSeries{}}
}

type nodeSeries struct {
	last, prev *Point
	pods       map[PodRef]map[string]series
}

// series is a container's last reading and, when hasPrev, the one before
// (same container run, earlier time).
type series struct {
	last, prev Point
	hasPrev    bool
}

// ContainerUsage is one container's usage.
type ContainerUsage struct {
	Name      string
	Resources corev1.ResourceList
}

// PodUsage is a pod's containers' usage at the earliest of their times.
type PodUsage struct {
	Time       time.Time
	Window     time.Duration
	Containers []ContainerUsage
}

// Put records a node's scrape; pods and containers missing from it are
// forgotten (as metrics-server replaces its batch).
func (s *Store) Put(node string, b Batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.nodes[node]
	if old == nil {
		old = &nodeSeries{}
	}
	next := &nodeSeries{pods: make(map[PodRef]map[string]series, len(b.Pods))}
	if b.Node != nil {
		p := *b.Node
		next.last = &p
		next.prev = nextPrev(old.last, old.prev, p)
	}
	for ref, cs := range b.Pods {
		m := make(map[string]series, len(cs))
		before := old.pods[ref]
		for name, p := range cs {
			o, found := before[name]
			m[name] = s.nextContainer(o, found, p)
		}
		next.pods[ref] = m
	}
	s.nodes[node] = next
}

// nextPrev is the reading kept as previous when p arrives: the old last if
// p is newer, else the old previous if still older than p.
func nextPrev(last, prev *Point, p Point) *Point {
	switch {
	case last != nil && p.Time.After(last.Time):
		return last
	case last != nil && prev != nil && prev.Time.Before(p.Time):
		return prev
	}
	return nil
}

// nextContainer follows metrics-server's podStorage.Store: a container
// started between freshContainerMin and one resolution ago counts from its
// start (zero CPU then); otherwise the previous reading is kept only while
// the container has not restarted since it.
func (s *Store) nextContainer(old series, found bool, p Point) series {
	next := series{last: p}
	age := p.Time.Sub(p.Start)
	switch {
	case p.Start.Before(p.Time) && age < s.resolution && age >= freshContainerMin:
		next.prev, next.hasPrev = p, true
		next.prev.Time, next.prev.CPU = p.Start, 0
	case !found || !p.Start.Before(old.last.Time):
	case p.Time.After(old.last.Time):
		next.prev, next.hasPrev = old.last, true
	case old.hasPrev && old.prev.Time.Before(p.Time):
		next.prev, next.hasPrev = old.prev, true
	}
	return next
}

// Drop forgets a node (its scrape failed, as metrics-server's batch then
// lacks it).
func (s *Store) Drop(node string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.nodes, node)
}

// Retain forgets every node not in keep.
func (s *Store) Retain(keep map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n := range s.nodes {
		if !keep[n] {
			delete(s.nodes, n)
		}
	}
}

// Node returns a node's usage, if it has two readings.
func (s *Store) Node(name string) (Usage, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := s.nodes[name]
	if n == nil || n.last == nil || n.prev == nil {
		return Usage{}, false
	}
	u, err := usageOf(*n.last, *n.prev)
	return u, err == nil
}

// Pod returns a pod's usage when every container of its last reading has a
// previous one (metrics-server leaves the pod out otherwise).
func (s *Store) Pod(ref PodRef) (PodUsage, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, n := range s.nodes {
		if cs, ok := n.pods[ref]; ok {
			return podUsage(cs)
		}
	}
	return PodUsage{}, false
}

func podUsage(cs map[string]series) (PodUsage, bool) {
	var out PodUsage
	for name, c := range cs {
		if !c.hasPrev {
			return PodUsage{}, false
		}
		u, err := usageOf(c.last, c.prev)
		if err != nil {
			continue
		}
		out.Containers = append(out.Containers, ContainerUsage{Name: name, Resources: u.Resources})
		if out.Time.IsZero() || u.Time.Before(out.Time) {
			out.Time, out.Window = u.Time, u.Window
		}
	}
	if len(cs) == 0 {
		return PodUsage{}, false
	}
	sort.Slice(out.Containers, func(i, j int) bool { return out.Containers[i].Name < out.Containers[j].Name })
	return out, true
}

// Size is the number of nodes and containers held (for tests and logs).
func (s *Store) Size() (nodes, containers int) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, n := range s.nodes {
		for _, cs := range n.pods {
			containers += len(cs)
		}
	}
	return len(s.nodes), containers
}
