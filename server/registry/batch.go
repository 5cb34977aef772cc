package registry

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// Legacy job labels (batch.LegacyJobNameLabel, batch.LegacyControllerUidLabel).
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

func jobRules() rules {
	spec := field.NewPath("spec")
	return rules{
		generation:    true,
		defaults:      func(obj runtime.Object) { defaultJob(obj.(*batchv1.Job)) },
		prepareCreate: func(obj runtime.Object) { generateJobSelector(obj.(*batchv1.Job)) },
		validate: func(obj runtime.Object) field.ErrorList {
			j := obj.(*batchv1.Job)
			return append(validateGeneratedSelector(j), validateJobSpec(&j.Spec, spec, true)...)
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*batchv1.Job), old.(*batchv1.Job)
			return append(validateJobSpec(&n.Spec, spec, true), validateJobSpecUpdate(&n.Spec, &o.Spec, spec)...)
		},
		fields: func(obj runtime.Object, set fields.Set) {
			set["status.successful"] = strconv.Itoa(int(obj.(*batchv1.Job).Status.Succeeded))
		},
		columns: append([]metav1.TableColumnDefinition{
			col("Status", "string", 0, "Status of the job."),
			col("Completions", "string", 0, batchv1.JobStatus{}.SwaggerDoc()["succeeded"]),
			col("Duration", "string", 0, "Time required to complete the job."),
			ageColumn(),
		}, append(containerColumns, col("Selector", "string", 1, batchv1.JobSpec{}.SwaggerDoc()["selector"]))...),
		row: func(obj runtime.Object) []interface{} { return jobRow(obj.(*batchv1.Job)) },
	}
}

func defaultJob(j *batchv1.Job) {
	defaultPodSpec(&j.Spec.Template.Spec)
	s := &j.Spec
	if s.Completions == nil && s.Parallelism == nil {
		s.Completions, s.Parallelism = ptr.To[int32](1), ptr.To[int32](1)
	}
	if s.Parallelism == nil {
		s.Parallelism = ptr.To[int32](1)
	}
	if s.BackoffLimit == nil {
		if s.BackoffLimitPerIndex != nil {
			s.BackoffLimit = ptr.To[int32](math.MaxInt32)
		} else {
			s.BackoffLimit = ptr.To[int32](6)
		}
	}
	if s.Template.Labels != nil && len(j.Labels) == 0 {
		j.Labels = s.Template.Labels
	}
	if s.CompletionMode == nil {
		s.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	}
	if s.Suspend == nil {
		s.Suspend = ptr.To(false)
	}
	if s.PodReplacementPolicy == nil {
		if s.PodFailurePolicy != nil {
			s.PodReplacementPolicy = ptr.To(batchv1.Failed)
		} else {
			s.PodReplacementPolicy = ptr.To(batchv1.TerminatingOrFailed)
		}
	}
	if s.ManualSelector == nil {
		s.ManualSelector = ptr.To(false)
	}
	defaultPodFailurePolicy(s.PodFailurePolicy)
}

// generateJobSelector is the job strategy's generateSelector: unless
// manualSelector, label the template with the job name and uid and select the uid.
// It needs metadata.name and metadata.uid, which the API layer sets first.
func generateJobSelector(j *batchv1.Job) {
	if j.Spec.ManualSelector != nil && *j.Spec.ManualSelector {
		return
	}
	if j.Spec.Template.Labels == nil {
		j.Spec.Template.Labels = map[string]string{}
	}
	for _, k := range []string{legacyJobNameLabel, batchv1.JobNameLabel} {
		if _, ok := j.Spec.Template.Labels[k]; !ok {
			j.Spec.Template.Labels[k] = j.Name
		}
	}
	for _, k := range []string{legacyControllerUIDLabel, batchv1.ControllerUidLabel} {
		if _, ok := j.Spec.Template.Labels[k]; !ok {
			j.Spec.Template.Labels[k] = string(j.UID)
		}
	}
	if j.Spec.Selector == nil {
		j.Spec.Selector = &metav1.LabelSelector{}
	}
	if j.Spec.Selector.MatchLabels == nil {
		j.Spec.Selector.MatchLabels = map[string]string{}
	}
	if _, ok := j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel]; !ok {
		j.Spec.Selector.MatchLabels[batchv1.ControllerUidLabel] = string(j.UID)
	}
}

