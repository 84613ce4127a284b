// Package attacktest writes what an engine's attack suite found, one
// attack a row with the layers that stopped it, as the tables under
// sqlguard/testdata/attacks that the suites compare with (internal/golden).
package attacktest

import (
	"fmt"
	"strings"
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
