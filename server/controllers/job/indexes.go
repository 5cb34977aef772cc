package job

import (
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/sets"
)

// parseIndexes reads status.completedIndexes ("1,3-5") below limit.
func parseIndexes(s string, limit int) sets.Set[int] {
	out := sets.New[int]()
	for _, part := range strings.Split(s, ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil {
				continue
			}
		}
		for i := a; i <= b && i < limit; i++ {
			out.Insert(i)
		}
	}
	return out
}

// formatIndexes writes a set as upstream does: ascending, runs of three
// or more as ranges ("0,1,3-5").
func formatIndexes(set sets.Set[int]) string {
	idx := set.UnsortedList()
	slices.Sort(idx)
	var b strings.Builder
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(idx[i]))
		switch {
		case j == i+1: // two in a row are listed, as upstream's orderedIntervals.String
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(idx[j]))
		case j > i:
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(idx[j]))
		}
		i = j + 1
	}
	return b.String()
}
