package sse_test

import (
	"bytes"
	"runtime"
	"testing"

	gosse "github.com/tmaxmax/go-sse"

	"github.com/aapagui/aapagui/internal/sse"
)

const benchEvents = 10_000

var benchFrames = []struct {
	name  string
	frame string
}{
	{"AG-UI", "data: {\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"msg_1\",\"delta\":\"Hello\"}\n\n"},
	{"AAP", "event: text_delta\ndata: {\"delta\":\"Hello\"}\n\n"},
}

// BenchmarkRead reads a stream of 10,000 small events; one op is the whole
// stream. "go-sse" is the library alone, for the adapter's overhead.
func BenchmarkRead(b *testing.B) {
	for _, bf := range benchFrames {
		stream := bytes.Repeat([]byte(bf.frame), benchEvents)
		b.Run(bf.name, func(b *testing.B) {
			benchmarkStream(b, stream, func() int {
				n := 0
				for ev, err := range sse.Read(bytes.NewReader(stream), sse.ReadOptions{}) {
					if err != nil {
						b.Fatal(err)
					}
					n += len(ev.Data)
				}
				return n
			})
		})
	}
	stream := bytes.Repeat([]byte(benchFrames[0].frame), benchEvents)
	b.Run("go-sse", func(b *testing.B) {
		benchmarkStream(b, stream, func() int {
			n := 0
			for ev, err := range gosse.Read(bytes.NewReader(stream), &gosse.ReadConfig{MaxEventSize: sse.DefaultMaxEventSize}) {
				if err != nil {
					b.Fatal(err)
				}
				n += len(ev.Data)
			}
			return n
		})
	})
}

func benchmarkStream(b *testing.B, stream []byte, read func() int) {
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	streams := 0
	for b.Loop() {
		if read() == 0 {
			b.Fatal("no data")
		}
		streams++
	}
	runtime.ReadMemStats(&after)
	events := float64(streams * benchEvents)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/events, "allocs/event")
}

func BenchmarkAppendEvent(b *testing.B) {
	for _, bc := range []struct {
		name, event, data string
	}{
		{"AG-UI", "", `{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg_1","delta":"Hello"}`},
		{"AAP", "text_delta", `{"delta":"Hello"}`},
		{"multi-line", "", "line one\nline two\r\nline three"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := []byte(bc.data)
			dst := make([]byte, 0, 512)
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				dst = sse.AppendEvent(dst[:0], bc.event, data)
			}
		})
	}
}

// chunkReader returns at most size bytes per Read, like a TLS connection
// (16 KiB records) does.
type chunkReader struct {
	r    *bytes.Reader
	size int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	return c.r.Read(p[:min(len(p), c.size)])
}

// BenchmarkReadLarge reads one 4 MiB event (a large snapshot) arriving in
// 16 KiB reads.
func BenchmarkReadLarge(b *testing.B) {
	stream := append(append([]byte("data: "), bytes.Repeat([]byte(`{"k":"v"},`), 4<<20/10)...), "\n\n"...)
	b.ReportAllocs()
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		r := &chunkReader{r: bytes.NewReader(stream), size: 16 << 10}
		for ev, err := range sse.Read(r, sse.ReadOptions{}) {
			if err != nil || len(ev.Data) == 0 {
				b.Fatal(err)
			}
		}
	}
}
