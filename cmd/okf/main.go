// Command okf compiles database documentation into OKF knowledge bundles,
// validates them, and serves them to SQL agents. See "okf --help".
package main

import (
	"os"

	"github.com/okf-tools/okf/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
