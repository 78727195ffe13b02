package edge

import (
	"crypto/rand"
	"encoding/hex"
)

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
