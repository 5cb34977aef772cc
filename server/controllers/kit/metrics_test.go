package kit

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/orch/orch/internal/metrics"
)

// TestMetricsQueueTickersAreSlow: a queue with metrics gets a clock whose
// tickers (client-go's 500 ms gauge refresh) tick every GaugePeriod, while
// its timers (AddAfter) keep their durations; without metrics the clock
// is the one given.
func TestMetricsQueueTickersAreSlow(t *testing.T) {
	fake := clocktesting.NewFakeClock(time.Unix(0, 0))
	mp, err := metrics.NewWorkqueue(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	cfg := MetricsQueueConfig("q", mp, fake)
	tk := cfg.Clock.NewTicker(500 * time.Millisecond)
	defer tk.Stop()
	tm := cfg.Clock.NewTimer(500 * time.Millisecond)
	fake.Step(time.Second)
	select {
	case <-tk.C():
		t.Fatal("a 500 ms ticker ticked after 1 s: want GaugePeriod")
	default:
	}
	select {
	case <-tm.C():
	default:
		t.Fatal("a 500 ms timer did not fire after 1 s")
	}
	fake.Step(GaugePeriod)
	select {
	case <-tk.C():
	default:
		t.Fatalf("the ticker did not tick after %v", GaugePeriod+time.Second)
	}
	if got := MetricsQueueConfig("q", nil, fake).Clock; got != clock.WithTicker(fake) {
		t.Errorf("without metrics the clock is %T, want the given one", got)
	}
}