func validateGeneratedSelector(j *batchv1.Job) field.ErrorList {
	if (j.Spec.ManualSelector != nil && *j.Spec.ManualSelector) || j.Spec.Selector == nil {
		return nil
	}
	var errs field.ErrorList
	if j.UID == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "uid"), ""))
	}
	tp := field.NewPath("spec", "template", "metadata")
	want := map[string]string{legacyControllerUIDLabel: string(j.UID), legacyJobNameLabel: j.Name,
		batchv1.ControllerUidLabel: string(j.UID), batchv1.JobNameLabel: j.Name}
	for _, k := range []string{legacyControllerUIDLabel, legacyJobNameLabel, batchv1.ControllerUidLabel, batchv1.JobNameLabel} {
		if v, ok := j.Spec.Template.Labels[k]; !ok {
			errs = append(errs, field.Required(tp.Child("labels").Key(k), ""))
		} else if v != want[k] {
			errs = append(errs, field.Invalid(tp.Child("labels").Key(k), v, "must be '"+want[k]+"'"))
		}
	}
	if sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector); err == nil && !sel.Matches(labels.Set(want)) {
		errs = append(errs, field.Invalid(field.NewPath("spec", "selector"), j.Spec.Selector, "`selector` not auto-generated"))
	}
	return errs
}

// validateJobSpec ports the essentials of validateJobSpec; needSelector is
// false for the job templates of CronJobs.
func validateJobSpec(s *batchv1.JobSpec, p *field.Path, needSelector bool) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, nonNegative32(s.Parallelism, p.Child("parallelism"))...)
	errs = append(errs, nonNegative32(s.Completions, p.Child("completions"))...)
	if s.ActiveDeadlineSeconds != nil {
		errs = append(errs, nonNegative(*s.ActiveDeadlineSeconds, p.Child("activeDeadlineSeconds"))...)
	}
	errs = append(errs, nonNegative32(s.BackoffLimit, p.Child("backoffLimit"))...)
	errs = append(errs, nonNegative32(s.TTLSecondsAfterFinished, p.Child("ttlSecondsAfterFinished"))...)
	errs = append(errs, nonNegative32(s.BackoffLimitPerIndex, p.Child("backoffLimitPerIndex"))...)
	if m := s.CompletionMode; m != nil {
		errs = append(errs, oneOf(*m, p.Child("completionMode"), batchv1.NonIndexedCompletion, batchv1.IndexedCompletion)...)
		if *m == batchv1.IndexedCompletion && s.Completions == nil {
			errs = append(errs, field.Required(p.Child("completions"), "when completion mode is Indexed"))
		}
	}
	errs = append(errs, validateJobIndexing(s, p)...)
	errs = append(errs, validateJobPolicies(s, p)...)
	if needSelector {
		if s.Selector == nil {
			errs = append(errs, field.Required(p.Child("selector"), ""))
		} else {
			errs = append(errs, metav1validation.ValidateLabelSelector(s.Selector, metav1validation.LabelSelectorValidationOptions{}, p.Child("selector"))...)
			if sel, err := metav1.LabelSelectorAsSelector(s.Selector); err == nil && !sel.Matches(labels.Set(s.Template.Labels)) {
				errs = append(errs, field.Invalid(p.Child("template", "metadata", "labels"), s.Template.Labels, "`selector` does not match template `labels`"))
			}
		}
	}
	errs = append(errs, validatePodTemplate(&s.Template, p.Child("template"))...)
	if rp := s.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyOnFailure && rp != corev1.RestartPolicyNever {
		errs = append(errs, field.NotSupported(p.Child("template", "spec", "restartPolicy"), rp,
			[]string{string(corev1.RestartPolicyOnFailure), string(corev1.RestartPolicyNever)}))
	}
	return errs
}

