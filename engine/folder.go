package engine

import (
	"maps"
	"slices"

	"github.com/okf-tools/okf"
	"github.com/okf-tools/okf/readmodel"
	"github.com/okf-tools/okf/store"
)

// FolderDocs reads the documents of dir, a bundle folder or a folder of
// bundle folders, laid out as okf.FindBundles finds them: what a folder
// library serves, and what it reloads on a change.
func FolderDocs(dir string) ([]readmodel.Doc, error) {
	bundles, err := okf.FindBundles(dir)
	if err != nil {
		return nil, err
	}
	return ReadBundles(bundles)
}

// ReadBundles reads the documents of bundle folders, unparsed (the read
// model parses each once), each path checked as the store checks it.
func ReadBundles(bundles []okf.BundleFolder) ([]readmodel.Doc, error) {
	var docs []readmodel.Doc
	for _, b := range bundles {
		files, err := store.ReadFolder(b.Dir)
		if err != nil {
			return nil, err
		}
		for _, p := range slices.Sorted(maps.Keys(files)) {
			docs = append(docs, readmodel.Doc{Bundle: b.Name, Path: p, Content: files[p]})
		}
	}
	return docs, nil
}
