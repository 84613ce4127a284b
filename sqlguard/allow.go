package sqlguard

import (
	"fmt"
	"slices"
	"strings"

	"github.com/okf-tools/okf/internal/lazy"
)

// The function allowlists: built-ins that only compute over the values a
// query reads. Everything else is refused, so a function a database or an
// extension adds, or one left out here, cannot run unless an operator
// allows it by name (Options.AllowFunctions, okf.yaml's allow_functions).
// docs/security.md lists the classes and why each excluded one is out.
//
// Left out on purpose: settings (set_config, current_setting), sleeping,
// server files and large objects, other sessions and signals
// (pg_cancel_backend, pg_stat_get_activity), statistics and catalog
// introspection (pg_relation_size, pg_get_functiondef, has_*_privilege),
// sequences and transaction ids (nextval, txid_current), locks
// (pg_advisory_lock), WAL and replication (pg_logical_emit_message),
// functions that run SQL given as text (query_to_xml, ts_rewrite, ts_stat),
// XML, dblink and foreign data, random seeds (setseed) and server facts
// (version, inet_server_addr, pg_control_system).
var postgresFunctions = lazy.Set{Names: []string{
	// math
	"abs", "cbrt", "ceil", "ceiling", "degrees", "div", "exp", "factorial", "floor", "gcd", "lcm", "ln", "log", "log10",
	"min_scale", "mod", "pi", "power", "pow", "radians", "round", "scale", "sign", "sqrt", "trim_scale", "trunc",
	"width_bucket", "random", "random_normal", "acos", "acosd", "asin", "asind", "atan", "atand", "atan2", "atan2d",
	"cos", "cosd", "cot", "cotd", "sin", "sind", "tan", "tand", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
	"erf", "erfc",
	// strings and bytes
	"ascii", "bit_length", "btrim", "char_length", "character_length", "chr", "concat", "concat_ws", "convert_from",
	"convert_to", "decode", "encode", "format", "initcap", "left", "length", "lower", "lpad", "ltrim", "md5",
	"normalize", "is_normalized", "octet_length", "overlay", "position", "quote_ident", "quote_literal",
	"quote_nullable", "regexp_count", "regexp_instr", "regexp_like", "regexp_match", "regexp_matches",
	"regexp_replace", "regexp_split_to_array", "regexp_split_to_table", "regexp_substr", "repeat", "replace",
	"reverse", "right", "rpad", "rtrim", "split_part", "starts_with", "string_to_array", "string_to_table", "strpos",
	"substr", "substring", "to_ascii", "to_hex", "translate", "unistr", "upper", "sha224", "sha256", "sha384",
	"sha512", "similar_to_escape", "casefold", "get_bit", "get_byte", "set_bit", "set_byte", "bit_count",
	// dates and times
	"age", "clock_timestamp", "date_add", "date_bin", "date_part", "date_subtract", "date_trunc", "extract",
	"isfinite", "justify_days", "justify_hours", "justify_interval", "make_date", "make_interval", "make_time",
	"make_timestamp", "make_timestamptz", "now", "statement_timestamp", "timeofday", "transaction_timestamp",
	"to_char", "to_date", "to_number", "to_timestamp", "timezone", "overlaps",
	// aggregates
	"any_value", "array_agg", "avg", "bit_and", "bit_or", "bit_xor", "bool_and", "bool_or", "count", "every",
	"json_agg", "json_agg_strict", "jsonb_agg", "jsonb_agg_strict", "json_object_agg", "jsonb_object_agg",
	"json_object_agg_strict", "jsonb_object_agg_strict", "json_object_agg_unique", "jsonb_object_agg_unique",
	"max", "min", "range_agg", "range_intersect_agg", "string_agg", "sum", "corr", "covar_pop", "covar_samp",
	"regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2", "regr_slope", "regr_sxx", "regr_sxy",
	"regr_syy", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop", "var_samp", "mode",
	"percentile_cont", "percentile_disc",
	// window functions
	"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value",
	"last_value", "nth_value",
	// JSON
	"to_json", "to_jsonb", "array_to_json", "row_to_json", "json_build_array", "jsonb_build_array",
	"json_build_object", "jsonb_build_object", "json_object", "jsonb_object", "json_array_elements",
	"jsonb_array_elements", "json_array_elements_text", "jsonb_array_elements_text", "json_array_length",
	"jsonb_array_length", "json_each", "jsonb_each", "json_each_text", "jsonb_each_text", "json_extract_path",
	"jsonb_extract_path", "json_extract_path_text", "jsonb_extract_path_text", "json_object_keys",
	"jsonb_object_keys", "json_populate_record", "jsonb_populate_record", "json_populate_recordset",
	"jsonb_populate_recordset", "json_to_record", "jsonb_to_record", "json_to_recordset", "jsonb_to_recordset",
	"json_strip_nulls", "jsonb_strip_nulls", "jsonb_set", "jsonb_set_lax", "jsonb_insert", "jsonb_path_exists",
	"jsonb_path_match", "jsonb_path_query", "jsonb_path_query_array", "jsonb_path_query_first",
	"jsonb_path_exists_tz", "jsonb_path_match_tz", "jsonb_path_query_tz", "jsonb_path_query_array_tz",
	"jsonb_path_query_first_tz", "jsonb_pretty", "json_typeof", "jsonb_typeof",
	// arrays
	"array_append", "array_cat", "array_dims", "array_fill", "array_length", "array_lower", "array_ndims",
	"array_position", "array_positions", "array_prepend", "array_remove", "array_replace", "array_reverse",
	"array_sort", "array_to_string", "array_upper", "cardinality", "trim_array", "unnest", "generate_subscripts",
	// ranges
	"upper_inc", "lower_inc", "upper_inf", "lower_inf", "isempty", "range_merge", "int4range", "int8range",
	"numrange", "tsrange", "tstzrange", "daterange",
	// series, nulls, types
	"generate_series", "num_nulls", "num_nonnulls", "coalesce", "nullif", "greatest", "least", "pg_typeof",
	"bool", "int2", "int4", "int8", "float4", "float8", "numeric", "text", "varchar", "bpchar", "date", "time",
	"timestamp", "timestamptz", "interval", "gen_random_uuid", "uuidv4", "uuidv7",
	// text search (ts_rewrite and ts_stat run SQL text: left out)
	"to_tsvector", "to_tsquery", "plainto_tsquery", "phraseto_tsquery", "websearch_to_tsquery", "ts_rank",
	"ts_rank_cd", "ts_headline", "setweight", "strip", "numnode", "querytree", "tsvector_to_array",
	"array_to_tsvector", "ts_delete", "ts_filter", "tsquery_phrase",
}}

