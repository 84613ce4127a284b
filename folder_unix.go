//go:build unix

package okf

import (
	"io/fs"
	"os"
	"syscall"
)

// listDir lists a folder opened in an os.Root. Such a file stats every
// entry as it lists it (1 system call a file); a copy of its descriptor
// opened as a plain file takes the entries' types from the listing itself,
// still relative to the same folder.
func listDir(dir *os.File) ([]fs.DirEntry, error) {
	fd, err := syscall.Dup(int(dir.Fd()))
	if err != nil {
		return dir.ReadDir(-1)
	}
	plain := os.NewFile(uintptr(fd), dir.Name())
	defer plain.Close()
	return plain.ReadDir(-1)
}
