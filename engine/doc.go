// Package engine is okf's knowledge engine as agents use it: a tenant's
// current view of its knowledge (the head snapshot of the store, or a
// folder compiled on start and again when it changes) with its search
// index, the reads on a view (manifest, search, get, context) and the
// databases a tenant may query, and the agent-facing tools defined once:
// their inputs and JSON schemas, descriptions and rendered texts. The
// built-in agent, okf mcp, okf serve and the reading commands all call it,
// so every agent reads the same tools and the same texts.
package engine
