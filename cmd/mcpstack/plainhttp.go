package main

import (
	"net"
)

// allowPlainHTTPUsage is the help text of --allow-plain-http, shared by
// the commands that serve OAuth-protected HTTP.
const allowPlainHTTPUsage = "serve plain HTTP on a non-loopback --addr: only behind a proxy that terminates TLS for it"

// checkPlainHTTP refuses to serve plain HTTP (tlsOn false) on a listener
// other hosts can reach, unless allow says a TLS-terminating proxy stands
// in front. Passwords, authorization codes and bearer tokens would cross
// the network in clear text otherwise (OAuth 2.1 §1.5 requires TLS; RFC
// 6750 §5.3). The listener's address is judged, not the issuer's or the
// --addr spelling: "localhost" resolves to a loopback address, and an
// unspecified address (0.0.0.0, ::) listens on every interface.
func checkPlainHTTP(ln net.Listener, tlsOn, allow bool, remedy string) error {
	if tlsOn || allow {
		return nil
	}
	if a, ok := ln.Addr().(*net.TCPAddr); ok && a.IP.IsLoopback() {
		return nil
	}
	return usageErrorf("refusing to serve plain HTTP on %s, which other hosts can reach (tokens would travel in clear text): bind a loopback address, %s, or give --allow-plain-http behind a TLS-terminating proxy",
		ln.Addr(), remedy)
}
