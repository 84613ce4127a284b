package livesqlbench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/okf-tools/okf/compile"
)

// ApplyMeanings reads a column meanings file and sets the meaning and JSON
// fields of every column it names. Keys for tables or columns the database
// lacks are recorded in Database.Unmatched; a malformed key or value is an
// error.
func ApplyMeanings(db *compile.Database, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading column meanings: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	fail := func(off int64, format string, args ...any) error {
		return lineError(path, lineOf(raw, off), format, args...)
	}
	if err := expectDelim(dec, '{'); err != nil {
		return fail(dec.InputOffset(), "%v (want a JSON object of \"db|table|column\" keys)", jsonMessage(err))
	}
	for dec.More() {
		keyOff := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return fail(dec.InputOffset(), "%v", jsonMessage(err))
		}
		key := tok.(string)
		parts := strings.Split(key, "|")
		if len(parts) != 3 {
			return fail(keyOff, "key %q is not \"<db>|<table>|<column>\"", key)
		}
		var value any
		valOff := dec.InputOffset()
		if value, err = decodeOrdered(dec); err != nil {
			return fail(dec.InputOffset(), "%v", jsonMessage(err))
		}
		t := db.Table(parts[1])
		var c *compile.Column
		if t != nil {
			c = t.Column(parts[2])
		}
		if c == nil {
			db.Unmatched = append(db.Unmatched, parts[1]+"."+parts[2])
			continue
		}
		switch v := value.(type) {
		case string:
			c.Meaning = v
		case ordered:
			for _, kv := range v {
				switch kv.key {
				case "column_meaning":
					s, ok := kv.value.(string)
					if !ok {
						return fail(valOff, "%s: column_meaning is not a string", key)
					}
					c.Meaning = s
				case "fields_meaning":
					fields, ok := kv.value.(ordered)
					if !ok {
						return fail(valOff, "%s: fields_meaning is not an object", key)
					}
					c.JSONFields = mergeFields(flattenFields("", fields), c.JSONFields)
				}
			}
		default:
			return fail(valOff, "%s: meaning is neither a string nor an object with column_meaning", key)
		}
	}
	if _, err := dec.Token(); err != nil {
		return fail(dec.InputOffset(), "%v", jsonMessage(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return fail(dec.InputOffset(), "unexpected data after the JSON object")
	}
	db.Sources = append(db.Sources, compile.Source{
		ID: "column_meaning_base", Resource: sourceName(path),
		Title: db.Name + " column descriptions (LiveSQLBench)",
	})
	return nil
}

// flattenFields turns nested field meanings into dotted paths, in order.
// A leaf that is not a string (a list, a number) is kept as compact JSON.
func flattenFields(prefix string, fields ordered) []compile.JSONField {
	var out []compile.JSONField
	for _, kv := range fields {
		p := kv.key
		if prefix != "" {
			p = prefix + "." + kv.key
		}
		switch v := kv.value.(type) {
		case ordered:
			out = append(out, flattenFields(p, v)...)
		case string:
			out = append(out, compile.JSONField{Path: p, Meaning: v})
		default:
			out = append(out, compile.JSONField{Path: p, Meaning: jsonText(v)})
		}
	}
	return out
}

// mergeFields returns the documented fields followed by the observed ones
// (from a catalog's sample rows) that the documentation does not list.
func mergeFields(documented, observed []compile.JSONField) []compile.JSONField {
	out := documented
	for _, o := range observed {
		known := false
		for _, d := range documented {
			if strings.EqualFold(d.Path, o.Path) || strings.HasPrefix(strings.ToLower(d.Path), strings.ToLower(o.Path)+".") {
				known = true
				break
			}
		}
		if !known {
			out = append(out, o)
		}
	}
	return out
}

// ordered is a JSON object with its keys in source order.
type ordered []keyValue

type keyValue struct {
	key   string
	value any
}

// decodeOrdered decodes the next JSON value, keeping object key order.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var obj ordered
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				obj = append(obj, keyValue{k.(string), v})
			}
			_, err := dec.Token()
			return obj, err
		case '[':
			var arr []any
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

// jsonText renders a decoded value as JSON the way Python's json.dumps
// does by default (", " and ": " separators, keys in source order), which
// is how such leaves read in LiveSQLBench's own renderings.
func jsonText(v any) string {
	switch t := v.(type) {
	case ordered:
		parts := make([]string, len(t))
		for i, kv := range t {
			parts[i] = jsonText(kv.key) + ": " + jsonText(kv.value)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(t))
		for i, e := range t {
			parts[i] = jsonText(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case nil:
		return "null"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("found %v where %q was expected", tok, string(want))
	}
	return nil
}

// jsonMessage makes decoder errors read well after a file:line prefix.
func jsonMessage(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of JSON"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// lineOf returns the 1-based line of a byte offset.
func lineOf(raw []byte, off int64) int {
	if off > int64(len(raw)) {
		off = int64(len(raw))
	}
	return bytes.Count(raw[:off], []byte("\n")) + 1
}
