package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// Ref names one object a manifest file applied.
type Ref struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

func (r Ref) String() string {
	if r.Namespace == "" {
		return fmt.Sprintf("%s %s (%s)", r.Kind, r.Name, r.APIVersion)
	}
	return fmt.Sprintf("%s %s/%s (%s)", r.Kind, r.Namespace, r.Name, r.APIVersion)
}

// refOf returns the Ref of an object as written in the file.
func refOf(u *unstructured.Unstructured) Ref {
	return Ref{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// DocError is a document of a manifest file that could not be read.
type DocError struct {
	File  string
	Index int // 0-based index of the YAML document in the file
	Err   error
}

func (e *DocError) Error() string {
	return fmt.Sprintf("manifest %s: document %d: %v", e.File, e.Index, e.Err)
}

func (e *DocError) Unwrap() error { return e.Err }

// Parse splits a manifest file into objects: YAML documents separated by
// `---` (a .json file is one document), with `kind: List` (or any *List
// with items) expanded. Empty documents are skipped. Documents that cannot
// be read are returned as *DocError (joined) next to the good ones.
func Parse(file string, data []byte) ([]*unstructured.Unstructured, error) {
	docs, err := splitDocuments(file, data)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	var errs []error
	for i, doc := range docs {
		got, err := parseDocument(doc)
		if err != nil {
			errs = append(errs, &DocError{File: file, Index: i, Err: err})
			continue
		}
		objs = append(objs, got...)
	}
	return objs, errors.Join(errs...)
}

func splitDocuments(file string, data []byte) ([][]byte, error) {
	if strings.HasSuffix(file, ".json") {
		return [][]byte{data}, nil
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, &DocError{File: file, Index: len(docs), Err: err}
		}
		docs = append(docs, doc)
	}
}

// parseDocument reads one document: nothing (empty or only comments), one
// object, or the items of a list.
func parseDocument(doc []byte) ([]*unstructured.Unstructured, error) {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(js); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	obj := map[string]interface{}{}
	if err := json.Unmarshal(js, &obj); err != nil {
		return nil, fmt.Errorf("not an object: %w", err)
	}
	u := &unstructured.Unstructured{Object: obj}
	if items, ok := obj["items"].([]interface{}); ok && strings.HasSuffix(u.GetKind(), "List") {
		return listItems(items)
	}
	if err := checkObject(u); err != nil {
		return nil, err
	}
	return []*unstructured.Unstructured{u}, nil
}

func listItems(items []interface{}) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for i, it := range items {
		m, ok := it.(map[string]interface{})
		if !ok {
			return nil, fmt.Errorf("list item %d is not an object", i)
		}
		u := &unstructured.Unstructured{Object: m}
		if err := checkObject(u); err != nil {
			return nil, fmt.Errorf("list item %d: %w", i, err)
		}
		out = append(out, u)
	}
	return out, nil
}

func checkObject(u *unstructured.Unstructured) error {
	switch {
	case u.GetAPIVersion() == "":
		return errors.New("apiVersion is missing")
	case u.GetKind() == "":
		return errors.New("kind is missing")
	case u.GetName() == "":
		return fmt.Errorf("%s has no metadata.name (generateName cannot be applied)", u.GetKind())
	}
	return nil
}
