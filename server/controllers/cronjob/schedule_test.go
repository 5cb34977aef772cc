package cronjob

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestMostRecentScheduleTime(t *testing.T) {
	for _, tc := range []struct {
		name, schedule string
		earliest, now  string
		want           string // "" = none
		missed         int64
		wantErr        bool
	}{
		{"not yet", "*/5 * * * *", "2026-01-01T10:00:00Z", "2026-01-01T10:04:59Z", "", 0, false},
		{"exactly one", "*/5 * * * *", "2026-01-01T10:00:00Z", "2026-01-01T10:05:30Z", "2026-01-01T10:05:00Z", 1, false},
		{"several missed", "*/1 * * * *", "2026-01-01T10:00:00Z", "2026-01-01T10:10:30Z", "2026-01-01T10:10:00Z", 10, false},
		{"hourly", "@hourly", "2026-01-01T10:00:00Z", "2026-01-01T13:30:00Z", "2026-01-01T13:00:00Z", 3, false},
		{"daily", "@daily", "2026-01-01T10:00:00Z", "2026-01-03T01:00:00Z", "2026-01-03T00:00:00Z", 2, false},
		{"every 90s", "@every 90s", "2026-01-01T10:00:00Z", "2026-01-01T10:05:00Z", "2026-01-01T10:04:30Z", 3, false},
		{"irregular", "30 6-16/4 * * 1-5", "2026-01-05T00:00:00Z", "2026-01-05T15:00:00Z", "2026-01-05T14:30:00Z", 3, false},
		{"too many", "*/1 * * * *", "2026-01-01T00:00:00Z", "2026-01-02T00:00:30Z", "2026-01-02T00:00:00Z", 1440, false},
		{"impossible date", "59 23 31 2 *", "2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z", "", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseSchedule(&batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: tc.schedule, TimeZone: ptr.To("UTC")}})
			if err != nil {
				t.Fatal(err)
			}
			got, missed, err := mostRecentScheduleTime(at(tc.earliest), at(tc.now), s)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v", err)
			}
			switch {
			case tc.want == "" && got != nil && !got.IsZero():
				t.Fatalf("got %v, want none", got)
			case tc.want != "" && (got == nil || !got.Equal(at(tc.want))):
				t.Fatalf("got %v, want %s", got, tc.want)
			case missed != tc.missed:
				t.Fatalf("missed %d, want %d", missed, tc.missed)
			}
		})
	}
}

func TestEarliestTimeAndName(t *testing.T) {
	created := at("2026-01-01T00:00:00Z")
	now := at("2026-01-01T10:00:00Z")
	cj := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "hello", CreationTimestamp: metav1.NewTime(created)}}
	if got := earliestTime(cj, now); !got.Equal(created) {
		t.Fatalf("earliest %v", got)
	}
	cj.Status.LastScheduleTime = ptr.To(metav1.NewTime(at("2026-01-01T09:00:00Z")))
	if got := earliestTime(cj, now); !got.Equal(at("2026-01-01T09:00:00Z")) {
		t.Fatalf("earliest %v", got)
	}
	cj.Spec.StartingDeadlineSeconds = ptr.To[int64](60)
	if got := earliestTime(cj, now); !got.Equal(at("2026-01-01T09:59:00Z")) {
		t.Fatalf("earliest with deadline %v", got)
	}
	if got := jobName(cj, at("2026-01-01T10:00:00Z")); got != "hello-29454360" {
		t.Fatalf("job name %s", got)
	}
}

func TestTimeZone(t *testing.T) {
	s, err := parseSchedule(&batchv1.CronJob{Spec: batchv1.CronJobSpec{Schedule: "0 9 * * *", TimeZone: ptr.To("Europe/Berlin")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Next(at("2026-01-01T00:00:00Z")); !got.Equal(at("2026-01-01T08:00:00Z")) {
		t.Fatalf("next 09:00 Berlin = %v, want 08:00 UTC", got.UTC())
	}
}
