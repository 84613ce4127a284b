// Package okf reads and checks Open Knowledge Format (OKF v0.2) bundles.
//
// A bundle is a folder of markdown documents. Every document other than the
// reserved index.md and log.md files is a concept, named by its path without
// the .md suffix. This package keeps each document's exact bytes and parses
// them without rewriting anything: the YAML frontmatter as authored text, the
// body, the links between documents, and the sections named by heading slug
// with their byte ranges. A Bundle ties the documents together into a link
// graph, and Validate checks a bundle against the v0.2 conformance rules,
// reporting findings with stable codes and the spec section they come from.
//
// facts.go and query.go are the one parser of what a concept states in the
// shapes okf compile writes (a table's columns, keys and joins, the columns
// a rule uses, a query concept's SQL and parameters): the read model and
// okf compile --check read concepts with it, so the contract has one home.
//
// folder.go holds the one set of rules by which okf reads folders (Load,
// okf import, the reading commands' --dir, okf mcp and okf serve, and the
// folder watcher): which files a bundle holds, which folders are bundles,
// and how a folder name becomes a bundle name.
package okf
