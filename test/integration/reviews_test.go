package integration

import (
	"net/http"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/orch/orch/test/testutil"
)

func init() {
	register("ReviewsHaveNoTable", testReviewsHaveNoTable)
}

// testReviewsHaveNoTable: a review asked for as a Table is refused with
// 406 (it has no table form), as upstream; as JSON it is answered.
func testReviewsHaveNoTable(t *testing.T, s *testutil.Server) {
	sar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
		NonResourceAttributes: &authorizationv1.NonResourceAttributes{Path: "/", Verb: "get"}}}
	rc := s.Clientset.AuthorizationV1().RESTClient()
	err := rc.Post().Resource("selfsubjectaccessreviews").SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		Body(sar).Do(ctxT(t)).Error()
	if se, ok := err.(apierrors.APIStatus); !ok || se.Status().Code != http.StatusNotAcceptable {
		t.Fatalf("review as a Table: %v, want 406", err)
	}
	var out authorizationv1.SelfSubjectAccessReview
	must(t, rc.Post().Resource("selfsubjectaccessreviews").Body(sar).Do(ctxT(t)).Into(&out), "review as JSON")
	if !out.Status.Allowed {
		t.Fatalf("admin may get /: %+v", out.Status)
	}
}
