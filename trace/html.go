package trace

import (
	"embed"
	"fmt"
	"html/template"
	"io"

	"github.com/okf-tools/okf/internal/lazy"
	"github.com/okf-tools/okf/internal/scriptjson"
)

//go:embed viewer.html
var viewer embed.FS

// viewerPage is parsed on first use: okf starts without it.
var viewerPage = lazy.Value[*template.Template]{New: parseViewer}

func parseViewer() *template.Template { return template.Must(template.ParseFS(viewer, "viewer.html")) }

// ViewerJSON is the data block of the run viewer: the runs, indented, with
// <, > and & escaped so no recorded text can close the script element.
func ViewerJSON(runs []*Record) ([]byte, error) {
	if runs == nil {
		runs = []*Record{}
	}
	b, err := scriptjson.Marshal(runs)
	if err != nil {
		return nil, fmt.Errorf("encoding runs for the viewer: %w", err)
	}
	return b, nil
}

// WriteHTML writes a self-contained page (inline script and styles, no
// network) that shows runs: a list, and for the chosen run every step
// with its tokens and times, every tool call with its arguments, SQL and
// result, the concepts read, and the answer. The first run is shown first.
func WriteHTML(w io.Writer, title string, runs []*Record) error {
	data, err := ViewerJSON(runs)
	if err != nil {
		return err
	}
	return viewerPage.Get().Execute(w, struct {
		Title string
		Data  template.JS
	}{title, template.JS(data)})
}
