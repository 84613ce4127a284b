package livesqlbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/okf-tools/okf/compile"
)

// kbLine is one line of a _kb.jsonl file.
type kbLine struct {
	ID          *int            `json:"id"`
	Knowledge   *string         `json:"knowledge"`
	Description string          `json:"description"`
	Definition  *string         `json:"definition"`
	Type        string          `json:"type"`
	Children    json.RawMessage `json:"children_knowledge"`
}

// ApplyRules reads a rules file and adds its rules to the database. Every
// line must be a JSON object with an id, a knowledge name and a
// definition; ids must be unique and children_knowledge must name rules of
// the file.
func ApplyRules(db *compile.Database, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading business rules: %w", err)
	}
	lineOfID := map[int]int{}
	var rules []*compile.Rule
	var ruleLines []int
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var kb kbLine
		dec := json.NewDecoder(bytes.NewReader(text))
		if err := dec.Decode(&kb); err != nil {
			return lineError(path, line, "not a JSON object: %s", jsonMessage(err))
		}
		if dec.More() {
			return lineError(path, line, "more than one JSON value on the line")
		}
		switch {
		case kb.ID == nil:
			return lineError(path, line, "rule has no \"id\"")
		case kb.Knowledge == nil || strings.TrimSpace(*kb.Knowledge) == "":
			return lineError(path, line, "rule %d has no \"knowledge\" name", *kb.ID)
		case kb.Definition == nil:
			return lineError(path, line, "rule %d has no \"definition\"", *kb.ID)
		}
		if prev, ok := lineOfID[*kb.ID]; ok {
			return lineError(path, line, "rule id %d is already used on line %d", *kb.ID, prev)
		}
		lineOfID[*kb.ID] = line
		children, err := childIDs(kb.Children)
		if err != nil {
			return lineError(path, line, "rule %d: children_knowledge %v", *kb.ID, err)
		}
		rules = append(rules, &compile.Rule{
			ID: *kb.ID, Name: *kb.Knowledge, Description: kb.Description,
			Definition: *kb.Definition, Kind: kb.Type, DependsOn: children,
		})
		ruleLines = append(ruleLines, line)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading business rules %s: %w", path, err)
	}
	for i, r := range rules {
		for _, c := range r.DependsOn {
			if _, ok := lineOfID[c]; !ok {
				return lineError(path, ruleLines[i], "rule %d lists children_knowledge %d, but no rule has that id", r.ID, c)
			}
		}
	}
	db.Rules = append(db.Rules, rules...)
	db.Sources = append(db.Sources, compile.Source{
		ID: "kb", Resource: sourceName(path),
		Title: db.Name + " business rules (LiveSQLBench)", Rules: true,
	})
	return nil
}

// childIDs reads children_knowledge: a list of rule ids, or -1 (or null,
// or absent) for none.
func childIDs(raw json.RawMessage) ([]int, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" || s == "-1" {
		return nil, nil
	}
	var ids []int
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, fmt.Errorf("is %s, not a list of rule ids or -1", s)
	}
	return ids, nil
}
