package netpol

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	n := newChainNames("T-")
	in, out := n.podChain(false, "default/server"), n.podChain(true, "default/frontend")
	rs := render(n, []podRules{
		{Pod: frontend, OutIsolated: true, Egress: []allow{{Peer: "10.0.0.0/8", Proto: "udp", Ports: "53", Policy: "default/eg"}}},
		{Pod: server, InIsolated: true, Ingress: []allow{{Peer: "10.42.0.11/32", Proto: "tcp", Ports: "80", Policy: "default/fe"}, {Policy: "default/all"}}},
	})
	want := strings.Join([]string{
		"*filter",
		":T-NETPOL - [0:0]",
		":" + out + " - [0:0]",
		":" + in + " - [0:0]",
		":T-NP-IN-OLD - [0:0]",
		`-A T-NETPOL -m conntrack --ctstate RELATED,ESTABLISHED -m comment --comment "orch netpol: replies of allowed connections" -j RETURN`,
		`-A T-NETPOL -s 10.42.0.11/32 -m comment --comment "default/frontend egress" -j ` + out,
		`-A T-NETPOL -d 10.42.0.10/32 -m comment --comment "default/server ingress" -j ` + in,
		"-A " + out + ` -d 10.0.0.0/8 -p udp -m udp --dport 53 -m comment --comment "default/eg" -j RETURN`,
		"-A " + out + ` -m comment --comment "default/frontend: not allowed by its egress policies" -j DROP`,
		"-A " + in + ` -s 10.42.0.11/32 -p tcp -m tcp --dport 80 -m comment --comment "default/fe" -j RETURN`,
		"-A " + in + ` -m comment --comment "default/all" -j RETURN`,
		"-A " + in + ` -m comment --comment "default/server: not allowed by its ingress policies" -j DROP`,
		"-X T-NP-IN-OLD",
		"COMMIT", ""}, "\n")
	if got := string(rs.restoreInput([]string{"T-NP-IN-OLD"})); got != want {
		t.Fatalf("restore input:\n%s\nwant:\n%s", got, want)
	}
	if !rs.isolates() || render(n, nil).isolates() {
		t.Fatal("isolates() is wrong")
	}
}

func TestChainNames(t *testing.T) {
	for _, prefix := range []string{"ORCH-", "ORCHT0A1B2C-", "ABCDEFGHIJKLMN"} {
		n := newChainNames(prefix)
		for _, c := range []string{n.Main, n.podChain(true, "ns/a"), n.podChain(false, "ns/a")} {
			if len(c) > maxChainName {
				t.Errorf("%q is longer than %d", c, maxChainName)
			}
			if !n.owned(c) {
				t.Errorf("%q not owned", c)
			}
		}
		if n.owned(prefix+"FORWARD") || n.owned(prefix+"PROXY-FORWARD") || n.owned("X"+n.Main) {
			t.Errorf("%s: owns others' chains", prefix)
		}
		if n.podChain(true, "ns/a") == n.podChain(true, "ns/b") {
			t.Errorf("%s: hash collision", prefix)
		}
	}
}

func TestReadJump(t *testing.T) {
	n := newChainNames("P-")
	mine := `-A FORWARD -m comment --comment "orch network policy" -j P-NETPOL`
	tests := []struct {
		name  string
		lines []string
		want  jumpState
	}{
		{"missing", []string{"-P FORWARD ACCEPT", `-A FORWARD -j P-FORWARD`}, jumpState{}},
		{"first", []string{"-P FORWARD ACCEPT", mine, `-A FORWARD -j P-FORWARD`}, jumpState{copies: 1, early: true}},
		{"after foreign chains is fine", []string{"-A FORWARD -j DOCKER-USER", "-A FORWARD -j PX-FORWARD", mine, "-A FORWARD -j P-FORWARD"},
			jumpState{copies: 1, early: true}},
		{"after the pod network accept", []string{`-A FORWARD -m comment --comment "x y" -j P-PROXY-FORWARD`, mine}, jumpState{copies: 1}},
		{"twice", []string{mine, mine}, jumpState{copies: 2, early: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := readJump(tc.lines, n); got != tc.want {
				t.Fatalf("readJump = %+v, want %+v", got, tc.want)
			}
		})
	}
}
