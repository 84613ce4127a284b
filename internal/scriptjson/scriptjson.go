// Package scriptjson writes the data block of a self-contained HTML page:
// indented JSON with <, > and & escaped, so that no text it carries can
// close the script element that holds it.
package scriptjson

import (
	"bytes"
	"encoding/json"
)

// Marshal returns v as indented JSON that is safe inside a script element.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b) // escapes <, > and & by default
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