// validateJobSpecUpdate: selector, completion mode, pod failure policy are
// immutable; the template too unless the job is suspended; completions only
// change for Indexed jobs in tandem with parallelism.
func validateJobSpecUpdate(n, o *batchv1.JobSpec, p *field.Path) field.ErrorList {
	errs := immutable(n.Selector, o.Selector, p.Child("selector"))
	errs = append(errs, immutable(n.CompletionMode, o.CompletionMode, p.Child("completionMode"))...)
	errs = append(errs, immutable(n.PodFailurePolicy, o.PodFailurePolicy, p.Child("podFailurePolicy"))...)
	errs = append(errs, immutable(n.BackoffLimitPerIndex, o.BackoffLimitPerIndex, p.Child("backoffLimitPerIndex"))...)
	errs = append(errs, immutable(n.ManagedBy, o.ManagedBy, p.Child("managedBy"))...)
	errs = append(errs, immutable(n.SuccessPolicy, o.SuccessPolicy, p.Child("successPolicy"))...)
	if !(o.Suspend != nil && *o.Suspend) {
		errs = append(errs, immutable(n.Template, o.Template, p.Child("template"))...)
	}
	indexed := n.CompletionMode != nil && *n.CompletionMode == batchv1.IndexedCompletion
	switch {
	case !indexed:
		errs = append(errs, immutable(n.Completions, o.Completions, p.Child("completions"))...)
	case !apiequality.Semantic.DeepEqual(n.Completions, o.Completions) && n.Completions != nil &&
		(n.Parallelism == nil || *n.Completions != *n.Parallelism):
		errs = append(errs, field.Invalid(p.Child("completions"), n.Completions, "can only be modified in tandem with spec.parallelism"))
	}
	return errs
}

func jobCondition(j *batchv1.Job, t batchv1.JobConditionType) bool {
	for _, c := range j.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// jobRow ports printJob.
func jobRow(j *batchv1.Job) []interface{} {
	var completions string
	if j.Spec.Completions != nil {
		completions = fmt.Sprintf("%d/%d", j.Status.Succeeded, *j.Spec.Completions)
	} else if par := ptr.Deref(j.Spec.Parallelism, 0); par > 1 {
		completions = fmt.Sprintf("%d/1 of %d", j.Status.Succeeded, par)
	} else {
		completions = fmt.Sprintf("%d/1", j.Status.Succeeded)
	}
	var dur string
	switch {
	case j.Status.StartTime == nil:
	case j.Status.CompletionTime == nil:
		dur = duration.HumanDuration(time.Since(j.Status.StartTime.Time))
	default:
		dur = duration.HumanDuration(j.Status.CompletionTime.Sub(j.Status.StartTime.Time))
	}
	status := "Running"
	switch {
	case jobCondition(j, batchv1.JobComplete):
		status = "Complete"
	case jobCondition(j, batchv1.JobFailed):
		status = "Failed"
	case j.DeletionTimestamp != nil:
		status = "Terminating"
	case jobCondition(j, batchv1.JobSuspended):
		status = "Suspended"
	case jobCondition(j, batchv1.JobFailureTarget):
		status = "FailureTarget"
	case jobCondition(j, batchv1.JobSuccessCriteriaMet):
		status = "SuccessCriteriaMet"
	}
	names, images := containerCells(j.Spec.Template.Spec.Containers)
	return []interface{}{status, completions, dur, age(j), names, images, metav1.FormatLabelSelector(j.Spec.Selector)}
}

func cronJobRules() rules {
	spec := field.NewPath("spec")
	return rules{
		generation: true,
		defaults:   func(obj runtime.Object) { defaultCronJob(obj.(*batchv1.CronJob)) },
		validate: func(obj runtime.Object) field.ErrorList {
			cj := obj.(*batchv1.CronJob)
			errs := validateCronJobSpec(&cj.Spec, nil, spec)
			if len(cj.Name) > 52 { // job names get an 11-character suffix
				errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), cj.Name, "must be no more than 52 characters"))
			}
			return errs
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			return validateCronJobSpec(&obj.(*batchv1.CronJob).Spec, &old.(*batchv1.CronJob).Spec, spec)
		},
		columns: append([]metav1.TableColumnDefinition{
			col("Schedule", "string", 0, batchv1.CronJobSpec{}.SwaggerDoc()["schedule"]),
			col("Timezone", "string", 0, batchv1.CronJobSpec{}.SwaggerDoc()["timeZone"]),
			col("Suspend", "boolean", 0, batchv1.CronJobSpec{}.SwaggerDoc()["suspend"]),
			col("Active", "integer", 0, batchv1.CronJobStatus{}.SwaggerDoc()["active"]),
			col("Last Schedule", "string", 0, batchv1.CronJobStatus{}.SwaggerDoc()["lastScheduleTime"]),
			ageColumn(),
		}, append(containerColumns, col("Selector", "string", 1, batchv1.JobSpec{}.SwaggerDoc()["selector"]))...),
		row: func(obj runtime.Object) []interface{} { return cronJobRow(obj.(*batchv1.CronJob)) },
	}
}

