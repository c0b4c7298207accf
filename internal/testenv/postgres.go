//go:build linux

package testenv

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Postgres is a throwaway PostgreSQL cluster that a test started on
// loopback: its data folder and socket are in a temporary folder, removed
// when the test ends, and the server is stopped then. Stop and Start let a
// test take the database away (a store outage) and bring it back on the
// same port.
type Postgres struct {
	// URL is a postgres:// URL for the cluster's postgres database,
	// which trusts every loopback connection.
	URL string
	// Port is the TCP port on 127.0.0.1.
	Port int

	tb   testing.TB
	bin  string // the folder of initdb, postgres and pg_isready
	dir  string // owns data/ and the socket
	cred *syscall.Credential
	cmd  *exec.Cmd
	done chan struct{}
}

// StartPostgres starts a PostgreSQL cluster for tb: initdb into a
// temporary folder, then postgres on a free loopback port. Without
// Debian's postgresql package (make cluster-deps) it skips tb, or fails it
// when WASMEVAL_REQUIRE_CLUSTER is set. PostgreSQL refuses to run as root,
// so a test running as root runs it as the postgres user the package
// creates.
func StartPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	bin, err := postgresBin()
	if err != nil {
		missingCluster(tb, err)
		return nil
	}
	p := &Postgres{tb: tb, bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			tb.Fatalf("testenv: running as root, PostgreSQL needs an unprivileged user and there is no postgres user (%v): install Debian's postgresql (make cluster-deps) or run the tests as another user", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	// Not tb.TempDir: its parent is private to this user, and the postgres
	// user must reach the folder.
	p.dir, err = os.MkdirTemp("", "wasmeval-pg-")
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	tb.Cleanup(func() { os.RemoveAll(p.dir) })
	if p.cred != nil {
		if err := os.Chown(p.dir, int(p.cred.Uid), int(p.cred.Gid)); err != nil {
			tb.Fatalf("testenv: %v", err)
		}
	}
	out, err := p.command("initdb", "-D", p.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8",
		"--no-sync", "--no-instructions").CombinedOutput()
	if err != nil {
		tb.Fatalf("testenv: initdb: %v\n%s", err, out)
	}
	p.Port = freePort(tb)
	p.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.Port)
	p.Start()
	tb.Cleanup(p.Stop)
	return p
}

func (p *Postgres) data() string { return filepath.Join(p.dir, "data") }

// command runs name from PostgreSQL's bin folder, as the postgres user
// when needed.
func (p *Postgres) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(p.bin, name), args...)
	cmd.Dir = p.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred, Pdeathsig: syscall.SIGQUIT}
	return cmd
}

// Start starts the server (again, after Stop) and waits until it accepts
// connections.
func (p *Postgres) Start() {
	p.tb.Helper()
	if p.cmd != nil {
		return
	}
	// Durability off: a test cluster is thrown away, and fsync on a
	// loaded two-core machine makes every commit slow.
	cmd := p.command("postgres", "-D", p.data(), "-p", strconv.Itoa(p.Port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+p.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		p.tb.Fatalf("testenv: postgres: %v", err)
	}
	p.cmd, p.done = cmd, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(p.done)
	deadline := time.Now().Add(60 * time.Second)
	for {
		err := exec.Command(filepath.Join(p.bin, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(p.Port)).Run()
		if err == nil {
			return
		}
		select {
		case <-p.done:
			p.cmd = nil
			p.tb.Fatalf("testenv: postgres exited before accepting connections:\n%s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			p.Stop()
			p.tb.Fatalf("testenv: postgres did not accept connections within 60s:\n%s", log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the server (a fast shutdown: clients are disconnected), and
// waits for it to exit. The data folder stays for Start.
func (p *Postgres) Stop() {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
	p.cmd = nil
}

// postgresBin is the newest /usr/lib/postgresql/N/bin holding initdb.
func postgresBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server (no /usr/lib/postgresql/*/bin/initdb): install Debian's postgresql with make cluster-deps")
}

func pgVersion(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

// HAProxy returns the path of Debian's haproxy, skipping tb without it (or
// failing it when WASMEVAL_REQUIRE_CLUSTER is set).
func HAProxy(tb testing.TB) string {
	tb.Helper()
	for _, p := range []string{"/usr/sbin/haproxy"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("haproxy"); err == nil {
		return p
	}
	missingCluster(tb, fmt.Errorf("no haproxy: install Debian's haproxy with make cluster-deps"))
	return ""
}

// freePort is a loopback TCP port free right now.
func freePort(tb testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("testenv: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