// sqliteFunctions are SQLite's built-in functions that only compute.
// like_escape is how PostgreSQL's parser writes LIKE … ESCAPE.
// load_extension, readfile, writefile, edit, fts3_tokenizer and the
// pragma_* table functions are out.
var sqliteFunctions = lazy.Set{Names: []string{
	// core scalar
	"abs", "changes", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex", "ifnull", "iif", "if", "instr",
	"last_insert_rowid", "length", "like", "like_escape", "likelihood", "likely", "lower", "ltrim", "max", "min", "nullif", "octet_length",
	"printf", "quote", "random", "randomblob", "replace", "round", "rtrim", "sign", "soundex", "substr", "substring",
	"total_changes", "trim", "typeof", "unhex", "unicode", "unlikely", "upper", "zeroblob", "sqlite_version",
	// aggregate
	"avg", "count", "group_concat", "string_agg", "sum", "total", "median", "percentile", "percentile_cont", "percentile_disc",
	// date and time
	"date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
	// math
	"acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos", "cosh", "degrees", "exp",
	"floor", "ln", "log", "log10", "log2", "mod", "pi", "pow", "power", "radians", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
	// window
	"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value", "last_value", "nth_value",
	// JSON
	"json", "jsonb", "json_array", "jsonb_array", "json_array_length", "json_error_position", "json_extract", "jsonb_extract",
	"json_insert", "jsonb_insert", "json_object", "jsonb_object", "json_patch", "jsonb_patch", "json_pretty", "json_remove",
	"jsonb_remove", "json_replace", "jsonb_replace", "json_set", "jsonb_set", "json_type", "json_valid", "json_quote",
	"json_group_array", "jsonb_group_array", "json_group_object", "jsonb_group_object", "json_each", "json_tree",
	"->", "->>",
}}

