package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/okf-tools/okf/store"
	_ "github.com/okf-tools/okf/store/sqlite"
)

func TestOpenDefaultCreatesDataDir(t *testing.T) {
	data := filepath.Join(t.TempDir(), "nested", "okf")
	t.Setenv("OKF_DATA", data)
	st, err := store.Open(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Write(context.Background(), "default", "b", "a.md", []byte("a"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(data, store.DefaultFile)); err != nil {
		t.Fatalf("default store file not created: %v", err)
	}
}

func TestOpenUnlinkedBackend(t *testing.T) {
	_, err := store.Open(context.Background(), "postgres://nobody@127.0.0.1:1/none")
	if err == nil || !strings.Contains(err.Error(), "store/postgres") {
		t.Fatalf("opening a backend that is not linked in: %v, want a hint to import it", err)
	}
}

func TestHash(t *testing.T) {
	if got := store.Hash(nil); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("Hash(empty) = %s", got)
	}
}
