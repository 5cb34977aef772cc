package netpol

import (
	"slices"
	"testing"
)

func TestSubtractCIDRs(t *testing.T) {
	tests := []struct {
		name   string
		block  string
		except []string
		want   []string
		ok     bool
	}{
		{"no except", "10.0.0.0/8", nil, []string{"10.0.0.0/8"}, true},
		{"host bits masked", "10.1.2.3/16", nil, []string{"10.1.0.0/16"}, true},
		{"one half", "10.0.0.0/24", []string{"10.0.0.0/25"}, []string{"10.0.0.128/25"}, true},
		{"deep", "10.0.0.0/24", []string{"10.0.0.5/32"},
			[]string{"10.0.0.0/30", "10.0.0.4/32", "10.0.0.6/31", "10.0.0.8/29", "10.0.0.16/28", "10.0.0.32/27", "10.0.0.64/26", "10.0.0.128/25"}, true},
		{"two excepts", "10.0.0.0/24", []string{"10.0.0.0/26", "10.0.0.192/26"}, []string{"10.0.0.64/26", "10.0.0.128/26"}, true},
		{"except covers all", "10.0.0.0/24", []string{"10.0.0.0/16"}, nil, true},
		{"except outside", "10.0.0.0/24", []string{"192.168.0.0/16"}, []string{"10.0.0.0/24"}, true},
		{"everything but a /16", "0.0.0.0/0", []string{"10.42.0.0/16"}, []string{
			"0.0.0.0/5", "8.0.0.0/7", "10.0.0.0/11", "10.32.0.0/13", "10.40.0.0/15", "10.43.0.0/16", "10.44.0.0/14",
			"10.48.0.0/12", "10.64.0.0/10", "10.128.0.0/9", "11.0.0.0/8", "12.0.0.0/6", "16.0.0.0/4", "32.0.0.0/3",
			"64.0.0.0/2", "128.0.0.0/1"}, true},
		{"ipv6 block", "fd00::/8", nil, nil, true},
		{"bad", "10.0.0.0/33", nil, nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := subtractCIDRs(tc.block, tc.except)
			if ok != tc.ok || !slices.Equal(prefixStrings(got), tc.want) {
				t.Fatalf("subtractCIDRs = %v, %v; want %v, %v", prefixStrings(got), ok, tc.want, tc.ok)
			}
		})
	}
}
