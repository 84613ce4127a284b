// Command gen writes examples/shop/shop.sql (see shop.Generate). Run it
// from examples/shop with go generate:
//
//	go run ./gen -docs . -out shop.sql
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/okf-tools/okf/examples/shop"
)

func main() {
	docs := flag.String("docs", ".", "the folder holding shop_schema.txt and the other shop documents")
	out := flag.String("out", "shop.sql", "the SQL file to write")
	flag.Parse()
	sql, err := shop.Generate(*docs)
	if err == nil {
		err = os.WriteFile(*out, []byte(sql), 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		os.Exit(1)
	}
}
