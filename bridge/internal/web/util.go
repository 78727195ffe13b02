package web

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
)

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
