package metricsapi

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PodRef names a pod.
type PodRef struct{ Namespace, Name string }

// Batch is one node's scrape: the node's reading (nil when incomplete) and
// its pods' containers' readings.
type Batch struct {
	Node *Point
	Pods map[PodRef]map[string]Point
}

// The series of kubelet's /metrics/resource that metrics-server reads.
const (
	nodeCPU         = "node_cpu_usage_seconds_total"
	nodeMemory      = "node_memory_working_set_bytes"
	containerCPU    = "container_cpu_usage_seconds_total"
	containerMemory = "container_memory_working_set_bytes"
	containerStart  = "container_start_time_seconds"
)

// parseResourceMetrics reads kubelet's /metrics/resource (Prometheus text
// format): samples without a timestamp get now. Incomplete readings (no
// CPU, memory or time) are dropped, as metrics-server drops them.
func parseResourceMetrics(body []byte, now time.Time) (Batch, error) {
	var node Point
	pods := map[PodRef]map[string]Point{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line, now)
		if err != nil {
			return Batch{}, fmt.Errorf("line %d: %w", n, err)
		}
		switch s.name {
		case nodeCPU:
			node.CPU, node.Time = nanos(s.value), s.time
		case nodeMemory:
			node.Memory, node.Time = uint64(s.value), s.time
		case containerCPU, containerMemory, containerStart:
			addContainerSample(pods, s)
		}
	}
	if err := sc.Err(); err != nil {
		return Batch{}, fmt.Errorf("reading metrics: %w", err)
	}
	b := Batch{Pods: completePods(pods)}
	if !node.Time.IsZero() && node.CPU != 0 && node.Memory != 0 {
		b.Node = &node
	}
	return b, nil
}

func addContainerSample(pods map[PodRef]map[string]Point, s sample) {
	ref := PodRef{Namespace: s.labels["namespace"], Name: s.labels["pod"]}
	c := s.labels["container"]
	if ref.Name == "" || c == "" {
		return
	}
	if pods[ref] == nil {
		pods[ref] = map[string]Point{}
	}
	p := pods[ref][c]
	switch s.name {
	case containerCPU:
		p.CPU, p.Time = nanos(s.value), s.time
	case containerMemory:
		p.Memory, p.Time = uint64(s.value), s.time
	case containerStart:
		p.Start = time.Unix(0, int64(s.value*1e9))
	}
	pods[ref][c] = p
}

// completePods drops the pods with a container lacking CPU or memory
// (metrics-server's checkContainerMetrics).
func completePods(pods map[PodRef]map[string]Point) map[PodRef]map[string]Point {
	for ref, cs := range pods {
		for _, p := range cs {
			if p.CPU == 0 || p.Memory == 0 || p.Time.IsZero() {
				delete(pods, ref)
				break
			}
		}
	}
	return pods
}

func nanos(seconds float64) uint64 { return uint64(seconds * 1e9) }

// sample is one line of the text format: name{labels} value [timestamp ms].
type sample struct {
	name   string
	labels map[string]string
	value  float64
	time   time.Time
}

func parseSample(line string, now time.Time) (sample, error) {
	s := sample{time: now}
	rest := line
	if i := strings.IndexAny(line, "{ \t"); i > 0 {
		s.name, rest = line[:i], line[i:]
	} else {
		return s, fmt.Errorf("no value in %q", line)
	}
	if strings.HasPrefix(rest, "{") {
		var err error
		if s.labels, rest, err = parseLabels(rest[1:]); err != nil {
			return s, err
		}
	}
	f := strings.Fields(rest)
	if len(f) < 1 || len(f) > 2 {
		return s, fmt.Errorf("want a value and an optional timestamp after %s", s.name)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return s, fmt.Errorf("value of %s: %w", s.name, err)
	}
	s.value = v
	if len(f) == 2 {
		ms, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return s, fmt.Errorf("timestamp of %s: %w", s.name, err)
		}
		s.time = time.UnixMilli(ms)
	}
	return s, nil
}

// parseLabels reads `k="v",...}` and returns what follows the brace.
func parseLabels(in string) (map[string]string, string, error) {
	labels := map[string]string{}
	for {
		in = strings.TrimLeft(in, " \t,")
		if strings.HasPrefix(in, "}") {
			return labels, in[1:], nil
		}
		eq := strings.IndexByte(in, '=')
		if eq <= 0 || len(in) < eq+2 || in[eq+1] != '"' {
			return nil, "", fmt.Errorf("malformed labels at %q", in)
		}
		key := strings.TrimSpace(in[:eq])
		val, n, err := quoted(in[eq+1:])
		if err != nil {
			return nil, "", fmt.Errorf("label %s: %w", key, err)
		}
		labels[key] = val
		in = in[eq+1+n:]
	}
}

// quoted reads a double-quoted label value with \\, \" and \n escapes and
// returns it and the number of bytes read.
func quoted(in string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(in); i++ {
		switch c := in[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			if i+1 == len(in) {
				return "", 0, fmt.Errorf("unterminated escape")
			}
			i++
			if in[i] == 'n' {
				b.WriteByte('\n')
			} else {
				b.WriteByte(in[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated value")
}
