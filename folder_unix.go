//go:build unix

package okf

import (
	"errors"
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

// readIn reads the file base of the folder dir with openat, fstat, read
// and close, not as an os.File, which also asks the poller to take it (four
// calls more, all refused for a regular file). done is false when it could
// not open the file, which Open then does, for its own error or for a
// link swapped in since the listing, which Open follows inside the root.
func readIn(dir *os.File, base string) (content []byte, done bool, err error) {
	rc, err := dir.SyscallConn()
	if err != nil {
		return nil, false, nil
	}
	fd := -1
	if cerr := rc.Control(func(dfd uintptr) {
		for {
			var oerr error
			fd, oerr = syscall.Openat(int(dfd), base, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
			if oerr != syscall.EINTR {
				if oerr != nil {
					fd = -1
				}
				return
			}
		}
	}); cerr != nil || fd < 0 {
		return nil, false, nil
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	for {
		err = syscall.Fstat(fd, &st)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, true, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		// Swapped for a pipe or a device since the listing: never read one.
		return nil, true, errors.New("not a regular file")
	}
	buf := make([]byte, 0, int(st.Size)+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, rerr := syscall.Read(fd, buf[len(buf):cap(buf)])
		switch {
		case rerr == syscall.EINTR:
			continue
		case rerr != nil:
			return nil, true, rerr
		case n == 0:
			return buf, true, nil
		}
		buf = buf[:len(buf)+n]
	}
}
