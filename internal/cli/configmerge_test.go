package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeConfigDir writes config.yaml (unless main is "-") and drop-ins
// (name -> content) into config.yaml.d, and returns config.yaml's path.
func writeConfigDir(t *testing.T, main string, dropIns map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "config.yaml")
	if main != "-" {
		if err := os.WriteFile(p, []byte(main), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(p+".d", 0o700); err != nil {
		t.Fatal(err)
	}
	for name, content := range dropIns {
		if err := os.WriteFile(filepath.Join(p+".d", name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// TestConfigDropInsK3sExample is the example of k3s's documentation:
// later files override scalars and lists, "key+" appends.
func TestConfigDropInsK3sExample(t *testing.T) {
	p := writeConfigDir(t, "token: boop\nnode-label:\n  - foo=bar\n  - bar=baz\n", map[string]string{
		"test1.yaml": "write-kubeconfig-mode: 600\nnode-taint:\n  - alice=bob:NoExecute\n",
		"test2.yaml": "write-kubeconfig-mode: 777\nnode-label:\n  - other=what\n  - foo=three\nnode-taint+:\n  - charlie=delta:NoSchedule\n",
		"notes.txt":  "not: read\n",
	})
	got, err := runServerFlags(t, "--config", p)
	if err != nil {
		t.Fatal(err)
	}
	if got.Token != "boop" || got.WriteKubeconfigMode != 0o777 {
		t.Errorf("token %q mode %o, want boop 777", got.Token, got.WriteKubeconfigMode)
	}
	if strings.Join(got.NodeLabels, ",") != "other=what,foo=three" {
		t.Errorf("node-label %v: a later plain key replaces the list", got.NodeLabels)
	}
	if strings.Join(got.NodeTaints, ",") != "alice=bob:NoExecute,charlie=delta:NoSchedule" {
		t.Errorf("node-taint %v: key+ appends", got.NodeTaints)
	}
}

func TestConfigDropInsOrderAndAppend(t *testing.T) {
	p := writeConfigDir(t, "tls-san: [a]\ncluster-domain: main.local\n", map[string]string{
		"20-b.yaml": "tls-san+: c\ncluster-domain: b.local\n",
		"10-a.yaml": "tls-san+: [b]\ncluster-domain: a.local\n",
	})
	got, err := runServerFlags(t, "--config", p)
	if err != nil {
		t.Fatal(err)
	}
	if got.ClusterDomain != "b.local" || strings.Join(got.TLSSANs, ",") != "a,b,c" {
		t.Errorf("cluster-domain %q tls-san %v, want b.local and a,b,c (lexical order)", got.ClusterDomain, got.TLSSANs)
	}
	got, err = runServerFlags(t, "--config", p, "--tls-san", "flag")
	if err != nil || strings.Join(got.TLSSANs, ",") != "flag" {
		t.Errorf("the command line must win over merged files: %v %v", got.TLSSANs, err)
	}
}

func TestConfigDropInsWithoutMainFile(t *testing.T) {
	p := writeConfigDir(t, "-", map[string]string{"x.yaml": "node-label+: [a=b]\n"})
	// An explicit --config that is missing stays an error...
	if _, err := runServerFlags(t, "--config", p); err == nil {
		t.Fatal("a missing explicit --config must fail")
	}
	// ...while its drop-ins apply when the file is the (optional) default.
	sources, err := readConfigSources(p, true)
	if err != nil || len(sources) != 1 {
		t.Fatalf("sources %v err %v", sources, err)
	}
	merged, err := mergeConfig(sources)
	if err != nil || len(merged["node-label"].value.([]interface{})) != 1 {
		t.Fatalf("merged %v err %v", merged, err)
	}
}

func TestConfigDropInsErrors(t *testing.T) {
	tests := []struct {
		name    string
		main    string
		dropIns map[string]string
		want    []string
	}{
		{"unknown key names drop-in and key", "data-dir: /x\n", map[string]string{"50-x.yaml": "no-such-flag: 1\n"},
			[]string{"config.yaml.d/50-x.yaml", `unknown key "no-such-flag"`}},
		{"append to a scalar", "cluster-domain: a\n", map[string]string{"a.yaml": "cluster-domain+: [b]\n"},
			[]string{"config.yaml.d/a.yaml", `key "cluster-domain+"`, "not a list"}},
		{"list for a scalar flag", "", map[string]string{"a.yaml": "cluster-domain+: [b]\n"},
			[]string{"config.yaml.d/a.yaml", `key "cluster-domain"`, "a list is not a value"}},
		{"bad YAML names the file", "", map[string]string{"bad.yaml": "a: [\n"},
			[]string{"config.yaml.d/bad.yaml"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := writeConfigDir(t, tc.main, tc.dropIns)
			_, err := runServerFlags(t, "--config", p)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
