package serve

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// hostNames are the names a server answers to beyond loopback: the
// configured allowed hosts and the host it listens on.
type hostNames map[string]bool

func newHostNames(hosts []string, listen string) hostNames {
	h := hostNames{}
	for _, name := range append(hosts, listen) {
		if name = strings.ToLower(strings.Trim(name, "[]")); name != "" {
			h[name] = true
		}
	}
	return h
}

// ok reports whether a host name (without port) is loopback or one of
// the server's own.
func (h hostNames) ok(host string) bool {
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "localhost" || h[host] {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkHost refuses, on a loopback listener, a Host header that names
// neither loopback nor the server: a page whose name was rebound to
// 127.0.0.1 (DNS rebinding) must not reach the server through the
// browser. Beyond loopback, TLS and the tokens decide.
func checkHost(r *http.Request, own hostNames) error {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if local == nil || r.Host == "" {
		return nil
	}
	ip := net.ParseIP(hostOf(local.String()))
	if ip == nil || !ip.IsLoopback() || own.ok(hostOf(r.Host)) {
		return nil
	}
	return fmt.Errorf("the Host header %q names neither loopback nor this server: add the name to serve.allowed_hosts to serve it", r.Host)
}

// checkOrigin refuses a browser's request from a page of another origin
// (the MCP specification asks servers to check Origin). A request without
// Origin is not a browser's; a loopback origin, one on the server's own
// hosts, or one listed in allowed, passes.
func checkOrigin(r *http.Request, own hostNames, allowed map[string]bool) error {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return nil
	}
	u, err := url.Parse(origin)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && (allowed[normalOrigin(origin)] || own.ok(u.Hostname())) {
		return nil
	}
	return fmt.Errorf("requests from origin %q are not accepted: add it to serve.allowed_origins to accept them", origin)
}

// normalOrigin is an origin as compared: lower case, no trailing slash.
func normalOrigin(origin string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(origin)), "/")
}

// hostOf is the host of host:port, or the whole when it has no port.
func hostOf(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return hostport
}
