package kubectl

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"
)

// fakeEnv is the in-memory twin of OSEnv: vars, and per-path CanRead errors
// (a path not in files does not exist).
type fakeEnv struct {
	vars  map[string]string
	files map[string]error
}

func (f fakeEnv) Getenv(k string) string { return f.vars[k] }

func (f fakeEnv) CanRead(p string) error {
	if err, ok := f.files[p]; ok {
		return err
	}
	return fs.ErrNotExist
}

const admin = "/etc/orch/orch.yaml"

func TestChooseKubeconfig(t *testing.T) {
	readable := map[string]error{admin: nil}
	denied := map[string]error{admin: fs.ErrPermission}
	home := map[string]string{"HOME": "/home/u"}
	deniedWithHome := map[string]error{admin: fs.ErrPermission, "/home/u/.kube/config": nil}
	cases := []struct {
		name string
		args []string
		env  fakeEnv
		want Choice
	}{
		{"admin readable", []string{"get", "ns"}, fakeEnv{files: readable}, Choice{Path: admin}},
		{"KUBECONFIG set wins", []string{"get", "ns"},
			fakeEnv{vars: map[string]string{"KUBECONFIG": "/x"}, files: readable}, Choice{}},
		{"--kubeconfig x wins", []string{"--kubeconfig", "/x", "get", "ns"}, fakeEnv{files: readable}, Choice{}},
		{"--kubeconfig=x wins", []string{"get", "ns", "--kubeconfig=/x"}, fakeEnv{files: readable}, Choice{}},
		{"--kubeconfig after -- is not a flag", []string{"exec", "p", "--", "--kubeconfig", "/x"},
			fakeEnv{files: readable}, Choice{Path: admin}},
		{"other flag prefix is not --kubeconfig", []string{"--kubeconfigx=1"}, fakeEnv{files: readable},
			Choice{Path: admin}},
		{"no admin kubeconfig: kubectl's default", []string{"get", "ns"}, fakeEnv{}, Choice{}},
		{"admin denied, no home config: hint", nil, fakeEnv{vars: home, files: denied}, Choice{Denied: true}},
		{"admin denied, home config readable: quiet", nil, fakeEnv{vars: home, files: deniedWithHome}, Choice{}},
		{"empty KUBECONFIG is unset", nil, fakeEnv{vars: map[string]string{"KUBECONFIG": ""}, files: readable},
			Choice{Path: admin}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := ChooseKubeconfig(tc.args, tc.env, admin); got != tc.want {
				t.Errorf("ChooseKubeconfig(%q) = %+v, want %+v", tc.args, got, tc.want)
			}
		})
	}
}

func TestApplyChoice(t *testing.T) {
	set := map[string]string{}
	setenv := func(k, v string) error { set[k] = v; return nil }
	var out bytes.Buffer
	applyChoice(Choice{Path: admin}, setenv, &out)
	if set["KUBECONFIG"] != admin || out.Len() != 0 {
		t.Errorf("path choice: env %v, stderr %q", set, out.String())
	}
	set = map[string]string{}
	applyChoice(Choice{}, setenv, &out)
	if len(set) != 0 || out.Len() != 0 {
		t.Errorf("empty choice: env %v, stderr %q", set, out.String())
	}
	applyChoice(Choice{Denied: true}, setenv, &out)
	if len(set) != 0 || !strings.Contains(out.String(), "not readable") {
		t.Errorf("denied choice: env %v, stderr %q", set, out.String())
	}
}

func TestOSEnvCanRead(t *testing.T) {
	if err := (OSEnv{}).CanRead(t.TempDir() + "/missing"); err == nil {
		t.Error("CanRead of a missing file returned nil")
	}
}
