// Command incluster is a test workload: with rest.InClusterConfig() and no
// other configuration it lists the pods of its own namespace and of
// kube-system every two seconds and prints what the API answered, for
// test/e2e to read from its log.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const nsFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

func main() {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		fmt.Println("CONFIG ERR", err)
		os.Exit(1)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Println("CLIENT ERR", err)
		os.Exit(1)
	}
	b, _ := os.ReadFile(nsFile)
	own := strings.TrimSpace(string(b))
	for {
		for _, ns := range []string{own, "kube-system"} {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			cancel()
			switch {
			case err == nil:
				fmt.Printf("LIST %s OK %d\n", ns, len(pods.Items))
			case apierrors.IsForbidden(err):
				fmt.Printf("LIST %s FORBIDDEN\n", ns)
			default:
				fmt.Printf("LIST %s ERR %v\n", ns, err)
			}
		}
		time.Sleep(2 * time.Second)
	}
}
