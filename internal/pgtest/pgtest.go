// Package pgtest starts throwaway PostgreSQL clusters from the locally
// installed server binaries, for use in tests.
//
// A cluster lives in a private temporary directory, listens on 127.0.0.1 on a
// free port (and on a unix socket inside that directory), trusts every local
// connection as the "postgres" superuser and runs with durability switched
// off for speed. Nothing of it survives Stop.
//
// Most tests use the per-binary shared cluster:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		dsn := pgtest.Shared(t).NewDatabase(t)
//		...
//	}
//
// Shared skips the test when no PostgreSQL binaries are installed, unless the
// environment sets OKF_REQUIRE_POSTGRES=1, in which case it fails it. The
// binaries are taken from the directory named by OKF_PG_BIN if set, else from
// the highest-versioned /usr/lib/postgresql/*/bin holding a server, else from
// PATH.
//
// When the tests run as root (as in CI), the server processes run as the
// "postgres" system user, because initdb and postgres refuse to run as root.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables read by this package.
const (
	// EnvBinDir names a directory holding initdb and pg_ctl; it overrides
	// the automatic search.
	EnvBinDir = "OKF_PG_BIN"
	// EnvRequire, when set to "1", turns a missing PostgreSQL installation
	// into a test failure instead of a skip.
	EnvRequire = "OKF_REQUIRE_POSTGRES"
)

// Superuser is the name of the bootstrap superuser of every cluster.
const Superuser = "postgres"

// ErrNoBinaries is wrapped by the errors of FindBinaries and Start when no
// usable PostgreSQL installation was found.
var ErrNoBinaries = errors.New("PostgreSQL binaries not found")

// libRoot is where Debian installs versioned PostgreSQL binaries.
const libRoot = "/usr/lib/postgresql"

// Binaries are the programs used to run a cluster.
type Binaries struct {
	InitDB string // path of initdb
	PGCtl  string // path of pg_ctl; it locates postgres itself
}

// FindBinaries locates initdb and pg_ctl: in $OKF_PG_BIN if that is set
// (and nowhere else), else in the highest-versioned
// /usr/lib/postgresql/*/bin that has both, else on PATH. The error wraps
// ErrNoBinaries.
func FindBinaries() (Binaries, error) {
	return findBinaries(os.Getenv(EnvBinDir), libRoot, exec.LookPath)
}

func findBinaries(override, libRoot string, lookPath func(string) (string, error)) (Binaries, error) {
	if override != "" {
		if b, ok := binariesIn(override); ok {
			return b, nil
		}
		return Binaries{}, fmt.Errorf("%w: %s=%s has no executable initdb and pg_ctl", ErrNoBinaries, EnvBinDir, override)
	}
	// Debian's client packages create /usr/lib/postgresql/N/bin without a
	// server, so take the highest version that actually has one.
	versions, _ := filepath.Glob(filepath.Join(libRoot, "*", "bin"))
	for i := range versions {
		versions[i] = filepath.Base(filepath.Dir(versions[i]))
	}
	sortVersionsDesc(versions)
	for _, v := range versions {
		if b, ok := binariesIn(filepath.Join(libRoot, v, "bin")); ok {
			return b, nil
		}
	}
	initdb, err1 := lookPath("initdb")
	pgctl, err2 := lookPath("pg_ctl")
	if err1 == nil && err2 == nil {
		return Binaries{InitDB: initdb, PGCtl: pgctl}, nil
	}
	return Binaries{}, fmt.Errorf("%w: no initdb and pg_ctl in %s/*/bin or on PATH (install the Debian package postgresql, or set %s)", ErrNoBinaries, libRoot, EnvBinDir)
}

