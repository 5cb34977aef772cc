package cgroups

import (
	"bufio"
	"fmt"
	"os"
	"testing"
)

// helperEnv selects a helper role when the test binary re-executes itself.
const helperEnv = "ORCH_CGROUPS_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "alloc":
		helperAlloc()
	case "oomscore":
		helperOOMScore()
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

// sink keeps the helper's allocations reachable.
var sink [][]byte

// helperAlloc waits for a line on stdin (the test moves it into a cgroup
// first), then allocates and touches 256 MiB, 1 MiB at a time.
func helperAlloc() {
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	for i := 0; i < 256; i++ {
		b := make([]byte, 1<<20)
		for j := 0; j < len(b); j += 4096 {
			b[j] = 1
		}
		sink = append(sink, b)
	}
	fmt.Println("survived")
	os.Exit(0)
}

// helperOOMScore waits for a line on stdin (the test sets its score first),
// prints its own /proc/self/oom_score_adj and exits.
func helperOOMScore() {
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	data, err := os.ReadFile("/proc/self/oom_score_adj")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Print(string(data))
	os.Exit(0)
}
