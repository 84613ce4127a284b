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

// ListenAndServe serves the handler until ctx ends, then shuts down: it
// stops accepting connections, ends MCP event streams, and gives the
// requests in flight ShutdownGrace to finish with their responses.
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
	host, _, _ := net.SplitHostPort(o.Addr)
	stopping, stop := context.WithCancel(context.Background())
	defer stop()
	srv := &http.Server{
		Handler: s.handler(stopping, host),
		// Headers, then the whole body, must arrive within the read
		// timeout. Once a body is read, net/http lifts the deadline, so
		// a long answer or an event stream is not cut.
		ReadHeaderTimeout: s.opts.ReadTimeout,
		ReadTimeout:       s.opts.ReadTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(s.opts.Log, "okf serve: ", 0),
	}
	srv.RegisterOnShutdown(stop)
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
	fmt.Fprintf(s.opts.Log, "okf serve: shutting down: no new requests; those in flight have %v to finish\n", s.opts.ShutdownGrace)
	shutdown, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		fmt.Fprintf(s.opts.Log, "okf serve: requests still in flight after %v were cut\n", s.opts.ShutdownGrace)
		srv.Close()
	}
	return nil
}
