// Command wsecho is a test backend for the built-in ingress: on :8080 it
// answers "wsecho <hostname> <path>" over HTTP and echoes every message of
// a WebSocket opened on /ws. The e2e tests build it statically into an
// image (test/e2e/ingress_test.go).
package main

import (
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/gorilla/websocket"
)

func main() {
	host, _ := os.Hostname()
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	http.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for {
			t, msg, err := conn.ReadMessage()
			if err != nil {
				return
			}
			if err := conn.WriteMessage(t, msg); err != nil {
				return
			}
		}
	})
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "wsecho %s %s\n", host, r.URL.Path)
	})
	log.Fatal(http.ListenAndServe(":8080", nil))
}
