package apiserver

import (
	"net"
	"testing"
)

const svcDefault = "/api/v1/namespaces/default/services"

func svcBody(name, typ, extra string) string {
	return `{"apiVersion":"v1","kind":"Service","metadata":{"name":"` + name + `"},"spec":{"type":"` + typ + `",` + extra +
		`"selector":{"app":"x"},"ports":[{"port":80}]}}`
}

func TestServiceAllocation(t *testing.T) {
	e := newAPIEnv(t, 100, nil)
	e.createNamespace("default")
	a := e.must(201, "POST", svcDefault, svcBody("a", "ClusterIP", ""))
	b := e.must(201, "POST", svcDefault, svcBody("b", "NodePort", ""))
	ipA, ipB := str(a, "spec", "clusterIP"), str(b, "spec", "clusterIP")
	_, cidr, _ := net.ParseCIDR("10.43.0.0/16")
	if ipA == "" || ipA == ipB || !cidr.Contains(net.ParseIP(ipA)) || !cidr.Contains(net.ParseIP(ipB)) {
		t.Fatalf("cluster IPs %q %q", ipA, ipB)
	}
	ports := get(b, "spec", "ports").([]interface{})
	if np, _ := get(ports[0], "nodePort").(float64); np < 30000 || np > 32767 {
		t.Fatalf("nodePort %v", get(ports[0], "nodePort"))
	}
	// a taken IP is refused without touching the store
	taken := e.must(422, "POST", svcDefault, svcBody("c", "ClusterIP", `"clusterIP":"`+ipA+`",`))
	if str(taken, "reason") != "Invalid" {
		t.Fatalf("taken IP: %v", taken)
	}
	// deleting releases the IP for reuse
	e.must(200, "DELETE", svcDefault+"/a", "")
	e.must(201, "POST", svcDefault, svcBody("c", "ClusterIP", `"clusterIP":"`+ipA+`",`))
}