// duckdbFunctions are DuckDB's built-in scalar, aggregate and window
// functions that only compute over the values a query reads (core, ICU and
// JSON). Out on purpose: query and query_table (SQL given as text),
// json_execute_serialized_sql, every file reader and glob, the duckdb_* and
// pragma_* catalog functions, current_setting, getvariable, setseed,
// stats, version, sequences (nextval), and every function an extension or
// the database's owner adds (macros).
var duckdbFunctions = lazy.Set{Names: []string{
	// math
	"abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bit_count", "cbrt", "ceil", "ceiling",
	"cos", "cosh", "cot", "degrees", "divide", "even", "exp", "factorial", "fdiv", "floor", "fmod", "gamma", "gcd",
	"greatest_common_divisor", "isfinite", "isinf", "isnan", "lcm", "least_common_multiple", "lgamma", "ln", "log",
	"log10", "log2", "mod", "multiply", "nextafter", "pi", "pow", "power", "radians", "random", "round", "round_even",
	"roundbankers", "sign", "signbit", "sin", "sinh", "sqrt", "subtract", "tan", "tanh", "trunc", "xor",
	// strings and bytes
	"ascii", "bar", "base64", "bin", "bit_length", "chr", "concat", "concat_ws", "contains", "damerau_levenshtein",
	"decode", "editdist3", "encode", "ends_with", "format", "format_bytes", "formatreadabledecimalsize",
	"formatreadablesize", "from_base64", "from_binary", "from_hex", "hamming", "hex", "ilike_escape", "instr",
	"jaccard", "jaro_similarity", "jaro_winkler_similarity", "lcase", "left", "length", "length_grapheme",
	"levenshtein", "like_escape", "lower", "lpad", "ltrim", "md5", "md5_number", "mismatches", "nfc_normalize",
	"not_ilike_escape", "not_like_escape", "octet_length", "ord", "position", "prefix", "printf", "regexp_escape",
	"regexp_extract", "regexp_extract_all", "regexp_full_match", "regexp_matches", "regexp_replace",
	"regexp_split_to_array", "repeat", "replace", "reverse", "right", "rpad", "rtrim", "sha1", "sha256", "split",
	"split_part", "starts_with", "str_split", "str_split_regex", "string_split", "string_split_regex",
	"string_to_array", "strip_accents", "strlen", "strpos", "substr", "substring", "substring_grapheme", "suffix",
	"to_base", "to_base64", "to_binary", "to_hex", "translate", "trim", "ucase", "unbin", "unhex", "unicode", "upper",
	"url_decode", "url_encode", "get_bit", "set_bit", "bit_position", "bitstring",
	// dates and times
	"age", "century", "current_date", "current_localtime", "current_localtimestamp", "current_time",
	"current_timestamp", "date", "date_add", "date_diff", "date_part", "date_sub", "date_trunc", "datediff", "datepart",
	"datesub", "datetrunc", "day", "dayname", "dayofmonth", "dayofweek", "dayofyear", "decade", "epoch", "epoch_ms",
	"epoch_ns", "epoch_us", "era", "extract", "get_current_time", "get_current_timestamp", "hour", "isodow",
	"isoyear", "julian", "last_day", "make_date", "make_time", "make_timestamp", "make_timestamp_ns",
	"make_timestamptz", "microsecond", "millennium", "millisecond", "minute", "month", "monthname", "nanosecond",
	"now", "quarter", "second", "strftime", "strptime", "time_bucket", "timezone", "timezone_hour",
	"timezone_minute", "to_centuries", "to_days", "to_decades", "to_hours", "to_microseconds", "to_millennia",
	"to_milliseconds", "to_minutes", "to_months", "to_quarters", "to_seconds", "to_timestamp", "to_weeks",
	"to_years", "today", "transaction_timestamp", "try_strptime", "week", "weekday", "weekofyear", "year",
	"yearweek",
	// aggregates
	"any_value", "approx_count_distinct", "approx_quantile", "approx_top_k", "arbitrary", "arg_max", "arg_max_null",
	"arg_min", "arg_min_null", "argmax", "argmin", "array_agg", "avg", "bit_and", "bit_or", "bit_xor",
	"bitstring_agg", "bool_and", "bool_or", "corr", "count", "count_if", "countif", "covar_pop", "covar_samp",
	"entropy", "every", "favg", "first", "fsum", "geomean", "geometric_mean", "group_concat", "histogram",
	"histogram_exact", "kahan_sum", "kurtosis", "kurtosis_pop", "last", "list", "listagg", "mad", "max", "max_by",
	"mean", "median", "min", "min_by", "mode", "product", "quantile", "quantile_cont", "quantile_disc",
	"percentile_cont", "percentile_disc", "regr_avgx", "regr_avgy", "regr_count", "regr_intercept", "regr_r2",
	"regr_slope", "regr_sxx", "regr_sxy", "regr_syy", "reservoir_quantile", "skewness", "stddev", "stddev_pop",
	"stddev_samp", "string_agg", "sum", "sumkahan", "var_pop", "var_samp", "variance", "weighted_avg", "wavg",
	// window functions
	"row_number", "rank", "dense_rank", "rank_dense", "percent_rank", "cume_dist", "ntile", "lag", "lead",
	"first_value", "last_value", "nth_value", "fill",
	// lists and arrays
	"array_append", "array_cat", "array_concat", "array_contains", "array_cosine_distance",
	"array_cosine_similarity", "array_cross_product", "array_distance", "array_distinct", "array_dot_product",
	"array_extract", "array_filter", "array_has", "array_has_all", "array_has_any", "array_indexof",
	"array_inner_product", "array_length", "array_negative_inner_product", "array_pop_back", "array_pop_front",
	"array_position", "array_prepend", "array_reduce", "array_resize", "array_reverse", "array_reverse_sort",
	"array_select", "array_slice", "array_sort", "array_to_string", "array_transform", "array_unique",
	"array_value", "array_where", "array_zip", "cardinality", "flatten", "generate_series", "len", "list_aggr",
	"list_aggregate", "list_any_value", "list_append", "list_avg", "list_bool_and", "list_bool_or", "list_cat",
	"list_concat", "list_contains", "list_cosine_distance", "list_cosine_similarity", "list_count",
	"list_distance", "list_distinct", "list_dot_product", "list_element", "list_entropy", "list_extract",
	"list_filter", "list_first", "list_grade_up", "list_has", "list_has_all", "list_has_any", "list_indexof",
	"list_inner_product", "list_intersect", "list_kurtosis", "list_last", "list_mad", "list_max", "list_median",
	"list_min", "list_mode", "list_negative_inner_product", "list_pack", "list_position", "list_prepend",
	"list_product", "list_reduce", "list_resize", "list_reverse", "list_reverse_sort", "list_select",
	"list_skewness", "list_slice", "list_sort", "list_stddev_pop", "list_stddev_samp", "list_string_agg",
	"list_sum", "list_transform", "list_unique", "list_value", "list_var_pop", "list_var_samp", "list_where",
	"list_zip", "range", "unnest", "apply", "filter", "reduce",
	// structs, maps and unions
	"struct_pack", "struct_extract", "struct_extract_at", "struct_insert", "struct_concat", "row", "map",
	"map_concat", "map_contains", "map_entries", "map_extract", "map_extract_value", "map_from_entries",
	"map_keys", "map_values", "element_at", "union_extract", "union_tag", "union_value",
	// enums
	"enum_code", "enum_first", "enum_last", "enum_range", "enum_range_boundary",
	// JSON
	"to_json", "json", "json_array", "json_array_length", "json_contains", "json_exists", "json_extract",
	"json_extract_path", "json_extract_path_text", "json_extract_string", "json_group_array", "json_group_object",
	"json_group_structure", "json_keys", "json_merge_patch", "json_object", "json_pretty", "json_quote",
	"json_structure", "json_transform", "json_transform_strict", "from_json", "from_json_strict", "json_type",
	"json_valid", "json_value", "array_to_json", "row_to_json",
	// nulls, conditions, hashes, types
	"coalesce", "nullif", "ifnull", "if", "iif", "greatest", "least", "hash", "typeof", "gen_random_uuid", "uuid",
	"uuidv4", "uuidv7", "error", "constant_or_null", "can_cast_implicitly",
}}

