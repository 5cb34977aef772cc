package registry

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	eventReportingInstanceLimit = 128
	eventActionLimit            = 128
	eventReasonLimit            = 128
	eventNoteLimit              = 1024
)

// eventColumns are the upstream event columns; the first is "Last Seen", not Name.
var eventColumns = []metav1.TableColumnDefinition{
	col("Last Seen", "string", 0, corev1.Event{}.SwaggerDoc()["lastTimestamp"]),
	col("Type", "string", 0, corev1.Event{}.SwaggerDoc()["type"]),
	col("Reason", "string", 0, corev1.Event{}.SwaggerDoc()["reason"]),
	col("Object", "string", 0, corev1.Event{}.SwaggerDoc()["involvedObject"]),
	col("Subobject", "string", 1, corev1.Event{}.InvolvedObject.SwaggerDoc()["fieldPath"]),
	col("Source", "string", 1, corev1.Event{}.SwaggerDoc()["source"]),
	col("Message", "string", 0, corev1.Event{}.SwaggerDoc()["message"]),
	col("First Seen", "string", 1, corev1.Event{}.SwaggerDoc()["firstTimestamp"]),
	col("Count", "string", 1, corev1.Event{}.SwaggerDoc()["count"]),
	{Name: "Name", Type: "string", Format: "name", Priority: 1, Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
}

func eventRules() rules {
	return rules{
		validate: func(obj runtime.Object) field.ErrorList {
			return validateLegacyEvent(obj.(*corev1.Event), "reportingComponent")
		},
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*corev1.Event), old.(*corev1.Event)
			errs := validateLegacyEvent(n, "reportingComponent")
			errs = append(errs, immutable(n.InvolvedObject, o.InvolvedObject, field.NewPath("involvedObject"))...)
			return errs
		},
		fields:     func(obj runtime.Object, set fields.Set) { coreEventFields(obj.(*corev1.Event), set) },
		ownColumns: true,
		columns:    eventColumns,
		row:        func(obj runtime.Object) []interface{} { return eventRow(obj.(*corev1.Event)) },
	}
}

// validateLegacyEvent ports legacyValidateEvent for core/v1 requests.
func validateLegacyEvent(e *corev1.Event, controllerField string) field.ErrorList {
	var errs field.ErrorList
	nsPath := field.NewPath("involvedObject", "namespace")
	mismatch := field.Invalid(nsPath, e.InvolvedObject.Namespace, "does not match event.namespace")
	if e.EventTime.IsZero() {
		if e.InvolvedObject.Namespace == "" {
			if e.Namespace != metav1.NamespaceNone && e.Namespace != metav1.NamespaceDefault {
				errs = append(errs, mismatch)
			}
		} else if e.Namespace != e.InvolvedObject.Namespace {
			errs = append(errs, mismatch)
		}
		return errs
	}
	if e.InvolvedObject.Namespace == "" && e.Namespace != metav1.NamespaceDefault && e.Namespace != metav1.NamespaceSystem {
		errs = append(errs, mismatch)
	}
	return append(errs, validateReporting(e.ReportingController, e.ReportingInstance, e.Action, e.Reason, e.Message, controllerField, "message")...)
}

func validateReporting(controller, instance, action, reason, note, controllerField, noteField string) field.ErrorList {
	var errs field.ErrorList
	if controller == "" {
		errs = append(errs, field.Required(field.NewPath(controllerField), ""))
	} else {
		errs = append(errs, msgs(controller, field.NewPath(controllerField), validation.IsQualifiedName(controller))...)
	}
	for _, c := range []struct {
		name, v string
		limit   int
	}{{"reportingInstance", instance, eventReportingInstanceLimit}, {"action", action, eventActionLimit}, {"reason", reason, eventReasonLimit}} {
		if c.v == "" {
			errs = append(errs, field.Required(field.NewPath(c.name), ""))
		} else if len(c.v) > c.limit {
			errs = append(errs, field.Invalid(field.NewPath(c.name), "", fmt.Sprintf("can have at most %v characters", c.limit)))
		}
	}
	if len(note) > eventNoteLimit {
		errs = append(errs, field.Invalid(field.NewPath(noteField), "", fmt.Sprintf("can have at most %v characters", eventNoteLimit)))
	}
	return errs
}

