package apiserver

import (
	"mime"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
)

// outputKind is the representation a client asked for in Accept.
type outputKind int

const (
	outObject  outputKind = iota // the object or list itself
	outTable                     // meta.k8s.io Table (kubectl get)
	outPartial                   // meta.k8s.io PartialObjectMetadata(List)
)

// output is the negotiated representation and its meta.k8s.io version.
type output struct {
	kind    outputKind
	version string // "v1" or "v1beta1" for Table and PartialObjectMetadata
	proto   bool   // application/vnd.kubernetes.protobuf (plain objects of typed resources)
}

const acceptedTypes = "application/json, application/yaml, application/vnd.kubernetes.protobuf, " +
	"application/json;as=Table;v=v1;g=meta.k8s.io, application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"

// negotiateOutput picks the first acceptable entry of Accept. Protobuf is
// acceptable for plain objects when protoOK (typed resources; custom
// resources have no protobuf form, as upstream), and skipped otherwise, as
// are unknown types; nothing acceptable is a 406.
func negotiateOutput(r *http.Request, list, protoOK bool) (output, error) {
	accept := r.Header.Get("Accept")
	if strings.TrimSpace(accept) == "" {
		return output{}, nil
	}
	for _, clause := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil {
			continue
		}
		if mt == runtime.ContentTypeProtobuf {
			if protoOK && params["as"] == "" {
				return output{proto: true}, nil
			}
			continue
		}
		if o, ok := acceptable(mt, params, list); ok {
			return o, nil
		}
	}
	return output{}, notAcceptable("only the following media types are accepted: " + acceptedTypes)
}

func acceptable(mt string, params map[string]string, list bool) (output, bool) {
	switch mt {
	case "application/json", "application/yaml", "application/*", "*/*":
	default:
		return output{}, false
	}
	as := params["as"]
	if as == "" {
		return output{}, true
	}
	if params["g"] != "meta.k8s.io" || (params["v"] != "v1" && params["v"] != "v1beta1") {
		return output{}, false
	}
	switch {
	case as == "Table":
		return output{kind: outTable, version: params["v"]}, true
	case as == "PartialObjectMetadata" && !list, as == "PartialObjectMetadataList" && list:
		return output{kind: outPartial, version: params["v"]}, true
	}
	return output{}, false
}

// wantsYAML is true when the client prefers YAML over JSON.
func wantsYAML(r *http.Request) bool {
	for _, clause := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(clause))
		if err != nil || params["as"] != "" {
			continue
		}
		switch mt {
		case "application/yaml":
			return true
		case "application/json", "application/*", "*/*":
			return false
		}
	}
	return false
}
