// Package cronjob is kube-controller-manager's CronJob controller (v2) for
// orch: it creates a Job named <cronjob>-<scheduled time in minutes> from
// spec.jobTemplate at each time of spec.schedule (standard 5-field cron or a
// @descriptor, parsed by robfig/cron as upstream, in spec.timeZone), obeying
// suspend, startingDeadlineSeconds (a start later than that is skipped with a
// MissSchedule event; more than 100 missed starts give a TooManyMissedTimes
// warning) and concurrencyPolicy (Allow, Forbid: skip while a Job runs,
// Replace: delete the running Jobs first). It keeps status.active,
// lastScheduleTime and lastSuccessfulTime, deletes finished Jobs beyond
// successfulJobsHistoryLimit/failedJobsHistoryLimit, and requeues each
// CronJob for its next schedule time instead of polling.
package cronjob