// duckdbTableFunctions are the table functions DuckDB queries may read
// from: they generate rows from their arguments and read nothing else.
var duckdbTableFunctions = lazy.Set{Names: []string{"range", "generate_series", "unnest"}}

// sqliteTableFunctions are the table-valued functions queries may read from.
var sqliteTableFunctions = lazy.Set{Names: []string{"json_each", "json_tree"}}

// Operators every query may use: PostgreSQL's built-in symbols (and
// SQLite's ==). An operator a database adds runs its owner's code and is
// refused unless written as one of these on the built-in types.
var allowedOperators = lazy.Set{Names: []string{
	"+", "-", "*", "/", "%", "^", "|/", "||/", "@", "&", "|", "#", "~", "<<", ">>",
	"=", "==", "<>", "!=", "<", ">", "<=", ">=", "||", "~~", "~~*", "!~~", "!~~*", "~*", "!~", "!~*",
	"->", "->>", "#>", "#>>", "@>", "<@", "?", "?|", "?&", "#-", "@?", "@@", "@@@", "&&", "-|-", "&<", "&>",
	"<->", "<<|", "|>>", "&<|", "|&>", "?-", "?-|", "?||", "##", "@-@", "~=", "<^", ">^", "?#", "<<=", ">>=",
	"BETWEEN", "NOT BETWEEN", "BETWEEN SYMMETRIC", "NOT BETWEEN SYMMETRIC",
}}

