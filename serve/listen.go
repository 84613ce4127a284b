package serve

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"time"
)

// DefaultAddr is where okf serve listens by default: loopback only.
const DefaultAddr = "127.0.0.1:7777"

// CheckAddr refuses to listen beyond loopback without TLS: bearer tokens
// and knowledge must not cross a network in clear text. A host name counts
// as loopback only when every address it resolves to is.
func CheckAddr(ctx context.Context, addr string, tls bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if tls {
		return nil
	}
	if host == "" {
		return fmt.Errorf("listen address %q is every interface: without TLS okf serve listens on loopback only (127.0.0.1:PORT), or give a TLS certificate and key", addr)
	}
	ips := []net.IP{net.ParseIP(host)}
	if ips[0] == nil {
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return fmt.Errorf("listen address %q: %w", addr, err)
		}
		ips = ips[:0]
		for _, a := range addrs {
			ips = append(ips, a.IP)
		}
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return fmt.Errorf("listen address %q is beyond loopback: give a TLS certificate and key, or listen on 127.0.0.1", addr)
		}
	}
	return nil
}

// ListenOptions say where and how to listen.
type ListenOptions struct {
	Addr            string
	TLSCert, TLSKey string
	// Ready, if set, is called with the address once listening (useful
	// with port 0).
	Ready func(net.Addr)
}

// ListenAndServe serves the handler until ctx ends, then shuts down,
// giving open requests a few seconds to finish.
func (s *Server) ListenAndServe(ctx context.Context, o ListenOptions) error {
	tls := o.TLSCert != "" || o.TLSKey != ""
	if tls && (o.TLSCert == "" || o.TLSKey == "") {
		return errors.New("give both a TLS certificate and a key")
	}
	if err := CheckAddr(ctx, o.Addr, tls); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(s.opts.Log, "okf serve: ", 0),
	}
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}
	done := make(chan error, 1)
	go func() {
		if tls {
			done <- srv.ServeTLS(ln, o.TLSCert, o.TLSKey)
		} else {
			done <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-done:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		srv.Close() // MCP event streams stay open until closed
	}
	return nil
}
