// Package serve is the transport of okf mcp and okf serve: it puts the
// engine's tools (package engine) on an MCP server, over stdio or over
// streamable HTTP, and the engine's reads on a JSON HTTP API, with writes to
// the store under preconditions so an editor or a pipeline can change
// knowledge safely. What a tool does and says is the engine's; serve adds
// authentication, tenants, limits and HTTP.
//
// Every request reads one tenant's view: the snapshot of its latest commit
// (or of a watched folder) with that snapshot's search index. A write, or a
// change of the watched folder, compiles a new snapshot, and the next read
// sees it.
//
// Over HTTP, a bearer token grants one tenant, read-only or read and write;
// a tenant never sees another's concepts, search results or databases.
// Each token is rate limited (every message of a batch counted), request
// bodies are bounded in size and in time, MCP sessions are capped per
// token and in all, Host and Origin are checked, and Listen refuses an
// address beyond loopback without TLS. Over stdio the process
// serves the one tenant it was started for, like any local command.
package serve
