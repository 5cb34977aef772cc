package join

import (
	"fmt"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var schemaGR = schema.GroupResource{Resource: "paths"}

func methodNotAllowed(r *http.Request, allowed string) error {
	return apierrors.NewMethodNotSupported(schemaGR, fmt.Sprintf("%s on %s (allowed: %s)", r.Method, r.URL.Path, allowed))
}
