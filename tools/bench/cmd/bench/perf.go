package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/orch/orch/tools/bench/internal/proc"
	"github.com/orch/orch/tools/bench/internal/servers"
)

// perfHook samples the server's CPU with `perf record -g` during the create
// level with the given client count. perf is optional: failures are logged.
func perfHook(log *zap.Logger, s *servers.Server, out string, clients int) levelHook {
	return func(n int) func() {
		if n != clients {
			return func() {}
		}
		pid := strconv.Itoa(s.Procs[0].Pid())
		p, err := proc.Start("perf", filepath.Join(filepath.Dir(out), "perf-record.log"), "perf",
			"record", "-F", "499", "-g", "-p", pid, "-o", out)
		if err != nil {
			log.Warn("perf not started", zap.Error(err))
			return func() {}
		}
		time.Sleep(500 * time.Millisecond) // let perf attach
		return func() {
			// perf writes its data file on SIGINT/SIGTERM.
			if err := p.Stop(30 * time.Second); err != nil {
				log.Warn("perf stop", zap.Error(err))
			}
		}
	}
}

// pprofHook fetches a Go CPU profile from orch's pprof endpoint (loopback)
// covering the create level with the given client count.
func pprofHook(log *zap.Logger, addr, out string, clients int, d time.Duration) levelHook {
	return func(n int) func() {
		if n != clients {
			return func() {}
		}
		secs := max(1, int(d.Seconds())-1)
		done := make(chan struct{}, 2)
		go func() {
			defer func() { done <- struct{}{} }()
			if err := fetchProfile("http://"+addr+"/debug/pprof/profile?seconds="+strconv.Itoa(secs), out); err != nil {
				log.Warn("pprof profile", zap.Error(err))
			}
		}()
		// Halfway through, where are the goroutines waiting? (Shows what a
		// server that is not CPU-bound is blocked on.)
		go func() {
			defer func() { done <- struct{}{} }()
			time.Sleep(d / 2)
			gout := strings.TrimSuffix(out, filepath.Ext(out)) + "-goroutines.txt"
			if err := fetchProfile("http://"+addr+"/debug/pprof/goroutine?debug=1", gout); err != nil {
				log.Warn("pprof goroutines", zap.Error(err))
			}
		}()
		return func() { <-done; <-done }
	}
}

func fetchProfile(url, out string) error {
	client := &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Get(url)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: HTTP %d", url, resp.StatusCode)
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("create %s: %w", out, err)
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