func coreEventFields(e *corev1.Event, set fields.Set) {
	o := e.InvolvedObject
	set["involvedObject.kind"] = o.Kind
	set["involvedObject.namespace"] = o.Namespace
	set["involvedObject.name"] = o.Name
	set["involvedObject.uid"] = string(o.UID)
	set["involvedObject.apiVersion"] = o.APIVersion
	set["involvedObject.resourceVersion"] = o.ResourceVersion
	set["involvedObject.fieldPath"] = o.FieldPath
	set["reason"] = e.Reason
	set["reportingComponent"] = e.ReportingController
	set["source"] = firstNonEmpty(e.Source.Component, e.ReportingController) // as upstream's event strategy
	set["type"] = e.Type
}

// eventRow ports printEvent (wide cells, as kube-apiserver always prints them).
func eventRow(e *corev1.Event) []interface{} {
	first := translateTimestampSince(e.FirstTimestamp)
	if e.FirstTimestamp.IsZero() {
		first = translateMicroTimestampSince(e.EventTime)
	}
	last := translateTimestampSince(e.LastTimestamp)
	if e.LastTimestamp.IsZero() {
		last = first
	}
	count := e.Count
	if e.Series != nil {
		last = translateMicroTimestampSince(e.Series.LastObservedTime)
		count = e.Series.Count
	} else if count == 0 {
		count = 1
	}
	target := strings.ToLower(e.InvolvedObject.Kind)
	if e.InvolvedObject.Name != "" {
		target += "/" + e.InvolvedObject.Name
	}
	source := firstNonEmpty(e.Source.Component, e.ReportingController)
	if inst := firstNonEmpty(e.Source.Host, e.ReportingInstance); inst != "" {
		source += ", " + inst
	}
	return []interface{}{last, e.Type, e.Reason, target, e.InvolvedObject.FieldPath, source,
		strings.TrimSpace(e.Message), first, int64(count), e.Name}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func eventsV1Rules() rules {
	return rules{
		validate: func(obj runtime.Object) field.ErrorList { return validateEventV1(obj.(*eventsv1.Event)) },
		validateUpdate: func(obj, old runtime.Object) field.ErrorList {
			n, o := obj.(*eventsv1.Event), old.(*eventsv1.Event)
			var errs field.ErrorList
			for _, c := range []struct {
				name     string
				now, was interface{}
			}{{"regarding", n.Regarding, o.Regarding}, {"reason", n.Reason, o.Reason}, {"note", n.Note, o.Note},
				{"type", n.Type, o.Type}, {"action", n.Action, o.Action}, {"related", n.Related, o.Related},
				{"reportingController", n.ReportingController, o.ReportingController},
				{"reportingInstance", n.ReportingInstance, o.ReportingInstance}} {
				errs = append(errs, immutable(c.now, c.was, field.NewPath(c.name))...)
			}
			return append(errs, validateEventV1Series(n)...)
		},
		fields: func(obj runtime.Object, set fields.Set) {
			e := obj.(*eventsv1.Event)
			coreEventFields(eventV1AsCore(e), set)
			set["regarding.kind"], set["regarding.namespace"], set["regarding.name"] = e.Regarding.Kind, e.Regarding.Namespace, e.Regarding.Name
			set["regarding.uid"], set["regarding.apiVersion"] = string(e.Regarding.UID), e.Regarding.APIVersion
			set["regarding.resourceVersion"], set["regarding.fieldPath"] = e.Regarding.ResourceVersion, e.Regarding.FieldPath
			set["reportingController"] = e.ReportingController
		},
		ownColumns: true,
		columns:    eventColumns,
		row:        func(obj runtime.Object) []interface{} { return eventRow(eventV1AsCore(obj.(*eventsv1.Event))) },
	}
}

// validateEventV1 ports ValidateEventCreate for events.k8s.io/v1.
func validateEventV1(e *eventsv1.Event) field.ErrorList {
	var errs field.ErrorList
	if e.EventTime.IsZero() {
		errs = append(errs, field.Required(field.NewPath("eventTime"), ""))
	}
	if e.Type != corev1.EventTypeNormal && e.Type != corev1.EventTypeWarning {
		errs = append(errs, field.Invalid(field.NewPath("type"), "", fmt.Sprintf("has invalid value: %v", e.Type)))
	}
	if !e.DeprecatedFirstTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("deprecatedFirstTimestamp"), "", "needs to be unset"))
	}
	if !e.DeprecatedLastTimestamp.IsZero() {
		errs = append(errs, field.Invalid(field.NewPath("deprecatedLastTimestamp"), "", "needs to be unset"))
	}
	if e.DeprecatedCount != 0 {
		errs = append(errs, field.Invalid(field.NewPath("deprecatedCount"), "", "needs to be unset"))
	}
	if e.DeprecatedSource.Component != "" || e.DeprecatedSource.Host != "" {
		errs = append(errs, field.Invalid(field.NewPath("deprecatedSource"), "", "needs to be unset"))
	}
	if e.Regarding.Namespace == "" && e.Namespace != metav1.NamespaceDefault && e.Namespace != metav1.NamespaceSystem {
		errs = append(errs, field.Invalid(field.NewPath("regarding", "namespace"), e.Regarding.Namespace, "does not match event.namespace"))
	}
	errs = append(errs, validateReporting(e.ReportingController, e.ReportingInstance, e.Action, e.Reason, e.Note, "reportingController", "note")...)
	return append(errs, validateEventV1Series(e)...)
}

