package kubeletapi

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// logOptions are the query parameters of /containerLogs (kube's PodLogOptions).
type logOptions struct {
	follow, previous, timestamps bool
	tail                         int64 // -1 = all lines
	since                        time.Time
	limitBytes                   int64 // 0 = no limit
}

func isTrueParam(v string) bool { return v == "1" || v == "true" || v == "True" }

// parseLogOptions reads q; now anchors sinceSeconds.
func parseLogOptions(q url.Values, now time.Time) (logOptions, error) {
	o := logOptions{tail: -1, follow: isTrueParam(q.Get("follow")), previous: isTrueParam(q.Get("previous")),
		timestamps: isTrueParam(q.Get("timestamps"))}
	if v := q.Get("tailLines"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return o, fmt.Errorf("tailLines: %q must be a non-negative integer", v)
		}
		o.tail = n
	}
	if v := q.Get("limitBytes"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return o, fmt.Errorf("limitBytes: %q must be a positive integer", v)
		}
		o.limitBytes = n
	}
	secs, stime := q.Get("sinceSeconds"), q.Get("sinceTime")
	if secs != "" && stime != "" {
		return o, fmt.Errorf("at most one of sinceTime or sinceSeconds may be specified")
	}
	if secs != "" {
		n, err := strconv.ParseInt(secs, 10, 64)
		if err != nil || n < 1 {
			return o, fmt.Errorf("sinceSeconds: %q must be a positive integer", secs)
		}
		o.since = now.Add(-time.Duration(n) * time.Second)
	}
	if stime != "" {
		t, err := time.Parse(time.RFC3339, stime)
		if err != nil {
			return o, fmt.Errorf("sinceTime: %q is not an RFC3339 time", stime)
		}
		o.since = t
	}
	return o, nil
}
