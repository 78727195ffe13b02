//go:build unix

package refused

import (
	"fmt"
	"syscall"
)

// reserve binds a TCP socket on a loopback port and does not listen: the
// kernel refuses connections to it, and the port stays taken.
func reserve() (string, func(), error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return "", nil, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		syscall.Close(fd)
		return "", nil, err
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		syscall.Close(fd)
		return "", nil, err
	}
	in, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		syscall.Close(fd)
		return "", nil, fmt.Errorf("unexpected socket address %T", sa)
	}
	return fmt.Sprintf("127.0.0.1:%d", in.Port), func() { syscall.Close(fd) }, nil
}
