package eval

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/okf-tools/okf/trace"
)

// Side is one side of a paired comparison: a strategy and a model.
type Side struct{ Strategy, Model string }

func (s Side) String() string { return s.Strategy + "/" + s.Model }

// ParseSide reads "strategy/model". A strategy holds no slash, so the
// first one splits them: a model may hold slashes of its own
// ("context/openai/gpt-4.1-mini").
func ParseSide(s string) (Side, error) {
	strategy, model, ok := strings.Cut(s, "/")
	if !ok || strategy == "" || model == "" {
		return Side{}, fmt.Errorf("%q is not strategy/model (e.g. context/mini)", s)
	}
	return Side{strategy, model}, nil
}

// Paired compares two sides on the same questions: each question's nth
// scored run with A is paired with its nth scored run with B. Runs the
// model endpoint failed are not scored, so not paired.
type Paired struct {
	A         string `json:"a"`
	B         string `json:"b"`
	Pairs     int    `json:"pairs"`
	BothRight int    `json:"both_right"`
	OnlyA     int    `json:"only_a"`
	OnlyB     int    `json:"only_b"`
	Neither   int    `json:"neither"`
	// PValue is McNemar's exact test, two-sided, on OnlyA and OnlyB.
	PValue float64 `json:"p_value"`
	// UnpairedA and UnpairedB count one side's scored runs the other side
	// has no run to pair with: left out.
	UnpairedA int `json:"unpaired_a"`
	UnpairedB int `json:"unpaired_b"`
	// Tokens are the paired runs' input and output tokens, summed; cost
	// is nil when any paired run's price is unknown, or its record is not
	// in the run log.
	TokensA          int      `json:"tokens_a"`
	TokensB          int      `json:"tokens_b"`
	TokensDifference int      `json:"tokens_difference"`
	CostA            *float64 `json:"cost_a_usd"`
	CostB            *float64 `json:"cost_b_usd"`
	CostDifference   *float64 `json:"cost_difference_usd"`
}

// Compare pairs the scored runs of a and b in the results file at path
// and totals the paired runs' tokens and cost from the run log's records.
// A side with no scored run is an error naming the sides there are.
func Compare(path string, runs []trace.Record, a, b Side) (Paired, error) {
	scores, _, _, err := readResults(path)
	if err != nil {
		return Paired{}, err
	}
	type pairKey struct {
		task   string
		repeat int
	}
	sides := map[Side]map[pairKey]Score{}
	for _, s := range scores {
		side := Side{s.Strategy, s.Model}
		if sides[side] == nil {
			sides[side] = map[pairKey]Score{}
		}
		sides[side][pairKey{s.Task, s.Repeat}] = s
	}
	for _, side := range []Side{a, b} {
		if len(sides[side]) == 0 {
			var there []string
			for s := range sides {
				there = append(there, s.String())
			}
			slices.Sort(there)
			if len(there) == 0 {
				return Paired{}, fmt.Errorf("no scored runs of %s: the results hold none", side)
			}
			return Paired{}, fmt.Errorf("no scored runs of %s; the results hold %s", side, strings.Join(there, ", "))
		}
	}
	byID := map[string]*trace.Record{}
	for i := range runs {
		byID[runs[i].ID] = &runs[i]
	}
	p := Paired{A: a.String(), B: b.String()}
	costA, costB, known := 0.0, 0.0, true
	add := func(s Score, tokens *int, cost *float64) {
		rec := byID[s.Run]
		if rec == nil || rec.Cost == nil {
			known = false
		}
		if rec != nil {
			*tokens += rec.Usage.Input + rec.Usage.Output
			if rec.Cost != nil {
				*cost += *rec.Cost
			}
		}
	}
	for k, sa := range sides[a] {
		sb, ok := sides[b][k]
		if !ok {
			p.UnpairedA++
			continue
		}
		p.Pairs++
		switch {
		case sa.Correct && sb.Correct:
			p.BothRight++
		case sa.Correct:
			p.OnlyA++
		case sb.Correct:
			p.OnlyB++
		default:
			p.Neither++
		}
		add(sa, &p.TokensA, &costA)
		add(sb, &p.TokensB, &costB)
	}
	p.UnpairedB = len(sides[b]) - p.Pairs
	p.PValue = McNemar(p.OnlyA, p.OnlyB)
	p.TokensDifference = p.TokensB - p.TokensA
	if known && p.Pairs > 0 {
		diff := costB - costA
		p.CostA, p.CostB, p.CostDifference = &costA, &costB, &diff
	}
	return p, nil
}

// WriteComparison writes the paired table, McNemar's test and the
// difference in tokens and cost per run.
func WriteComparison(w io.Writer, p Paired) error {
	var b strings.Builder
	fmt.Fprintf(&b, "A: %s\nB: %s\n%d pairs: each question's nth run with A and its nth run with B.\n", p.A, p.B, p.Pairs)
	if p.UnpairedA+p.UnpairedB > 0 {
		fmt.Fprintf(&b, "Left out, having no run to pair with: %d runs of A, %d of B.\n", p.UnpairedA, p.UnpairedB)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 2, 0, 3, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tB right\tB wrong\t\n")
	fmt.Fprintf(tw, "A right\t%d\t%d\t\n", p.BothRight, p.OnlyA)
	fmt.Fprintf(tw, "A wrong\t%d\t%d\t\n", p.OnlyB, p.Neither)
	tw.Flush()
	fmt.Fprintf(&b, "\nboth right %d, only A %d, only B %d, neither %d\n", p.BothRight, p.OnlyA, p.OnlyB, p.Neither)
	if p.Pairs == 0 {
		_, err := io.WriteString(w, b.String())
		return err
	}
	accuracy := func(right int) string {
		return fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(right)/float64(p.Pairs), right, p.Pairs)
	}
	fmt.Fprintf(&b, "accuracy on the pairs: A %s, B %s\n", accuracy(p.BothRight+p.OnlyA), accuracy(p.BothRight+p.OnlyB))
	fmt.Fprintf(&b, "McNemar's exact test (two-sided, on the %d discordant pairs): p = %.3g\n", p.OnlyA+p.OnlyB, p.PValue)
	n := float64(p.Pairs)
	fmt.Fprintf(&b, "tokens per run: A %.0f, B %.0f (B - A: %+.0f)\n", float64(p.TokensA)/n, float64(p.TokensB)/n, float64(p.TokensDifference)/n)
	if p.CostA == nil {
		b.WriteString("cost per run: unknown (a run's price is unknown, or it is not in the run log)\n")
	} else {
		fmt.Fprintf(&b, "cost per run: A %s, B %s (B - A: %s)\n", dollars(*p.CostA/n), dollars(*p.CostB/n), signedDollars(*p.CostDifference/n))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func signedDollars(v float64) string {
	if v < 0 {
		return "-" + dollars(-v)
	}
	return "+" + dollars(v)
}
