// Command webhook is a test workload: a TLS admission webhook (certificate
// and key from /tls) whose /validate denies ConfigMaps labelled deny=yes and
// whose /mutate adds the label mutated=yes, speaking AdmissionReview v1.
package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func main() {
	http.HandleFunc("/validate", func(w http.ResponseWriter, r *http.Request) { serve(w, r, validate) })
	http.HandleFunc("/mutate", func(w http.ResponseWriter, r *http.Request) { serve(w, r, mutate) })
	fmt.Println("WEBHOOK STARTED")
	err := http.ListenAndServeTLS(":8443", "/tls/tls.crt", "/tls/tls.key", nil)
	fmt.Println("SERVE ERR", err)
	os.Exit(1)
}

type labels struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
}

func serve(w http.ResponseWriter, r *http.Request, decide func(labels, *admissionv1.AdmissionResponse)) {
	var review admissionv1.AdmissionReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
		http.Error(w, "bad review", http.StatusBadRequest)
		return
	}
	var obj labels
	_ = json.Unmarshal(review.Request.Object.Raw, &obj)
	resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	decide(obj, resp)
	review.Request, review.Response = nil, resp
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

func validate(obj labels, resp *admissionv1.AdmissionResponse) {
	if obj.Metadata.Labels["deny"] == "yes" {
		resp.Allowed = false
		resp.Result = &metav1.Status{Code: 403, Message: "denied by the pod webhook"}
	}
}

func mutate(obj labels, resp *admissionv1.AdmissionResponse) {
	op := `{"op":"add","path":"/metadata/labels","value":{"mutated":"yes"}}`
	if len(obj.Metadata.Labels) > 0 {
		op = `{"op":"add","path":"/metadata/labels/mutated","value":"yes"}`
	}
	pt := admissionv1.PatchTypeJSONPatch
	resp.Patch, resp.PatchType = []byte("["+op+"]"), &pt
}
