package snapshots

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

func TestNextTimes(t *testing.T) {
	loc := time.Local
	from := time.Date(2026, 3, 1, 5, 30, 0, 0, loc)
	for _, tc := range []struct {
		spec string
		want []time.Time
	}{
		{DefaultCron, []time.Time{time.Date(2026, 3, 1, 12, 0, 0, 0, loc), time.Date(2026, 3, 2, 0, 0, 0, 0, loc), time.Date(2026, 3, 2, 12, 0, 0, 0, loc)}},
		{"15 3 * * 1", []time.Time{time.Date(2026, 3, 2, 3, 15, 0, 0, loc), time.Date(2026, 3, 9, 3, 15, 0, 0, loc), time.Date(2026, 3, 16, 3, 15, 0, 0, loc)}},
		{"*/20 5 1 3 *", []time.Time{time.Date(2026, 3, 1, 5, 40, 0, 0, loc), time.Date(2027, 3, 1, 5, 0, 0, 0, loc), time.Date(2027, 3, 1, 5, 20, 0, 0, loc)}},
		{"@daily", []time.Time{time.Date(2026, 3, 2, 0, 0, 0, 0, loc), time.Date(2026, 3, 3, 0, 0, 0, 0, loc), time.Date(2026, 3, 4, 0, 0, 0, 0, loc)}},
	} {
		got, err := NextTimes(tc.spec, from, 3)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec, err)
		}
		for i := range got {
			if !got[i].Equal(tc.want[i]) {
				t.Errorf("%s: next[%d] = %v, want %v", tc.spec, i, got[i], tc.want[i])
			}
		}
	}
	for _, bad := range []string{"", "* * *", "61 * * * *", "0 */12 * * * *", "every day"} {
		if _, err := NextTimes(bad, from, 1); err == nil {
			t.Errorf("spec %q accepted", bad)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{ScheduleCron: DefaultCron, Retention: DefaultRetention}
	for _, tc := range []struct {
		name string
		c    Config
		ok   bool
	}{
		{"defaults", ok, true},
		{"restore path without reset", Config{ScheduleCron: DefaultCron, Retention: 5, RestorePath: "/x"}, false},
		{"restore", Config{ScheduleCron: DefaultCron, Retention: 5, RestorePath: "/x", ClusterReset: true}, true},
		{"bad cron", Config{ScheduleCron: "nope", Retention: 5}, false},
		{"zero retention", Config{ScheduleCron: DefaultCron}, false},
		{"disabled ignores schedule", Config{Disable: true, ScheduleCron: "nope"}, true},
	} {
		if err := tc.c.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate = %v", tc.name, err)
		}
	}
}

// TestRunSchedule runs a job on an @every schedule and stops with ctx.
func TestRunSchedule(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	runs := make(chan struct{}, 10)
	done := make(chan error, 1)
	go func() {
		done <- RunSchedule(ctx, "@every 1s", func(context.Context) { runs <- struct{}{} }, zaptest.NewLogger(t))
	}()
	for i := 0; i < 2; i++ {
		select {
		case <-runs:
		case <-time.After(30 * time.Second):
			t.Fatal("scheduled job did not run")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := RunSchedule(context.Background(), "bad", nil, zaptest.NewLogger(t)); err == nil {
		t.Fatal("bad spec accepted")
	}
}

// TestScheduledPrunes runs the scheduled job three times with retention 2.
func TestScheduledPrunes(t *testing.T) {
	s, _ := testStore(t, 1)
	dir := t.TempDir()
	job := Scheduled(s, dir, "n1", 2, zaptest.NewLogger(t))
	for i := 0; i < 3; i++ {
		job(context.Background())
		time.Sleep(1100 * time.Millisecond)
	}
	list, err := List(dir)
	if err != nil || len(list) != 2 {
		t.Fatalf("after 3 scheduled snapshots with retention 2: %+v, %v", list, err)
	}
}