// deniedTypes are types whose input functions read the catalog or parse
// XML; a cast to one is refused. Casts to every other type only convert.
var deniedTypes = lazy.Set{Names: []string{
	"regclass", "regproc", "regprocedure", "regoper", "regoperator", "regtype", "regrole", "regnamespace",
	"regconfig", "regdictionary", "regcollation", "xml", "txid_snapshot", "aclitem",
}}

// recordFields are the field names of the records allowed functions
// return (json_each and its kin), which (f(x)).name may select.
var recordFields = lazy.Set{Names: []string{"key", "value", "ordinality"}}

// allowList is one validator's function allowlist: the dialect's built-ins
// and the names an operator added.
type allowList struct {
	builtin map[string]bool
	extra   map[string]bool // "name" and "schema.name", lower case
	// everything allows every function: ColumnsRead resolves queries it
	// does not guard.
	everything bool
}

func newAllowList(d Dialect, extra []string) (allowList, error) {
	a := allowList{builtin: postgresFunctions.Get(), extra: map[string]bool{}}
	switch d {
	case DialectSQLite:
		a.builtin = sqliteFunctions.Get()
	case DialectDuckDB:
		a.builtin = duckdbFunctions.Get()
	}
	for _, f := range extra {
		f = strings.ToLower(strings.TrimSpace(f))
		parts := strings.Split(f, ".")
		if f == "" || len(parts) > 2 || slices.Contains(parts, "") {
			return a, fmt.Errorf("allowed function %q: want \"function\" or \"schema.function\"", f)
		}
		a.extra[f] = true
	}
	return a, nil
}

// allows reports whether a call of the function named by names (as
// written: "f", "schema.f") may run.
func (a allowList) allows(names []string) bool {
	if a.everything {
		return true
	}
	switch len(names) {
	case 1:
		n := strings.ToLower(names[0])
		if a.builtin[n] || a.extra[n] {
			return true
		}
		for e := range a.extra {
			if strings.HasSuffix(e, "."+n) {
				return true
			}
		}
		return false
	case 2:
		schema, n := strings.ToLower(names[0]), strings.ToLower(names[1])
		if a.extra[schema+"."+n] {
			return true
		}
		return (schema == "pg_catalog" || schema == "main") && (a.builtin[n] || a.extra[n])
	}
	return false
}

