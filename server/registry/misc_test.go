package registry

import (
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestCronSchedule(t *testing.T) {
	for _, tc := range []struct {
		spec string
		ok   bool
	}{
		{"*/5 * * * *", true}, {"0 3 * * 1-5", true}, {"0 0 1 JAN,JUL ?", true}, {"@hourly", true},
		{"@every 90s", true}, {"15 10 * * sun", true}, {"0 0 * * 7", false}, {"61 * * * *", false},
		{"* * *", false}, {"@sometimes", false}, {"5-1 * * * *", false}, {"*/0 * * * *", false},
	} {
		if err := validateCronSchedule(tc.spec); (err == nil) != tc.ok {
			t.Errorf("%q: err %v, want ok=%v", tc.spec, err, tc.ok)
		}
	}
}

func TestEventConversionRoundTrip(t *testing.T) {
	now := metav1.NewMicroTime(time.Now().Truncate(time.Microsecond))
	v1 := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e", Namespace: "ns"}, EventTime: now,
		ReportingController: "orch.io/scheduler", ReportingInstance: "s1", Action: "Binding", Reason: "Scheduled",
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: "ns", Name: "p"}, Note: "assigned", Type: "Normal",
		Series: &eventsv1.EventSeries{Count: 2, LastObservedTime: now}}
	core := EventFromV1(v1)
	if core.Message != "assigned" || core.InvolvedObject.Name != "p" || core.Series.Count != 2 || core.APIVersion != "v1" {
		t.Fatalf("core: %+v", core)
	}
	back := EventToV1(core)
	back.TypeMeta = v1.TypeMeta
	if !apiequality.Semantic.DeepEqual(back, v1) {
		t.Fatalf("round trip:\n%+v\n%+v", back, v1)
	}
	r := resourceFor(t, "events.k8s.io", "events")
	requireNoErr(t, prepareCreate(t, r, v1.DeepCopy()))
	bad := v1.DeepCopy()
	bad.ReportingController = ""
	requireErr(t, prepareCreate(t, r, bad), field.ErrorTypeRequired, "reportingController")
}

// Every served kind round-trips through the scheme's JSON codec.
func TestSchemeDecodesEveryKind(t *testing.T) {
	s := NewScheme()
	codecs := serializer.NewCodecFactory(s)
	for _, r := range All(Config{}) {
		obj := r.New()
		mustMeta(obj).SetName("x")
		obj.GetObjectKind().SetGroupVersionKind(r.GroupVersion.WithKind(r.Kind))
		data, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		out, gvk, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
		if err != nil || gvk.Kind != r.Kind || mustMeta(out).GetName() != "x" {
			t.Errorf("%s: decode %v %v", r.Resource, gvk, err)
		}
	}
}
