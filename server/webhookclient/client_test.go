package webhookclient

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPostTimeout: the webhook is told its deadline in ?timeout= and a
// slow one fails with the deadline in the error, naming the URL called.
func TestPostTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("timeout") != "1s" {
			http.Error(w, "no timeout parameter: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		if r.URL.Path == "/slow" {
			<-release
		}
		_, _ = w.Write([]byte("{}"))
	}))
	defer srv.Close()
	defer close(release)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	c := &Client{}
	fast := srv.URL + "/fast"
	if _, err := c.Post(context.Background(), Config{URL: &fast, CABundle: ca}, time.Second, []byte("{}")); err != nil {
		t.Fatalf("fast webhook: %v", err)
	}
	slow := srv.URL + "/slow"
	_, err := c.Post(context.Background(), Config{URL: &slow, CABundle: ca}, time.Second, []byte("{}"))
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") || !strings.Contains(err.Error(), "/slow?timeout=1s") {
		t.Fatalf("slow webhook: %v", err)
	}
}
