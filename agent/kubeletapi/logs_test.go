package kubeletapi

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

func TestParseCRILine(t *testing.T) {
	tests := []struct {
		in      string
		stream  string
		partial bool
		msg     string
		wantErr bool
	}{
		{in: "2024-01-01T00:00:00.5Z stdout F hello world", stream: "stdout", msg: "hello world"},
		{in: "2024-01-01T00:00:00Z stderr P part", stream: "stderr", partial: true, msg: "part"},
		{in: "2024-01-01T00:00:00Z stdout F ", stream: "stdout", msg: ""},
		{in: "2024-01-01T00:00:00Z stdout F", stream: "stdout", msg: ""},
		{in: "garbage", wantErr: true},
		{in: "2024-01-01T00:00:00Z stdin F x", wantErr: true},
		{in: "2024-01-01T00:00:00Z stdout X x", wantErr: true},
	}
	for _, tt := range tests {
		e, err := parseCRILine([]byte(tt.in + "\n"))
		if (err != nil) != tt.wantErr {
			t.Fatalf("%q: err = %v", tt.in, err)
		}
		if err == nil && (e.stream != tt.stream || e.partial != tt.partial || string(e.msg) != tt.msg) {
			t.Errorf("%q: got %+v", tt.in, e)
		}
	}
}

func TestParseLogOptions(t *testing.T) {
	now := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		q       string
		want    logOptions
		wantErr bool
	}{
		{q: "", want: logOptions{tail: -1}},
		{q: "follow=true&timestamps=true&previous=1", want: logOptions{tail: -1, follow: true, timestamps: true, previous: true}},
		{q: "tailLines=5&limitBytes=10", want: logOptions{tail: 5, limitBytes: 10}},
		{q: "sinceSeconds=60", want: logOptions{tail: -1, since: now.Add(-time.Minute)}},
		{q: "sinceTime=2024-01-01T11:00:00Z", want: logOptions{tail: -1, since: now.Add(-time.Hour)}},
		{q: "sinceTime=2024-01-01T11:00:00Z&sinceSeconds=1", wantErr: true},
		{q: "tailLines=-1", wantErr: true},
		{q: "limitBytes=0", wantErr: true},
		{q: "sinceSeconds=x", wantErr: true},
	}
	for _, tt := range tests {
		q, _ := url.ParseQuery(tt.q)
		got, err := parseLogOptions(q, now)
		if (err != nil) != tt.wantErr {
			t.Fatalf("%q: err = %v", tt.q, err)
		}
		if err == nil && got != tt.want {
			t.Errorf("%q: got %+v, want %+v", tt.q, got, tt.want)
		}
	}
}

func (e *testEnv) logPath(name string, restart int) string {
	return filepath.Join(e.logDir, "default_web_"+e.pod.UID, name, []string{"0.log", "1.log", "2.log"}[restart])
}

func (e *testEnv) getLogs(t *testing.T, ctx context.Context, container, query string) (*http.Response, error) {
	t.Helper()
	c, err := rest.HTTPClientFor(e.rest)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/containerLogs/default/web/"+container+"?"+query, nil)
	return c.Do(req)
}

