//go:build !unix

package refused

import "net"

// reserve frees a port just listened on: another process may take it in
// between, which the unix version rules out.
func reserve() (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := l.Addr().String()
	return addr, func() {}, l.Close()
}
