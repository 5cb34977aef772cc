package crd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/util/jsonpath"
)

// table prints a custom resource with its additionalPrinterColumns (or
// Age when it has none), as upstream's table convertor does.
type table struct {
	defs  []metav1.TableColumnDefinition
	paths []*jsonpath.JSONPath
}

var ageColumn = apiextensionsv1.CustomResourceColumnDefinition{Name: "Age", Type: "date",
	Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"], JSONPath: ".metadata.creationTimestamp"}

func newTable(cols []apiextensionsv1.CustomResourceColumnDefinition) (*table, error) {
	if len(cols) == 0 {
		cols = []apiextensionsv1.CustomResourceColumnDefinition{ageColumn}
	}
	t := &table{defs: []metav1.TableColumnDefinition{{Name: "Name", Type: "string", Format: "name",
		Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]}}}
	for _, c := range cols {
		jp := jsonpath.New(c.Name)
		if err := jp.Parse(fmt.Sprintf("{%s}", c.JSONPath)); err != nil {
			return nil, fmt.Errorf("printer column %q: %w", c.Name, err)
		}
		jp.AllowMissingKeys(true)
		t.paths = append(t.paths, jp)
		t.defs = append(t.defs, metav1.TableColumnDefinition{Name: c.Name, Type: c.Type, Format: c.Format,
			Description: c.Description, Priority: c.Priority})
	}
	return t, nil
}

func (t *table) columns() []metav1.TableColumnDefinition { return t.defs }

func (t *table) row(u *unstructured.Unstructured) []interface{} {
	cells := []interface{}{u.GetName()}
	for i, jp := range t.paths {
		cells = append(cells, t.cell(jp, t.defs[i+1].Type, u.Object))
	}
	return cells
}

func (t *table) cell(jp *jsonpath.JSONPath, typ string, obj map[string]interface{}) interface{} {
	results, err := jp.FindResults(obj)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	if typ == "string" {
		var buf bytes.Buffer
		if err := jp.PrintResults(&buf, results[0]); err != nil {
			return nil
		}
		return buf.String()
	}
	return cellFor(typ, results[0][0])
}

// cellFor converts a JSON value to the column type; nil when it does not fit.
func cellFor(typ string, rv reflect.Value) interface{} {
	if !rv.IsValid() || !rv.CanInterface() {
		return nil
	}
	v := rv.Interface()
	switch typ {
	case "integer":
		switch n := v.(type) {
		case int64:
			return n
		case float64:
			return int64(n)
		case json.Number:
			if i, err := n.Int64(); err == nil {
				return i
			}
		}
	case "number":
		switch n := v.(type) {
		case int64:
			return float64(n)
		case float64:
			return n
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "date":
		if s, ok := v.(string); ok {
			ts, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return "<invalid>"
			}
			return duration.HumanDuration(time.Since(ts))
		}
	}
	return nil
}

// selectableField is one of a version's selectableFields.
type selectableField struct {
	name string // the field path without its leading dot, as field selectors name it
	path []string
}

func newSelectable(fs []apiextensionsv1.SelectableField) []selectableField {
	var out []selectableField
	for _, f := range fs {
		p := strings.TrimPrefix(f.JSONPath, ".")
		out = append(out, selectableField{name: p, path: strings.Split(p, ".")})
	}
	return out
}

func (f selectableField) value(obj map[string]interface{}) (string, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj, f.path...)
	if err != nil || !found || v == nil {
		return "", false
	}
	return fmt.Sprint(v), true
}
