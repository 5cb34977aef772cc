package images

import (
	"strings"
	"testing"
)

func TestParseRegistries(t *testing.T) {
	cases := []struct {
		name, yaml, wantErr string
		check               func(t *testing.T, r *Registries)
	}{
		{name: "empty", yaml: "", check: func(t *testing.T, r *Registries) {
			if len(r.Mirrors)+len(r.Configs) != 0 {
				t.Errorf("%+v", r)
			}
		}},
		{name: "k3s example", yaml: `
mirrors:
  docker.io:
    endpoint:
      - "https://mirror.example.com:5000"
      - "http://10.0.0.5:5000/prefix"
  "*":
    endpoint: ["registry.local"]
configs:
  "mirror.example.com:5000":
    auth:
      username: alice
      password: s3cret
    tls:
      insecure_skip_verify: true
  "registry.local":
    auth:
      auth: Ym9iOnB3    # bob:pw
`, check: func(t *testing.T, r *Registries) {
			if got := r.Mirrors["docker.io"].Endpoints; len(got) != 2 || got[1] != "http://10.0.0.5:5000/prefix" {
				t.Errorf("mirrors: %+v", r.Mirrors)
			}
			c := r.Configs["mirror.example.com:5000"]
			if c.Auth.Username != "alice" || c.Auth.Password != "s3cret" || !c.TLS.InsecureSkipVerify {
				t.Errorf("config: %+v %+v", c.Auth, c.TLS)
			}
			if u, p, err := r.Configs["registry.local"].Auth.credentials(); u != "bob" || p != "pw" || err != nil {
				t.Errorf("auth field: %q %q %v", u, p, err)
			}
		}},
		{name: "unknown key", yaml: "mirrors:\n  docker.io:\n    endpoints: [x]\n", wantErr: "unknown field"},
		{name: "bad scheme", yaml: "mirrors:\n  docker.io:\n    endpoint: [\"ftp://x\"]\n", wantErr: `mirrors["docker.io"].endpoint[0]`},
		{name: "bad auth", yaml: "configs:\n  r:\n    auth:\n      auth: \"!!\"\n", wantErr: `configs["r"].auth.auth`},
		{name: "not yaml", yaml: "mirrors: [", wantErr: "parse registries config"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRegistries([]byte(tc.yaml))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, r)
		})
	}
}

func TestHosts(t *testing.T) {
	r, err := ParseRegistries([]byte(`
mirrors:
  docker.io:
    endpoint: ["http://127.0.0.1:5000", "https://m.example/cache/"]
  "*":
    endpoint: ["https://any.example"]
`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		host string
		want []string
	}{
		{"docker.io", []string{"http://127.0.0.1:5000/v2", "https://m.example/cache/v2", "https://registry-1.docker.io/v2"}},
		{"quay.io", []string{"https://any.example/v2", "https://quay.io/v2"}},
	}
	for _, tc := range cases {
		hs, err := r.Hosts(nil)(tc.host)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hs {
			got = append(got, h.Scheme+"://"+h.Host+h.Path)
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s: got %v, want %v", tc.host, got, tc.want)
		}
	}
	if hs, _ := (&Registries{}).Hosts(nil)("ghcr.io"); len(hs) != 1 || hs[0].Host != "ghcr.io" {
		t.Errorf("no config: %+v", hs)
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"nginx":                     "docker.io/library/nginx:latest",
		"nginx:1.25":                "docker.io/library/nginx:1.25",
		"127.0.0.1:5000/a/b:c":      "127.0.0.1:5000/a/b:c",
		"docker.io/library/busybox": "docker.io/library/busybox:latest",
	} {
		if got, err := Normalize(in); got != want || err != nil {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := Normalize("bad name@@"); err == nil {
		t.Error("invalid name accepted")
	}
}
