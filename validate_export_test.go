package okf

import "testing"

// SuiteCases and SuiteCaseDir give the external tests (the W4G1 parity
// test) the validator suite's cases as bundles on disk.
var SuiteCases = suiteCases

// SuiteCaseDir returns the folder of a suite case's bundle.
func SuiteCaseDir(t *testing.T, name string) string { return caseDir(t, name) }
