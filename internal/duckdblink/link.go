// Package duckdblink links DuckDB's driver into okf. DuckDB's prebuilt
// library asks the linker to export every symbol of the binary (62,000 of
// them) for extensions loaded at run time; okf never loads an extension,
// and the dynamic loader's lookups cost every command, DuckDB or not, about
// 10 ms at start. Importing this package instead of the driver takes the
// export back.
package duckdblink

/*
#cgo LDFLAGS: -Wl,--no-export-dynamic
*/
import "C"

import _ "github.com/duckdb/duckdb-go-bindings" // the library whose link flags this package amends
