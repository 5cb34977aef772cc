package registry

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// validateCronSchedule checks a standard 5-field cron expression or a
// descriptor, as the robfig/cron parser kube-apiserver uses accepts them.
func validateCronSchedule(spec string) error {
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		i := strings.IndexAny(spec, " \t")
		if i < 0 {
			return fmt.Errorf("missing spec after timezone")
		}
		spec = strings.TrimSpace(spec[i:])
	}
	if strings.HasPrefix(spec, "@") {
		switch spec {
		case "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly":
			return nil
		}
		if d, ok := strings.CutPrefix(spec, "@every "); ok {
			if _, err := time.ParseDuration(d); err != nil {
				return fmt.Errorf("failed to parse duration %s: %w", spec, err)
			}
			return nil
		}
		return fmt.Errorf("unrecognized descriptor: %s", spec)
	}
	fieldsList := strings.Fields(spec)
	if len(fieldsList) != 5 {
		return fmt.Errorf("expected exactly 5 fields, found %d: %s", len(fieldsList), spec)
	}
	bounds := []struct {
		min, max int
		names    []string
	}{
		{0, 59, nil}, {0, 23, nil}, {1, 31, nil},
		{1, 12, []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
		{0, 6, []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
	}
	for i, f := range fieldsList {
		b := bounds[i]
		for _, item := range strings.Split(f, ",") {
			if err := checkCronItem(item, b.min, b.max, b.names, i == 2 || i == 4); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkCronItem(item string, lo, hi int, names []string, allowQuestion bool) error {
	rng, step, hasStep := strings.Cut(item, "/")
	if hasStep {
		n, err := strconv.Atoi(step)
		if err != nil || n <= 0 {
			return fmt.Errorf("step of range should be a positive number: %s", item)
		}
	}
	if rng == "*" || (allowQuestion && rng == "?") {
		return nil
	}
	first, last, isRange := strings.Cut(rng, "-")
	a, err := cronValue(first, lo, hi, names)
	if err != nil {
		return err
	}
	if !isRange {
		return nil
	}
	b, err := cronValue(last, lo, hi, names)
	if err != nil {
		return err
	}
	if b < a {
		return fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", a, b, item)
	}
	return nil
}

func cronValue(s string, lo, hi int, names []string) (int, error) {
	for i, n := range names {
		if strings.EqualFold(s, n) {
			return i + lo, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %w", s, err)
	}
	if v < lo || v > hi {
		if v < lo {
			return 0, fmt.Errorf("beginning of range (%d) below minimum (%d): %s", v, lo, s)
		}
		return 0, fmt.Errorf("end of range (%d) above maximum (%d): %s", v, hi, s)
	}
	return v, nil
}