func validateEventV1Series(e *eventsv1.Event) field.ErrorList {
	var errs field.ErrorList
	if e.Series != nil {
		if e.Series.Count < 2 {
			errs = append(errs, field.Invalid(field.NewPath("series", "count"), "", "should be at least 2"))
		}
		if e.Series.LastObservedTime.IsZero() {
			errs = append(errs, field.Required(field.NewPath("series", "lastObservedTime"), ""))
		}
	}
	return errs
}

// eventV1AsCore converts an events.k8s.io/v1 Event to core/v1 the way
// kube-apiserver's conversion does (both are one resource upstream).
func eventV1AsCore(e *eventsv1.Event) *corev1.Event {
	out := &corev1.Event{
		ObjectMeta:          e.ObjectMeta,
		InvolvedObject:      e.Regarding,
		Reason:              e.Reason,
		Message:             e.Note,
		Source:              e.DeprecatedSource,
		FirstTimestamp:      e.DeprecatedFirstTimestamp,
		LastTimestamp:       e.DeprecatedLastTimestamp,
		Count:               e.DeprecatedCount,
		Type:                e.Type,
		EventTime:           e.EventTime,
		Related:             e.Related,
		ReportingController: e.ReportingController,
		ReportingInstance:   e.ReportingInstance,
		Action:              e.Action,
	}
	if e.Series != nil {
		out.Series = &corev1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

// EventToV1 converts a core/v1 Event to events.k8s.io/v1, the inverse of
// eventV1AsCore; the API layer can use the pair to serve one stored Event
// through both group versions, as kube-apiserver does.
func EventToV1(e *corev1.Event) *eventsv1.Event {
	out := &eventsv1.Event{
		TypeMeta:                 metav1.TypeMeta{APIVersion: eventsv1.SchemeGroupVersion.String(), Kind: "Event"},
		ObjectMeta:               e.ObjectMeta,
		EventTime:                e.EventTime,
		ReportingController:      e.ReportingController,
		ReportingInstance:        e.ReportingInstance,
		Action:                   e.Action,
		Reason:                   e.Reason,
		Regarding:                e.InvolvedObject,
		Related:                  e.Related,
		Note:                     e.Message,
		Type:                     e.Type,
		DeprecatedSource:         e.Source,
		DeprecatedFirstTimestamp: e.FirstTimestamp,
		DeprecatedLastTimestamp:  e.LastTimestamp,
		DeprecatedCount:          e.Count,
	}
	if e.Series != nil {
		out.Series = &eventsv1.EventSeries{Count: e.Series.Count, LastObservedTime: e.Series.LastObservedTime}
	}
	return out
}

// eventsV1StoredAsCore serves events.k8s.io/v1 Events from the core/v1
// Events' storage, as kube-apiserver does: one Event, two group versions
// (an event a client reports through events.k8s.io is listed by kubectl get
// events and selected by the core field selectors).
func eventsV1StoredAsCore() *StoredAs {
	return &StoredAs{GroupVersion: corev1.SchemeGroupVersion, New: objs[corev1.Event](),
		ToStorage:   func(o runtime.Object) (runtime.Object, error) { return EventFromV1(o.(*eventsv1.Event)), nil },
		FromStorage: func(o runtime.Object) (runtime.Object, error) { return EventToV1(o.(*corev1.Event)), nil }}
}

// EventFromV1 converts an events.k8s.io/v1 Event to core/v1.
func EventFromV1(e *eventsv1.Event) *corev1.Event {
	out := eventV1AsCore(e)
	out.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Event"}
	return out
}
