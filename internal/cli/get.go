package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/okf-tools/okf/readmodel"
)

func newGetCmd(e *env) *cobra.Command {
	var (
		src    knowledgeSource
		opt    readmodel.GetOptions
		asJSON bool
	)
	c := &cobra.Command{
		Use:   "get <id>[#section] [<id>[#section]...]",
		Short: "Read concepts, or one section of each, by id",
		Long: `Get prints the body of each concept named, framed by a line
"@@ bundle/id#section [start..end of total]". An id is the concept's path
without .md; when two bundles hold the same id, write bundle/id. A #section
(or --section) narrows the read to one heading's section, named by its slug
("# Common query patterns" is common_query_patterns). --offset and --limit
cut a window of bytes; --find returns a window around the first match of a
phrase, with the offsets of every match. Unknown ids are listed in a final
"@@ missing" line and make the exit status 1.`,
		Example: `  okf get --dir ./bundles tables/orders
  okf get --dir ./bundles tables/orders#schema knowledge/active-customer
  okf get --dir ./bundles tables/events_ --find "event_params" --limit 800`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError("get takes at least one id")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			s, err := src.snapshot(e)
			if err != nil {
				return err
			}
			var slices []readmodel.Slice
			var missing []string
			for _, arg := range args {
				ref, section, _ := strings.Cut(arg, "#")
				o := opt
				if section != "" {
					o.Section = section
				}
				sl, err := s.Get(ref, o)
				switch {
				case errors.Is(err, readmodel.ErrUnknown):
					missing = append(missing, ref)
					continue
				case err != nil:
					return usageError("%v", err)
				}
				slices = append(slices, sl)
			}
			if asJSON {
				out, err := json.MarshalIndent(map[string]any{"slices": slices, "missing": nonNil(missing)}, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(e.stdout, "%s\n", out)
			} else {
				for _, sl := range slices {
					fmt.Fprint(e.stdout, frame(sl))
				}
				if len(missing) > 0 {
					fmt.Fprintf(e.stdout, "@@ missing %s\n", strings.Join(missing, " "))
				}
			}
			if len(missing) > 0 {
				return silentExit(exitFail)
			}
			return nil
		},
	}
	src.register(c.Flags())
	f := c.Flags()
	f.StringVar(&opt.Section, "section", "", "read only this section (a heading slug) of every id")
	f.IntVar(&opt.Offset, "offset", 0, "start the read this many bytes into the text")
	f.IntVar(&opt.Limit, "limit", 0, "read at most this many bytes (0: all)")
	f.StringVar(&opt.Find, "find", "", "return a window around the first match of this phrase (case-insensitive)")
	f.BoolVar(&asJSON, "json", false, "print the slices as JSON")
	return c
}

// frame renders one read the way agents receive it.
func frame(sl readmodel.Slice) string {
	head := "@@ " + sl.Ref
	if sl.Section != "" {
		head += "#" + sl.Section
	}
	head += fmt.Sprintf(" [%d..%d of %d]", sl.Start, sl.End, sl.Total)
	if len(sl.Matches) > 0 {
		head += fmt.Sprintf(" matches at %s", joinInts(sl.Matches))
	}
	text := sl.Text
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return head + "\n" + text
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
