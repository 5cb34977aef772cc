package main

import "testing"

func TestSplitSmaps(t *testing.T) {
	const exe = "/tmp/orch"
	data := `00400000-02263000 r-xp 00000000 fe:01 1 /tmp/orch
Rss:               25036 kB
02263000-047bb000 r--p 01e63000 fe:01 1 /tmp/orch
Rss:               27808 kB
047bb000-0486f000 rw-p 043bb000 fe:01 1 /tmp/orch
Rss:                 720 kB
0486f000-068c3000 rw-p 00000000 00:00 0 
Rss:                 144 kB
7f5627e00000-7f5667e00000 r--s 00000000 fe:01 2 /tmp/state.db
Rss:                  24 kB
7ffe6c9c4000-7ffe6c9e5000 rw-p 00000000 00:00 0                          [stack]
Rss:                  16 kB
`
	got := splitSmaps(data, exe)
	want := smapsSplit{ExeText: 25036, ExeRO: 27808, ExeData: 720, Anon: 160, OtherFile: 24}
	if got != want {
		t.Fatalf("splitSmaps = %+v, want %+v", got, want)
	}
}
