package crd

import (
	"encoding/json"
	"maps"
	"sort"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	openapiv2 "k8s.io/apiextensions-apiserver/pkg/controller/openapi/v2"

	"github.com/orch/orch/server/openapi"
)

const metaPrefix = "io.k8s.apimachinery.pkg.apis.meta.v1."

// objectMetaClosure is ObjectMeta and what it refers to.
var objectMetaClosure = []string{metaPrefix + "ObjectMeta", metaPrefix + "ManagedFieldsEntry",
	metaPrefix + "OwnerReference", metaPrefix + "Time", metaPrefix + "FieldsV1", metaPrefix + "ListMeta"}

// metaSchemas loads the ObjectMeta schemas from the embedded core document once.
var metaSchemas = sync.OnceValues(func() (map[string]json.RawMessage, error) {
	return openapi.New().Components("api/v1", objectMetaClosure...)
})

// definitionName is upstream's schema name of a custom kind: the group
// reversed, the version, the kind (com.example.v1.Widget).
func definitionName(group, version, kind string) string {
	parts := strings.Split(group, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".") + "." + version + "." + kind
}

// gvDoc is the part of a group version's document one CRD contributes,
// and what it adds to the v2 document.
type gvDoc struct {
	schemas map[string]any
	paths   map[string]any
	v2defs  map[string]any
	v2paths map[string]any
}

// versionDoc returns what one served version of c adds to its group
// version's document: the kind and list schemas, and the object path whose
// get operation names the kind (kubectl explain finds kinds that way).
func versionDoc(c *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion) (gvDoc, error) {
	s, err := Structural(v.Schema.OpenAPIV3Schema)
	if err != nil {
		return gvDoc{}, err
	}
	schemas, err := versionSchemas(c, v, s, "#/components/schemas/")
	if err != nil {
		return gvDoc{}, err
	}
	v2defs, err := v2Schemas(c, v, s)
	if err != nil {
		return gvDoc{}, err
	}
	n := c.Status.AcceptedNames
	p := "/apis/" + c.Spec.Group + "/" + v.Name + "/" + n.Plural + "/{name}"
	if c.Spec.Scope == apiextensionsv1.NamespaceScoped {
		p = "/apis/" + c.Spec.Group + "/" + v.Name + "/namespaces/{namespace}/" + n.Plural + "/{name}"
	}
	ref := map[string]any{"$ref": "#/components/schemas/" + definitionName(c.Spec.Group, v.Name, n.Kind)}
	get := map[string]any{
		"description": "read the specified " + n.Kind, "operationId": "read" + n.Kind,
		"x-kubernetes-action":             "get",
		"x-kubernetes-group-version-kind": map[string]any{"group": c.Spec.Group, "version": v.Name, "kind": n.Kind},
		"responses": map[string]any{"200": map[string]any{"description": "OK",
			"content": map[string]any{"application/json": map[string]any{"schema": ref}}}},
	}
	get2 := maps.Clone(get)
	get2["responses"] = map[string]any{"200": map[string]any{"description": "OK",
		"schema": map[string]any{"$ref": "#/definitions/" + definitionName(c.Spec.Group, v.Name, n.Kind)}}}
	get2["produces"] = []any{"application/json", "application/yaml"}
	return gvDoc{schemas: schemas, paths: map[string]any{p: map[string]any{"get": get}},
		v2defs: v2defs, v2paths: map[string]any{p: map[string]any{"get": get2}}}, nil
}

// v2Schemas are versionSchemas for the v2 document. v2 cannot say what v3
// can (nullable, oneOf, ...): upstream's conversion prunes the schema
// first. A kind whose root keeps unknown fields is a bare object there
// (with its list), as upstream publishes it: kubectl's client-side
// validation would refuse unknown fields next to any property.
func v2Schemas(c *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion,
	s *structuralschema.Structural) (map[string]any, error) {
	if !s.XPreserveUnknownFields && !c.Spec.PreserveUnknownFields {
		return versionSchemas(c, v, openapiv2.ToStructuralOpenAPIV2(s), "#/definitions/")
	}
	defs, err := versionSchemas(c, v, s, "#/definitions/")
	if err != nil {
		return nil, err
	}
	name := definitionName(c.Spec.Group, v.Name, c.Status.AcceptedNames.Kind)
	kind := defs[name].(map[string]any)
	defs[name] = map[string]any{"type": "object", "x-kubernetes-group-version-kind": kind["x-kubernetes-group-version-kind"]}
	return defs, nil
}