func binariesIn(dir string) (Binaries, bool) {
	b := Binaries{InitDB: filepath.Join(dir, "initdb"), PGCtl: filepath.Join(dir, "pg_ctl")}
	return b, isExecutable(b.InitDB) && isExecutable(b.PGCtl)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// sortVersionsDesc sorts version strings from highest to lowest, comparing
// runs of digits numerically like `sort -V`.
func sortVersionsDesc(vs []string) {
	slices.SortFunc(vs, func(a, b string) int { return compareVersions(b, a) })
}

var versionChunk = regexp.MustCompile(`[0-9]+|[^0-9]+`)

func compareVersions(a, b string) int {
	ca, cb := versionChunk.FindAllString(a, -1), versionChunk.FindAllString(b, -1)
	for i := 0; i < len(ca) && i < len(cb); i++ {
		x, y := ca[i], cb[i]
		xd, yd := x[0] >= '0' && x[0] <= '9', y[0] >= '0' && y[0] <= '9'
		switch {
		case xd && yd:
			x, y = strings.TrimLeft(x, "0"), strings.TrimLeft(y, "0")
			if len(x) != len(y) {
				return len(x) - len(y)
			}
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
		case xd != yd: // digits sort before anything else
			if xd {
				return -1
			}
			return 1
		default:
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
		}
	}
	return len(ca) - len(cb)
}

// Cluster is a running throwaway PostgreSQL cluster.
type Cluster struct {
	Host string // always 127.0.0.1
	Port int    // TCP port, also the unix socket's port number
	Root string // private temporary directory: data, log and unix socket

	bins    Binaries
	dataDir string
	logFile string
	cred    *syscall.Credential // non-nil when the server runs as postgres

	stopOnce sync.Once
	stopErr  error
	dbSeq    atomic.Int64
}

// live holds the clusters started and not yet stopped, so Main can clean up
// after tests that forgot to, and on SIGINT/SIGTERM.
var live = struct {
	sync.Mutex
	m map[*Cluster]struct{}
}{m: map[*Cluster]struct{}{}}

const (
	commandTimeout = 2 * time.Minute
	portAttempts   = 5
	logTailLines   = 40
)

// Start creates and starts a new cluster. The caller must Stop it.
func Start() (*Cluster, error) {
	bins, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	c := &Cluster{Host: "127.0.0.1", bins: bins}
	if os.Geteuid() == 0 {
		c.cred, err = postgresCredential()
		if err != nil {
			return nil, err
		}
	}
	c.Root, err = os.MkdirTemp(tempBase(c.cred != nil), "okf-pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	c.dataDir = filepath.Join(c.Root, "data")
	c.logFile = filepath.Join(c.Root, "server.log")
	if err := c.start(); err != nil {
		c.Stop() // the server may be half up; the error is about start
		return nil, err
	}
	live.Lock()
	live.m[c] = struct{}{}
	live.Unlock()
	return c, nil
}

func (c *Cluster) start() error {
	if c.cred != nil {
		if err := os.Chown(c.Root, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			return fmt.Errorf("pgtest: %w", err)
		}
	}
	if err := c.initdb(); err != nil {
		return err
	}
	var lastErr error
	for attempt := 0; attempt < portAttempts; attempt++ {
		port, err := freePort()
		if err != nil {
			return fmt.Errorf("pgtest: finding a free port: %w", err)
		}
		c.Port = port
		opts := strings.Join([]string{
			"-p " + strconv.Itoa(port),
			"-c listen_addresses=127.0.0.1",
			"-c unix_socket_directories=" + c.Root, // tempBase keeps it shell-safe
			"-c fsync=off",
			"-c synchronous_commit=off",
			"-c full_page_writes=off",
			"-c wal_level=minimal",
			"-c max_wal_senders=0",
			"-c jit=off",
			"-c logging_collector=off",
		}, " ")
		out, err := c.run(c.bins.PGCtl, "start", "-D", c.dataDir, "-l", c.logFile, "-w", "-t", "60", "-o", opts)
		if err == nil {
			return nil
		}
		lastErr = fmt.Errorf("pgtest: pg_ctl start on port %d: %v\n%s%s", port, err, tail(out, 10), c.logTailSection())
		if !strings.Contains(c.LogTail(logTailLines), "could not bind") {
			break
		}
		// Someone took the port between our probe and the server's bind.
		c.run(c.bins.PGCtl, "stop", "-D", c.dataDir, "-m", "immediate", "-w")
	}
	return lastErr
}

func (c *Cluster) initdb() error {
	common := []string{"-D", c.dataDir, "-U", Superuser, "--auth=trust", "-E", "UTF8", "--no-sync"}
	out1, err := c.run(c.bins.InitDB, append(common, "--locale=C.UTF-8")...)
	if err == nil {
		return nil
	}
	os.RemoveAll(c.dataDir)
	out2, err2 := c.run(c.bins.InitDB, append(common, "--no-locale")...)
	if err2 == nil {
		return nil
	}
	return fmt.Errorf("pgtest: initdb failed with --locale=C.UTF-8 (%v):\n%s\nand with --no-locale (%v):\n%s",
		err, tail(out1, 15), err2, tail(out2, 15))
}

// run runs a PostgreSQL program as the server's user and returns its
// combined output.
func (c *Cluster) run(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = c.Root
	cmd.Env = cleanEnv()
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The server gets -l, so it does not inherit our pipe; WaitDelay is a
	// backstop should anything else hold it open.
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	return out.String(), err
}

// cleanEnv drops PG* variables (PGDATA, PGPORT, PGOPTIONS, ...) that would
// change what the programs do.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return env
}

func postgresCredential() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs a %q system user to run the server as: %w", "postgres", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("pgtest: user postgres has uid %q gid %q", u.Uid, u.Gid)
	}
	// Empty Groups drops root's supplementary groups.
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9/._-]+$`)

// tempBase picks the directory for cluster roots: os.TempDir unless its path
// is unsafe for the pg_ctl command line, too long for a unix socket path
// (about 107 bytes), or, when the server runs as another user, not
// searchable by that user.
func tempBase(otherUser bool) string {
	base := os.TempDir()
	if !shellSafe.MatchString(base) || len(base) > 60 {
		return "/tmp"
	}
	if otherUser {
		for d := base; ; d = filepath.Dir(d) {
			fi, err := os.Stat(d)
			if err != nil || fi.Mode().Perm()&0o001 == 0 {
				return "/tmp"
			}
			if d == filepath.Dir(d) {
				break
			}
		}
	}
	return base
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

// Stop shuts the server down immediately and removes the cluster's
// directory. It is safe to call more than once and concurrently; later calls
// return the first call's result.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() { c.stopErr = c.stop() })
	return c.stopErr
}

func (c *Cluster) stop() error {
	live.Lock()
	delete(live.m, c)
	live.Unlock()
	var errs []error
	pid := c.postmasterPID()
	if pid > 0 {
		out, err := c.run(c.bins.PGCtl, "stop", "-D", c.dataDir, "-m", "immediate", "-w", "-t", "30")
		if err != nil {
			// Make sure it is gone before its directory is, but only if
			// the PID is still our server and not a reused number.
			var killErr error
			if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); bytes.Contains(cmdline, []byte(c.dataDir)) {
				killErr = syscall.Kill(pid, syscall.SIGKILL)
			}
			if killErr != nil && !errors.Is(killErr, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("pgtest: pg_ctl stop: %v\n%s%s", err, tail(out, 10), c.logTailSection()))
			}
		}
	}
	if err := os.RemoveAll(c.Root); err != nil {
		errs = append(errs, fmt.Errorf("pgtest: removing %s: %w", c.Root, err))
	}
	return errors.Join(errs...)
}

// postmasterPID reads the server's PID from postmaster.pid, or returns 0.
func (c *Cluster) postmasterPID() int {
	b, err := os.ReadFile(filepath.Join(c.dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}

// DSN returns a connection URL for database as the superuser over TCP.
func (c *Cluster) DSN(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(Superuser),
		Host:     net.JoinHostPort(c.Host, strconv.Itoa(c.Port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// CreateDatabase creates the database name and returns its DSN.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, c.DSN("postgres"))
	if err != nil {
		return "", fmt.Errorf("pgtest: connecting to %s: %w", c.DSN("postgres"), err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgtest: creating database %q: %w", name, err)
	}
	return c.DSN(name), nil
}

var unsafeNameChars = regexp.MustCompile(`[^a-z0-9_]+`)

// NewDatabase creates a fresh database named after the test and returns its
// DSN, failing the test on error. The database is not dropped; it goes away
// with the cluster.
func (c *Cluster) NewDatabase(t testing.TB) string {
	t.Helper()
	base := strings.Trim(unsafeNameChars.ReplaceAllString(strings.ToLower(t.Name()), "_"), "_")
	if len(base) > 40 {
		base = base[:40]
	}
	name := fmt.Sprintf("t%d_%s", c.dbSeq.Add(1), base)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dsn, err := c.CreateDatabase(ctx, name)
	if err != nil {
		t.Fatalf("%v%s", err, c.logTailSection())
	}
	return dsn
}

// LogTail returns up to the last n lines of the server log.
func (c *Cluster) LogTail(n int) string {
	b, err := os.ReadFile(c.logFile)
	if err != nil {
		return ""
	}
	return tail(string(b), n)
}

func (c *Cluster) logTailSection() string {
	if t := c.LogTail(logTailLines); t != "" {
		return "\n--- server log (" + c.logFile + ") tail ---\n" + t
	}
	return ""
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// The shared cluster of this test binary.
var (
	mainActive atomic.Bool
	sharedOnce sync.Once
	shared     *Cluster
	sharedErr  error
)

// Shared returns the test binary's shared cluster, starting it on first use.
// It skips the test when no PostgreSQL binaries are installed, or fails it
// if OKF_REQUIRE_POSTGRES=1; it fails the test if the cluster cannot start.
// The package's TestMain must call Main, which stops the cluster.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	if !mainActive.Load() {
		t.Fatal("pgtest.Shared: this package needs `func TestMain(m *testing.M) { pgtest.Main(m) }` so the shared cluster gets stopped")
	}
	sharedOnce.Do(func() {
		if _, err := FindBinaries(); err != nil {
			sharedErr = err
			return
		}
		start := time.Now()
		shared, sharedErr = Start()
		if sharedErr == nil {
			t.Logf("pgtest: shared PostgreSQL cluster on port %d started in %v", shared.Port, time.Since(start).Round(time.Millisecond))
		}
	})
	skipOrFail(t, sharedErr, "the shared")
	return shared
}

// Own starts a cluster of the test's own, stopped when the test ends, for
// tests that measure the whole cluster (transaction ids, WAL) and so must
// not share it. It skips or fails like Shared.
func Own(t testing.TB) *Cluster {
	t.Helper()
	var err error
	if _, err = FindBinaries(); err == nil {
		var c *Cluster
		if c, err = Start(); err == nil {
			t.Cleanup(func() {
				if err := c.Stop(); err != nil {
					t.Errorf("pgtest: stopping the cluster: %v", err)
				}
			})
			return c
		}
	}
	skipOrFail(t, err, "a")
	return nil
}

// skipOrFail ends a test whose cluster could not start: a skip when no
// PostgreSQL binaries are installed (a failure under OKF_REQUIRE_POSTGRES=1),
// else a failure.
func skipOrFail(t testing.TB, err error, which string) {
	t.Helper()
	if err == nil {
		return
	}
	if errors.Is(err, ErrNoBinaries) {
		why := strings.TrimPrefix(err.Error(), ErrNoBinaries.Error()+": ")
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("FAIL: PostgreSQL binaries not found (%s), and %s=1 requires them", why, EnvRequire)
		}
		t.Skipf("SKIP: PostgreSQL binaries not found (%s); set %s=1 to make this a failure", why, EnvRequire)
	}
	t.Fatalf("pgtest: starting %s PostgreSQL cluster: %v", which, err)
}

// Main runs the tests, then stops the shared cluster (and any cluster a test
// left running), and exits with the tests' status. Use it as
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// On SIGINT or SIGTERM it stops the clusters before the binary dies
// (best effort: a test timeout panic still leaks them).
func Main(m *testing.M) {
	mainActive.Store(true)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		fmt.Fprintf(os.Stderr, "pgtest: %v: stopping PostgreSQL clusters\n", sig)
		stopAll()
		signal.Reset(sig)
		if s, ok := sig.(syscall.Signal); ok {
			syscall.Kill(os.Getpid(), s)
		}
		os.Exit(1)
	}()
	code := m.Run()
	signal.Stop(sigs)
	if err := stopAll(); err != nil {
		fmt.Fprintf(os.Stderr, "pgtest: stopping PostgreSQL clusters: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

func stopAll() error {
	live.Lock()
	var cs []*Cluster
	for c := range live.m {
		cs = append(cs, c)
	}
	live.Unlock()
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Stop())
	}
	return errors.Join(errs...)
}
