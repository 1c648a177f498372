package icon

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

var errNoHost = errors.New("URL has no host")

// Origin returns the origin of rawURL as scheme://host[:port] with scheme
// and host in lowercase and the scheme's default port (443 for https, 80 for
// http) left out, so that equal origins give equal strings.
func Origin(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	return originOf(u)
}

func originOf(u *url.URL) (string, error) {
	if u.Scheme == "" || u.Host == "" {
		return "", errNoHost
	}
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "https" && port == "443") || (scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		return scheme + "://" + net.JoinHostPort(host, port), nil
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host, nil
}
