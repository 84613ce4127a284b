// Package attacktest writes what an engine's attack suite found, one
// attack a row with the layers that stopped it, as the tables under
// sqlguard/testdata/attacks that the suites compare with (internal/golden).
package attacktest

import (
	"fmt"
	"strings"
	"testing"
)

// Verdict is what stopped one attack. Single, when set, says why no
// second layer of the engine can stop it.
type Verdict struct {
	Class, Name string
	Layers      []string
	Single      string
}

// Table renders an engine's verdicts, with the count of attacks that one
// layer alone stopped.
func Table(engine string, verdicts []Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| class | attack (%s) | stopped by |\n| --- | --- | --- |\n", engine)
	single := 0
	for _, v := range verdicts {
		layers := strings.Join(v.Layers, ", ")
		if v.Single != "" && len(v.Layers) < 2 {
			layers += " (only layer: " + v.Single + ")"
			single++
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", v.Class, v.Name, layers)
	}
	fmt.Fprintf(&b, "\n%d attacks; %d stopped by one layer only, each for the reason given.\n", len(verdicts), single)
	return b.String()
}

// Run is how one run of an attack ended under one layer alone (the first
// run of a suite's list is the bare database): whether it was stopped,
// and the error it ended with, if any.
type Run struct {
	Layer   string
	Stopped bool
	Err     error
}

// Stoppers adds to found (layers that stopped an attack before it ran,
// such as the validator) the layers whose runs stopped it: the bare
// database first when it did (with its error, as short says it), then
// every layer that stopped it for a reason of its own, not with the very
// error the bare database gave. It fails t unless one layer did, or two
// where the attack's single reason is "".
func Stoppers(t *testing.T, class, name, single string, found []string, runs []Run, short func(error) string) []string {
	t.Helper()
	layers := found
	base := runs[0]
	if base.Stopped {
		layers = append(layers, fmt.Sprintf("database (%s)", short(base.Err)))
	}
	for _, r := range runs[1:] {
		if !r.Stopped || base.Stopped && r.Err != nil && base.Err != nil && r.Err.Error() == base.Err.Error() {
			continue
		}
		layers = append(layers, r.Layer)
	}
	switch {
	case len(layers) == 0:
		t.Errorf("%s / %s: no layer stopped it", class, name)
	case len(layers) < 2 && single == "":
		t.Errorf("%s / %s: stopped by %d layer (%s); want at least two", class, name, len(layers), strings.Join(layers, ", "))
	}
	return layers
}