func (e *testEnv) logs(t *testing.T, container, query string) (int, string) {
	t.Helper()
	resp, err := e.getLogs(t, context.Background(), container, query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestLogs(t *testing.T) {
	e := newTestEnv(t)
	base := time.Now().Add(-time.Hour)
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
	p := e.logPath("app", 0)
	// rotated files: .2 is the oldest
	writeLog(t, p+".2", criLine(at(0), "stdout", "F", "one"))
	writeLog(t, p+".1", criLine(at(1), "stderr", "F", "two"), criLine(at(2), "stdout", "P", "thr"))
	writeLog(t, p, criLine(at(3), "stdout", "F", "ee"), criLine(at(50), "stdout", "F", "four"),
		"not a cri line", criLine(at(55), "stderr", "F", "five"))
	tests := []struct {
		query string
		want  string
	}{
		{"", "one\ntwo\nthree\nfour\nfive\n"},
		{"tailLines=2", "four\nfive\n"},
		{"tailLines=0", ""},
		{"sinceSeconds=900", "four\nfive\n"},
		{"sinceTime=" + at(52).UTC().Format(time.RFC3339), "five\n"},
		{"limitBytes=6", "one\ntw"},
		{"tailLines=1&timestamps=true", at(55).UTC().Format(time.RFC3339Nano) + " five\n"},
	}
	for _, tt := range tests {
		code, got := e.logs(t, "app", tt.query)
		if code != http.StatusOK || got != tt.want {
			t.Errorf("%q: %d %q, want %q", tt.query, code, got, tt.want)
		}
	}
}

// TestLogsEndInsideALine: output that ends without a newline (the last
// entry is partial) is returned unterminated, as the kubelet returns it
// (conformance: Projected combined cats files without newlines).
func TestLogsEndInsideALine(t *testing.T) {
	e := newTestEnv(t)
	now := time.Now()
	writeLog(t, e.logPath("app", 0), criLine(now, "stdout", "F", "full"), criLine(now.Add(time.Second), "stdout", "P", "podnamevalue-1"))
	for _, q := range []string{"", "tailLines=1"} {
		code, got := e.logs(t, "app", q)
		want := "full\npodnamevalue-1"
		if q != "" {
			want = "podnamevalue-1"
		}
		if code != http.StatusOK || got != want {
			t.Errorf("%q: %d %q, want %q", q, code, got, want)
		}
	}
}

func TestLogsErrors(t *testing.T) {
	e := newTestEnv(t)
	writeLog(t, e.logPath("app", 0), criLine(time.Now(), "stdout", "F", "x"))
	tests := []struct {
		container, query string
		code             int
		msg              string
	}{
		{"nope", "", http.StatusBadRequest, "container nope is not valid for pod web"},
		{"app", "previous=true", http.StatusBadRequest, "previous terminated container"},
		{"app", "tailLines=-3", http.StatusBadRequest, "tailLines"},
	}
	for _, tt := range tests {
		code, body := e.logs(t, tt.container, tt.query)
		if code != tt.code || !strings.Contains(body, tt.msg) || !strings.Contains(body, `"kind":"Status"`) {
			t.Errorf("%s?%s: %d %s", tt.container, tt.query, code, body)
		}
	}
}

func TestLogsPrevious(t *testing.T) {
	e := newTestEnv(t)
	writeLog(t, e.logPath("app", 0), criLine(time.Now(), "stdout", "F", "first run"))
	if err := e.fake.Exit(e.pod.Containers["app"], 1, false); err != nil {
		t.Fatal(err)
	}
	e.pod.Containers["app"] = e.startContainer(t, "app", 1)
	writeLog(t, e.logPath("app", 1), criLine(time.Now(), "stdout", "F", "second run"))
	if _, got := e.logs(t, "app", "previous=true"); got != "first run\n" {
		t.Errorf("previous: %q", got)
	}
	if _, got := e.logs(t, "app", ""); got != "second run\n" {
		t.Errorf("current: %q", got)
	}
}

func TestLogsFollowRotationAndExit(t *testing.T) {
	e := newTestEnv(t)
	p := e.logPath("app", 0)
	writeLog(t, p, criLine(time.Now(), "stdout", "F", "a"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := e.getLogs(t, ctx, "app", "follow=true")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	expectLine(t, rd, "a")
	writeLog(t, p, criLine(time.Now(), "stdout", "P", "b1"))
	writeLog(t, p, criLine(time.Now(), "stdout", "F", "b2"))
	expectLine(t, rd, "b1b2")
	// rotate as the runtime does: rename, then a new file
	if err := renameFile(p, p+".1"); err != nil {
		t.Fatal(err)
	}
	writeLog(t, p, criLine(time.Now(), "stderr", "F", "c"))
	expectLine(t, rd, "c")
	writeLog(t, p, criLine(time.Now(), "stdout", "F", "last"))
	if err := e.fake.Exit(e.pod.Containers["app"], 0, false); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(rd) // ends once the container exited
	if err != nil || string(rest) != "last\n" {
		t.Fatalf("after exit: %q %v", rest, err)
	}
}

func expectLine(t *testing.T, rd *bufio.Reader, want string) {
	t.Helper()
	got, err := rd.ReadString('\n')
	if err != nil || got != want+"\n" {
		t.Fatalf("line %q, %v; want %q", got, err, want)
	}
}

func TestClientCertChecked(t *testing.T) {
	e := newTestEnv(t)
	cert, key, err := e.bundle.IssueClientCert("system:node:evil", nil)
	if err != nil {
		t.Fatal(err)
	}
	other := &rest.Config{Host: e.base, TLSClientConfig: rest.TLSClientConfig{CAData: e.bundle.CAPEM(), CertData: cert, KeyData: key}}
	c, err := rest.HTTPClientFor(other)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(e.base + "/containerLogs/default/web/app")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign client: %d", resp.StatusCode)
	}
}
