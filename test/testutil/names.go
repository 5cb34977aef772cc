package testutil

import "strings"

// NameFor turns a test name into a DNS-1123 label of at most max
// characters: the last path element of t.Name(), lower case, with every
// other character replaced by '-'.
func NameFor(testName string, max int) string {
	s := strings.ToLower(testName[strings.LastIndex(testName, "/")+1:])
	var b strings.Builder
	for _, r := range s {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > max {
		out = out[:max]
	}
	return strings.Trim(out, "-")
}