func defaultCronJob(c *batchv1.CronJob) {
	defaultPodSpec(&c.Spec.JobTemplate.Spec.Template.Spec)
	defaultPodFailurePolicy(c.Spec.JobTemplate.Spec.PodFailurePolicy)
	if c.Spec.ConcurrencyPolicy == "" {
		c.Spec.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	if c.Spec.Suspend == nil {
		c.Spec.Suspend = ptr.To(false)
	}
	if c.Spec.SuccessfulJobsHistoryLimit == nil {
		c.Spec.SuccessfulJobsHistoryLimit = ptr.To[int32](3)
	}
	if c.Spec.FailedJobsHistoryLimit == nil {
		c.Spec.FailedJobsHistoryLimit = ptr.To[int32](1)
	}
}

func validateCronJobSpec(s, old *batchv1.CronJobSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Schedule == "" {
		errs = append(errs, field.Required(p.Child("schedule"), ""))
	} else if err := validateCronSchedule(s.Schedule); err != nil {
		errs = append(errs, field.Invalid(p.Child("schedule"), s.Schedule, err.Error()))
	} else if strings.Contains(s.Schedule, "TZ") && (old == nil || !strings.Contains(old.Schedule, "TZ")) {
		errs = append(errs, field.Invalid(p.Child("schedule"), s.Schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
	}
	if tz := s.TimeZone; tz != nil && (old == nil || !ptr.Equal(old.TimeZone, tz)) {
		if _, err := time.LoadLocation(*tz); err != nil || *tz == "" || *tz == "Local" {
			errs = append(errs, field.Invalid(p.Child("timeZone"), *tz, "unknown time zone "+*tz))
		}
	}
	if s.StartingDeadlineSeconds != nil {
		errs = append(errs, nonNegative(*s.StartingDeadlineSeconds, p.Child("startingDeadlineSeconds"))...)
	}
	errs = append(errs, oneOf(s.ConcurrencyPolicy, p.Child("concurrencyPolicy"), batchv1.AllowConcurrent, batchv1.ForbidConcurrent, batchv1.ReplaceConcurrent)...)
	jp := p.Child("jobTemplate", "spec")
	errs = append(errs, validateJobSpec(&s.JobTemplate.Spec, jp, false)...)
	if s.JobTemplate.Spec.Selector != nil {
		errs = append(errs, field.Invalid(jp.Child("selector"), s.JobTemplate.Spec.Selector, "`selector` will be auto-generated"))
	}
	if m := s.JobTemplate.Spec.ManualSelector; m != nil && *m {
		errs = append(errs, field.NotSupported(jp.Child("manualSelector"), *m, []string{"nil", "false"}))
	}
	errs = append(errs, nonNegative32(s.SuccessfulJobsHistoryLimit, p.Child("successfulJobsHistoryLimit"))...)
	return append(errs, nonNegative32(s.FailedJobsHistoryLimit, p.Child("failedJobsHistoryLimit"))...)
}

// cronJobRow ports printCronJob.
func cronJobRow(c *batchv1.CronJob) []interface{} {
	last := "<none>"
	if c.Status.LastScheduleTime != nil {
		last = translateTimestampSince(*c.Status.LastScheduleTime)
	}
	tz := "<none>"
	if c.Spec.TimeZone != nil {
		tz = *c.Spec.TimeZone
	}
	suspend := "<unset>"
	if c.Spec.Suspend != nil {
		suspend = "False"
		if *c.Spec.Suspend {
			suspend = "True"
		}
	}
	names, images := containerCells(c.Spec.JobTemplate.Spec.Template.Spec.Containers)
	return []interface{}{c.Spec.Schedule, tz, suspend, int64(len(c.Status.Active)), last, age(c), names, images,
		metav1.FormatLabelSelector(c.Spec.JobTemplate.Spec.Selector)}
}
