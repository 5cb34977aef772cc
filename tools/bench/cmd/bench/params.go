package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// params are the load parameters shared by `run` and `load`.
type params struct {
	levels        []int
	duration      time.Duration
	payload       int
	watchers      int
	watchWrites   int
	watchInterval time.Duration
	namespace     string
}

func (p *params) register(fs *flag.FlagSet) *string {
	levels := fs.String("levels", "1,16,64", "concurrent create clients per level, comma separated")
	fs.DurationVar(&p.duration, "duration", 15*time.Second, "create phase duration per level")
	fs.IntVar(&p.payload, "payload", 900, "bytes in each ConfigMap's data (object is ~1 KiB of JSON)")
	fs.IntVar(&p.watchers, "watchers", 100, "concurrent watchers in the watch test")
	fs.IntVar(&p.watchWrites, "watch-writes", 300, "objects created during the watch test")
	fs.DurationVar(&p.watchInterval, "watch-interval", 20*time.Millisecond, "pause between watch-test writes")
	fs.StringVar(&p.namespace, "namespace", "default", "namespace for the benchmark objects")
	return levels
}

func (p *params) parseLevels(s string) error {
	p.levels = nil
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("--levels: %q is not a positive integer", f)
		}
		p.levels = append(p.levels, n)
	}
	return nil
}

func (p *params) String() string {
	return fmt.Sprintf("Create levels %v clients x %s each, ConfigMaps with %d B payload, JSON; watch: %d watchers x %d writes, %s apart.",
		p.levels, p.duration, p.payload, p.watchers, p.watchWrites, p.watchInterval)
}
