package readmodel

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/okf-tools/okf/internal/synth"
)

// sameAsJSON fails t unless decodeConcept reads b as json.Unmarshal does:
// the same concept, or an error both.
func sameAsJSON(t *testing.T, b []byte) {
	t.Helper()
	var got, want Concept
	gerr := decodeConcept(b, &got)
	werr := json.Unmarshal(b, &want)
	if (gerr != nil) != (werr != nil) {
		t.Fatalf("%s: decodeConcept error %v, json.Unmarshal error %v", b, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\ndecodeConcept %+v\njson.Unmarshal %+v", b, got, want)
	}
}

func TestDecodeConcept(t *testing.T) {
	var docs []Doc
	for _, d := range synth.Generate(300, 7) {
		docs = append(docs, Doc{Bundle: d.Bundle, Path: d.Path, Content: d.Content})
	}
	snap, _ := Build("t", docs)
	fast := 0
	for i := range snap.Concepts {
		b, err := json.Marshal(&snap.Concepts[i])
		if err != nil {
			t.Fatal(err)
		}
		sameAsJSON(t, b)
		if (&conceptReader{b: b}).concept(&Concept{}) {
			fast++
		}
	}
	if fast != len(snap.Concepts) {
		t.Errorf("decodeConcept read %d of %d concepts itself", fast, len(snap.Concepts))
	}
	odd := Concept{ID: "a\"b\\c", Title: "<&> \u2028 \t\n é 😀", Links: []string{"x", ""}, StaleAfter: "2026", Layer: "mart", Aliases: []string{"a \"b\"", "é"},
		Row: [2]int{0, 12}, Body: [2]int{3, 4}, Sections: []Section{{Slug: "s", Start: 1, End: 2}, {}}}
	b, _ := json.Marshal(odd)
	sameAsJSON(t, b)
	if !(&conceptReader{b: b}).concept(&Concept{}) {
		t.Errorf("decodeConcept left %s to json.Unmarshal", b)
	}
	for _, s := range []string{`{}`, `{"id":1}`, `{"ID":"x","bundle":"b"}`, `{"id":"\ud800"}`, `{"id":"x"} `, `null`, `{"id":"a","bundle":"b","title":"","kind":"","status":"","grain":"","summary":"","links":null,"row":[0,0],"body":[0,0]}`,
		`{"id":"a","bundle":"b","title":"","kind":"","status":"","grain":"","summary":"","row":[-1,0],"body":[0,0]}`, "{\"id\":\"\xff\"}"} {
		sameAsJSON(t, []byte(s))
	}
}

func FuzzDecodeConcept(f *testing.F) {
	b, _ := json.Marshal(Concept{ID: "a", Links: []string{"b"}, Sections: []Section{{Slug: "c"}}})
	f.Add(b, "x")
	f.Fuzz(func(t *testing.T, raw []byte, s string) {
		sameAsJSON(t, raw)
		b, _ := json.Marshal(Concept{ID: s, Title: s, Links: []string{s}, Sections: []Section{{Slug: s, Start: len(s)}}})
		sameAsJSON(t, b)
	})
}
