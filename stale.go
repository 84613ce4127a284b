package okf

import "time"

// IsStale reports whether a stale_after value has passed at now (§5.5). A
// date (2026-12-31) is stale from that day on, in now's location; a datetime
// with an offset is stale from that instant. A value in neither form never
// makes a concept stale.
func IsStale(staleAfter string, now time.Time) bool {
	t, form := parseTime(staleAfter)
	switch form {
	case dateForm:
		return now.Format("2006-01-02") >= t.Format("2006-01-02")
	case instantForm:
		return !now.Before(t)
	}
	return false
}
