// Package serve gives any agent the knowledge and the SQL guard: an MCP
// server (over stdio for okf mcp, over streamable HTTP for okf serve) with
// the tools manifest, search, get, context, list_databases and run_sql, and
// a JSON HTTP API for the same reads and for writes to the store with
// preconditions, so an editor or a pipeline can change knowledge safely.
//
// Every request reads one tenant's view: the snapshot of its latest commit
// (or of a watched folder) with that snapshot's search index. A write, or a
// change of the watched folder, compiles a new snapshot, and the next read
// sees it.
//
// Over HTTP, a bearer token grants one tenant, read-only or read and write;
// a tenant never sees another's concepts, search results or databases.
// Each token is rate limited, request bodies are bounded, and Listen
// refuses an address beyond loopback without TLS. Over stdio the process
// serves the one tenant it was started for, like any local command.
package serve