// deniedClass reports whether name belongs to a class left out on purpose.
func deniedClass(name string) bool {
	for _, c := range functionClasses {
		if c.match(name) {
			return true
		}
	}
	return false
}

// functionRefusal says why a function is out, for the error text.
func functionRefusal(name string) string {
	for _, c := range functionClasses {
		if c.match(name) {
			return c.why
		}
	}
	return "it is not on the list of functions known to be safe"
}

type functionClass struct {
	prefixes []string
	names    []string
	why      string
}

func (c functionClass) match(name string) bool {
	if slices.Contains(c.names, name) {
		return true
	}
	for _, p := range c.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// functionClasses name, for error messages, the classes left out.
var functionClasses = []functionClass{
	{names: []string{"set_config", "current_setting", "pg_show_all_settings", "setseed"}, why: "it reads or changes settings"},
	{prefixes: []string{"pg_sleep"}, why: "it sleeps; queries need no sleeping"},
	{prefixes: []string{"pg_read_", "pg_ls_", "pg_file_", "pg_stat_file", "pg_current_logfile", "lo_"}, names: []string{"loread", "lowrite", "readfile", "writefile", "edit"}, why: "it reads or writes server files or large objects"},
	{names: []string{"pg_cancel_backend", "pg_terminate_backend", "pg_signal_backend", "pg_reload_conf", "pg_rotate_logfile", "pg_log_backend_memory_contexts", "pg_promote", "pg_notify"}, why: "it signals other sessions or the server"},
	{prefixes: []string{"pg_stat_", "pg_get_", "has_", "pg_relation_", "pg_table_", "pg_total_", "pg_indexes_", "pg_database_", "pg_tablespace_", "pg_control_", "to_reg", "obj_description", "col_description", "pg_describe"}, why: "it reads statistics or the catalog"},
	{names: []string{"nextval", "setval", "currval", "lastval"}, why: "it reads or writes sequences"},
	{prefixes: []string{"txid_", "pg_current_xact", "pg_export_snapshot", "pg_snapshot", "pg_xact"}, why: "it assigns or reads transaction ids"},
	{prefixes: []string{"pg_advisory", "pg_try_advisory"}, why: "it takes advisory locks"},
	{prefixes: []string{"pg_logical_", "pg_replication_", "pg_create_", "pg_drop_", "pg_copy_", "pg_switch_wal", "pg_wal_", "pg_backup_"}, why: "it writes WAL or changes replication"},
	{names: []string{"query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema", "ts_rewrite", "ts_stat", "cursor_to_xml", "cursor_to_xmlschema"}, why: "it runs SQL given as text"},
	{prefixes: []string{"xml", "xpath", "table_to_xml", "schema_to_xml", "database_to_xml"}, why: "XML functions are not on the allowlist"},
	{prefixes: []string{"dblink", "postgres_fdw"}, why: "it connects to other databases"},
	{names: []string{"load_extension", "fts3_tokenizer"}, prefixes: []string{"pragma_"}, why: "it loads code or reads SQLite internals"},
	{names: []string{"query", "query_table", "json_execute_serialized_sql", "json_serialize_sql", "json_deserialize_sql", "json_serialize_plan"}, why: "it runs SQL given as text or reads its plan"},
	{names: []string{"glob", "sniff_csv", "summary", "iceberg_scan", "delta_scan", "sqlite_scan", "postgres_scan", "mysql_scan"}, prefixes: []string{"read_", "parquet_", "sqlite_attach", "postgres_attach"}, why: "it reads files or other databases"},
	{names: []string{"getvariable", "which_secret", "stats", "current_schemas", "current_database", "current_catalog"}, prefixes: []string{"duckdb_", "icu_"}, why: "it reads the catalog, settings, variables or secrets"},
	{names: []string{"version", "inet_server_addr", "inet_server_port", "inet_client_addr", "pg_postmaster_start_time", "pg_conf_load_time", "pg_backend_pid"}, why: "it reads facts about the server"},
}
