package deploy

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, file, data string
		want             []string // kind/name
		wantErr          string
	}{
		{"multi-document", "a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# only a comment\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: b}\n",
			[]string{"ConfigMap/a", "Secret/b"}, ""},
		{"list", "l.yml", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: x}\n",
			[]string{"ConfigMap/x"}, ""},
		{"json", "j.json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j"}}`, []string{"ConfigMap/j"}, ""},
		{"bad document keeps the others", "b.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: [unclosed\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
			[]string{"ConfigMap/a", "ConfigMap/c"}, "manifest b.yaml: document 1:"},
		{"missing kind", "k.yaml", "apiVersion: v1\nmetadata: {name: a}\n", nil, "document 0: kind is missing"},
		{"no name", "n.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: a-}\n", nil, "no metadata.name"},
		{"scalar", "s.yaml", "just text\n", nil, "document 0: not an object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := Parse(tc.file, []byte(tc.data))
			var got []string
			for _, o := range objs {
				got = append(got, o.GetKind()+"/"+o.GetName())
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("objects %v, want %v", got, tc.want)
			}
			if tc.wantErr == "" && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if tc.wantErr != "" {
				var de *DocError
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &de) {
					t.Fatalf("error %v, want a DocError containing %q", err, tc.wantErr)
				}
			}
		})
	}
}

func TestLabelValueAndRecordName(t *testing.T) {
	if got := labelValue("my app_v1.2"); got != "my-app_v1.2" {
		t.Errorf("labelValue = %q", got)
	}
	if got := labelValue("--" + strings.Repeat("x", 80)); len(got) != 61 {
		t.Errorf("labelValue length %d", len(got))
	}
	n1, n2 := RecordName("Web App.yaml"), RecordName("web-app.yaml")
	if n1 == n2 || !strings.HasPrefix(n1, "orch-manifest-web-app.yaml-") || strings.ToLower(n1) != n1 {
		t.Errorf("record names %q %q", n1, n2)
	}
}
