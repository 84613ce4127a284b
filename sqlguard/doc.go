// Package sqlguard runs SQL written by a model against a real database with
// no way to change data, leak hidden data or stall the server.
//
// The model's SQL is hostile input. It passes through independent layers,
// each of which stops attacks on its own:
//
//   - the validator parses the text with the PostgreSQL parser and allows one
//     SELECT, VALUES or WITH of those, with no data-modifying parts, no
//     dangerous functions and only allowed tables and columns;
//   - on PostgreSQL, the query runs as a role with SELECT privileges only,
//     inside BEGIN READ ONLY with SET LOCAL statement_timeout, over the
//     extended protocol (one statement per message), rows capped while
//     fetching, and the transaction is always rolled back;
//   - on SQLite, the file is opened read-only (mode=ro), with
//     PRAGMA query_only, no attached databases, an authorizer that allows
//     reads of allowed tables and columns and safe functions only, and an
//     interrupt at the deadline.
//
// A DB pairs the validator with one Engine (PostgreSQL or SQLite) and writes
// every statement it sees to an audit log. Results come back as typed rows
// and as compact text for a model; errors carry the layer that stopped the
// query, the database's message, position and hint.
package sqlguard
