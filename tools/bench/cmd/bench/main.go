// Command bench measures orch against the baseline (kube-apiserver on
// kine/SQLite): create throughput and latency, watch delivery latency,
// startup time and idle RSS. Everything runs on loopback; see docs/benchmarks.md.
//
//	bench run --orch BIN --kube-apiserver BIN --kine BIN --work-dir DIR --out-json F --out-md F
//	bench load --kubeconfig FILE   (drive an already running server)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"go.uber.org/zap"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log, err := zap.NewDevelopment()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: bench run|load [flags]")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "run":
		err = runCmd(ctx, log.Named("bench"), os.Args[2:])
	case "load":
		err = loadCmd(ctx, log.Named("bench"), os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q (want run or load)", os.Args[1])
	}
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		log.Error("bench failed", zap.Error(err))
		os.Exit(1)
	}
}
