// Package sqlguard runs SQL written by a model against a real database with
// no way to change data, leak hidden data or stall the server.
//
// The model's SQL is hostile input. It passes through independent layers,
// each of which stops attacks on its own:
//
//   - the validator bounds the text (shape.go) before PostgreSQL's parser
//     reads it, allows one SELECT, VALUES or WITH of those, only functions,
//     operators and casts on an allowlist (allow.go), and resolves every
//     column reference, star, whole row and join against the database's
//     catalog so that no form reads a hidden column (resolve.go);
//   - on PostgreSQL, the query runs as a role with SELECT privileges only,
//     inside BEGIN READ ONLY with SET LOCAL statement_timeout, over the
//     extended protocol (one statement per message), rows capped while
//     fetching; the transaction is always rolled back and the session
//     discarded;
//   - on SQLite, the file is opened read-only (mode=ro), with
//     PRAGMA query_only, no attached databases, an authorizer that allows
//     reads of allowed tables and columns and safe functions only, a check
//     of the compiled program (sqlite_program.go) and an interrupt at the
//     deadline;
//   - on DuckDB, the file is opened read-only with no external access, no
//     extension loaded on demand and its configuration locked, each query
//     on a fresh connection, one SELECT, its plan checked (duckdb.go) and
//     interrupted at the deadline. The engine is package sqlguard/duckdb,
//     which registers itself (RegisterEngine) so that only programs that
//     import it link DuckDB.
//
// A DB pairs the validator with one Engine (PostgreSQL, SQLite or DuckDB),
// chosen by the DSN as package dsn reads it, and writes every statement it
// sees to an audit log, which every command and server opens with
// OpenAuditLog. Results come back as typed rows
// within byte bounds and as compact text for a model; errors carry the
// layer that stopped the query, the database's message, position and hint.
// docs/security.md describes each layer and the attack suite that tests
// them.
package sqlguard
