package cronjob

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
	batchv1 "k8s.io/api/batch/v1"
)

// tooManyMissed is upstream's bound on missed start times before warning.
const tooManyMissed = 100

// nextDelta is added to requeues so the schedule time has surely passed.
const nextDelta = 100 * time.Millisecond

var errBadInterval = errors.New("time difference between two schedules is less than 1 second")

// parseSchedule parses the schedule in the CronJob's time zone, as upstream.
func parseSchedule(cj *batchv1.CronJob) (cron.Schedule, error) {
	spec := cj.Spec.Schedule
	if tz := cj.Spec.TimeZone; tz != nil && !strings.Contains(spec, "TZ") {
		if _, err := time.LoadLocation(*tz); err != nil {
			return nil, fmt.Errorf("unknown time zone %q: %w", *tz, err)
		}
		spec = "TZ=" + *tz + " " + spec
	}
	return cron.ParseStandard(spec)
}

// mostRecentScheduleTime returns the latest schedule time in (earliest, now]
// (nil if none) and roughly how many were missed, ported from upstream.
func mostRecentScheduleTime(earliest, now time.Time, s cron.Schedule) (*time.Time, int64, error) {
	t1 := s.Next(earliest)
	t2 := s.Next(t1)
	if now.Before(t1) {
		return nil, 0, nil
	}
	if now.Before(t2) {
		return &t1, 1, nil
	}
	between := int64(t2.Sub(t1).Round(time.Second).Seconds())
	if between < 1 {
		return nil, 0, errBadInterval
	}
	missed := int64(now.Sub(t1).Seconds())/between + 1
	var recent time.Time
	start := t1.Add(time.Duration((missed-2)*between) * time.Second)
	if start.Before(earliest) {
		start = earliest
	}
	for t := s.Next(start); !t.After(now); t = s.Next(t) {
		recent = t
	}
	if recent.IsZero() { // an irregular schedule: walk from t1
		for t := t1; !t.After(now); t = s.Next(t) {
			recent = t
		}
	}
	return &recent, missed, nil
}

// earliestTime is where missed schedules are counted from: the last
// schedule (else the creation), or now-startingDeadlineSeconds if later.
func earliestTime(cj *batchv1.CronJob, now time.Time) time.Time {
	earliest := cj.CreationTimestamp.Time
	if cj.Status.LastScheduleTime != nil {
		earliest = cj.Status.LastScheduleTime.Time
	}
	if d := cj.Spec.StartingDeadlineSeconds; d != nil {
		if dl := now.Add(-time.Duration(*d) * time.Second); dl.After(earliest) {
			earliest = dl
		}
	}
	return earliest
}

// nextWait is how long until the schedule's next time after now.
func nextWait(s cron.Schedule, now time.Time) time.Duration {
	return s.Next(now).Sub(now) + nextDelta
}

// jobName is upstream's <cronjob>-<scheduled time in minutes>.
func jobName(cj *batchv1.CronJob, scheduled time.Time) string {
	return fmt.Sprintf("%s-%d", cj.Name, scheduled.Unix()/60)
}
