package registry

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/duration"
)

// col builds a column definition; priority 1 marks wide-only (-o wide) columns.
func col(name, typ string, priority int32, desc string) metav1.TableColumnDefinition {
	return metav1.TableColumnDefinition{Name: name, Type: typ, Priority: priority, Description: desc}
}

func ageColumn() metav1.TableColumnDefinition {
	return col("Age", "string", 0, metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"])
}

// age is the Age cell of obj: the human duration since creation, "<unknown>" if unset.
func age(obj runtime.Object) string {
	return translateTimestampSince(mustMeta(obj).GetCreationTimestamp())
}

// translateTimestampSince is printers.go's helper of the same name.
func translateTimestampSince(t metav1.Time) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

// translateMicroTimestampSince is the MicroTime variant.
func translateMicroTimestampSince(t metav1.MicroTime) string {
	if t.IsZero() {
		return "<unknown>"
	}
	return duration.HumanDuration(time.Since(t.Time))
}

// orNone returns s or "<none>" when empty, as kubectl prints missing values.
func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}