// versionSchemas returns the schemas of one served version of c (s, its
// structural schema): the kind and its list, referring to each other and
// to ObjectMeta under refs ("#/components/schemas/" or "#/definitions/").
func versionSchemas(c *apiextensionsv1.CustomResourceDefinition, v apiextensionsv1.CustomResourceDefinitionVersion,
	s *structuralschema.Structural, refs string) (map[string]any, error) {
	raw, err := json.Marshal(s.ToKubeOpenAPI())
	if err != nil {
		return nil, err
	}
	kind := map[string]any{}
	if err := json.Unmarshal(raw, &kind); err != nil {
		return nil, err
	}
	props, _ := kind["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		kind["properties"] = props
	}
	props["apiVersion"] = map[string]any{"type": "string", "description": "APIVersion defines the versioned schema of this representation of an object."}
	props["kind"] = map[string]any{"type": "string", "description": "Kind is a string value representing the REST resource this object represents."}
	props["metadata"] = map[string]any{"allOf": []any{map[string]any{"$ref": refs + metaPrefix + "ObjectMeta"}},
		"description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"}
	n := c.Status.AcceptedNames
	gvk := func(k string) []any {
		return []any{map[string]any{"group": c.Spec.Group, "version": v.Name, "kind": k}}
	}
	kind["x-kubernetes-group-version-kind"] = gvk(n.Kind)
	name := definitionName(c.Spec.Group, v.Name, n.Kind)
	list := map[string]any{
		"type": "object", "required": []any{"items"}, "x-kubernetes-group-version-kind": gvk(n.ListKind),
		"description": n.ListKind + " is a list of " + n.Kind,
		"properties": map[string]any{
			"apiVersion": props["apiVersion"], "kind": props["kind"],
			"items":    map[string]any{"type": "array", "items": map[string]any{"$ref": refs + name}},
			"metadata": map[string]any{"allOf": []any{map[string]any{"$ref": refs + metaPrefix + "ListMeta"}}},
		},
	}
	return map[string]any{name: kind, definitionName(c.Spec.Group, v.Name, n.ListKind): list}, nil
}

// buildV2 gathers every group version's v2 definitions and paths.
func buildV2(byGV map[string]gvDoc) *openapi.V2Additions {
	defs, paths := map[string]any{}, map[string]any{}
	for _, d := range byGV {
		maps.Copy(defs, d.v2defs)
		maps.Copy(paths, d.v2paths)
	}
	b, err := json.Marshal(map[string]any{"definitions": defs, "paths": paths})
	if err != nil {
		return nil
	}
	return &openapi.V2Additions{JSON: b}
}

// buildDocs renders one v3 document per group version from what every
// custom kind in it contributes.
func buildDocs(byGV map[string]gvDoc) []openapi.Doc {
	meta, err := metaSchemas()
	if err != nil {
		meta = nil
	}
	names := make([]string, 0, len(byGV))
	for gv := range byGV {
		names = append(names, gv)
	}
	sort.Strings(names)
	var docs []openapi.Doc
	for _, gv := range names {
		schemas := map[string]any{}
		for k, v := range meta {
			schemas[k] = v
		}
		for k, v := range byGV[gv].schemas {
			schemas[k] = v
		}
		b, err := json.Marshal(map[string]any{
			"openapi": "3.0.0", "info": map[string]any{"title": "Kubernetes CRD Swagger", "version": "v0.1.0"},
			"paths": byGV[gv].paths, "components": map[string]any{"schemas": schemas},
		})
		if err == nil {
			docs = append(docs, openapi.NewDoc("apis/"+gv, b))
		}
	}
	return docs
}
